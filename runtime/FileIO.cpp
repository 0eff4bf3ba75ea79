#include "runtime/FileIO.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "ir/Diagnostics.h"

namespace graphc::runtime {

namespace fs = std::filesystem;

namespace {

/// Closes a file descriptor when it goes out of scope.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

std::string limitText(int64_t bytes) { return fmt::format("{} bytes", bytes); }

}  // namespace

std::string readFile(const fs::path& path, int64_t maxBytes) {
  FileDescriptor f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw ir::Error(fmt::format("{}: cannot open file: {}", path.string(), std::strerror(errno)));
  struct stat info{};
  if (::fstat(f.fd, &info) != 0)
    throw ir::Error(fmt::format("{}: cannot read file: {}", path.string(), std::strerror(errno)));
  if (S_ISDIR(info.st_mode)) throw ir::Error(fmt::format("{}: is a directory, not a file", path.string()));
  const bool regular = S_ISREG(info.st_mode);
  if (regular && info.st_size > maxBytes)
    throw ir::Error(fmt::format("{}: the file is {} bytes; graphc reads files of at most {}", path.string(),
                                static_cast<int64_t>(info.st_size), limitText(maxBytes)));
  // A regular file is read at its size; a stream (a pipe, a device) in
  // chunks, until it ends or passes the limit.
  std::string bytes;
  bytes.resize(regular ? static_cast<size_t>(info.st_size) : size_t{1} << 20);
  size_t used = 0;
  while (true) {
    if (used == bytes.size()) {
      if (static_cast<int64_t>(used) > maxBytes)
        throw ir::Error(
            fmt::format("{}: the input is larger than {}, the most graphc reads", path.string(), limitText(maxBytes)));
      bytes.resize(std::min<size_t>(bytes.size() * 2, static_cast<size_t>(maxBytes) + 1));
      if (used == bytes.size()) bytes.resize(used + 1);
    }
    const ssize_t n = ::read(f.fd, bytes.data() + used, bytes.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw ir::Error(fmt::format("{}: cannot read file: {}", path.string(), std::strerror(errno)));
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  if (static_cast<int64_t>(used) > maxBytes)
    throw ir::Error(
        fmt::format("{}: the input is larger than {}, the most graphc reads", path.string(), limitText(maxBytes)));
  bytes.resize(used);
  return bytes;
}

void readFileRange(const fs::path& path, int64_t offset, int64_t length, std::byte* dst) {
  FileDescriptor f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw ir::Error(fmt::format("{}: cannot open file: {}", path.string(), std::strerror(errno)));
  struct stat info{};
  if (::fstat(f.fd, &info) != 0 || !S_ISREG(info.st_mode))
    throw ir::Error(fmt::format("{}: is not a regular file", path.string()));
  const auto size = static_cast<int64_t>(info.st_size);
  if (offset < 0 || length < 0 || offset > size || length > size - offset)
    throw ir::Error(fmt::format("{}: bytes [{}, {} + {}) lie outside the file of {} bytes", path.string(), offset,
                                offset, length, size));
  for (int64_t done = 0; done < length;) {
    const ssize_t n = ::pread(f.fd, dst + done, static_cast<size_t>(length - done), static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw ir::Error(
          fmt::format("{}: cannot read file: {}", path.string(), n < 0 ? std::strerror(errno) : "it shrank"));
    done += n;
  }
}

int64_t regularFileSize(const fs::path& path) {
  struct stat info{};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return -1;
  return static_cast<int64_t>(info.st_size);
}

void writeFileAtomically(const fs::path& path, std::string_view bytes, unsigned mode) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  static std::atomic<uint64_t> writes{0};
  FileDescriptor f;
  fs::path tmp;
  // O_EXCL: the temporary is a file this call created, never one planted
  // under a guessed name (nor a symlink to one).
  for (int attempt = 0; f.fd < 0; ++attempt) {
    tmp = dir / fmt::format(".{}.tmp.{}.{}.{}", path.filename().string(), ::getpid(), writes++,
                            std::chrono::steady_clock::now().time_since_epoch().count());
    f.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
    if (f.fd < 0 && (errno != EEXIST || attempt > 100))
      throw ir::Error(fmt::format("{}: cannot write file: {}", path.string(), std::strerror(errno)));
  }
  auto fail = [&](const char* what) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return ir::Error(fmt::format("{}: cannot {} file: {}", path.string(), what, std::strerror(err)));
  };
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(f.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw fail("write");
    done += static_cast<size_t>(n);
  }
  if (::close(std::exchange(f.fd, -1)) != 0) throw fail("write");
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw fail("replace");
}

}  // namespace graphc::runtime
