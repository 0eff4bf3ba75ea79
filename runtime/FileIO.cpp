#include "runtime/FileIO.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

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

OpenFile::OpenFile(OpenFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OpenFile::read(int64_t offset, int64_t length, std::byte* dst) const {
  if (offset < 0 || length < 0 || offset > size_ || length > size_ - offset)
    throw ir::Error(fmt::format("bytes [{}, {} + {}) lie outside the file of {} bytes", offset, offset, length, size_));
  for (int64_t done = 0; done < length;) {
    const ssize_t n = ::pread(fd_, dst + done, static_cast<size_t>(length - done), static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw ir::Error(fmt::format("cannot read file: {}", n < 0 ? std::strerror(errno) : "it shrank"));
    done += n;
  }
}

Folder::Folder(const fs::path& path) : fd_(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  if (fd_ < 0) throw ir::Error(fmt::format("{}: cannot open folder: {}", path.string(), std::strerror(errno)));
}

Folder::Folder(Folder&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

Folder::~Folder() {
  if (fd_ >= 0) ::close(fd_);
}

OpenFile Folder::open(const fs::path& relative) const {
  if (relative.is_absolute()) throw ir::Error("is an absolute path, not one beneath the folder");
  std::vector<std::string> parts;
  for (const fs::path& part : relative) {
    if (part == "..") throw ir::Error("leaves the folder (it has '..')");
    if (!part.empty() && part != ".") parts.push_back(part.string());
  }
  if (parts.empty()) throw ir::Error("names no file");
  // The open has already failed; the lstat only words the error (O_NOFOLLOW
  // refuses a symlink with ELOOP, or ENOTDIR together with O_DIRECTORY).
  auto refuse = [&](int at, const std::string& part, int err) {
    struct stat link{};
    if (::fstatat(at, part.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(link.st_mode))
      return ir::Error(fmt::format("is reached through the symlink '{}', which is refused", part));
    return ir::Error(fmt::format("is not a readable file ({})", std::strerror(err)));
  };
  FileDescriptor dir{::dup(fd_)};
  if (dir.fd < 0) throw ir::Error(fmt::format("cannot open folder: {}", std::strerror(errno)));
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    FileDescriptor next{::openat(dir.fd, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (next.fd < 0) throw refuse(dir.fd, parts[i], errno);
    std::swap(dir.fd, next.fd);
  }
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
  // below as not a regular file.
  FileDescriptor file{::openat(dir.fd, parts.back().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) throw refuse(dir.fd, parts.back(), errno);
  struct stat info{};
  if (::fstat(file.fd, &info) != 0 || !S_ISREG(info.st_mode)) throw ir::Error("is not a regular file");
  return OpenFile(std::exchange(file.fd, -1), static_cast<int64_t>(info.st_size));
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
