// Reading and writing files, the one place graphc does either (but for the
// ONNX importer, which has protobuf parse a regular model file from its
// own descriptor in chunks):
//
//  - readFile refuses what is not a readable file of bounded size before
//    allocating for it: a directory, a file over the limit, or a stream
//    (a pipe, /dev/zero) that runs past it;
//  - Folder opens files beneath a folder it opened once, never through a
//    symlink, and OpenFile reads ranges of the one file it checked;
//  - writeFileAtomically writes a new temporary file in the destination's
//    folder (created exclusively, so a planted file or symlink is never
//    written through) and renames it into place, so readers see the old
//    file or the whole new one, and a symlink planted at the destination is
//    replaced rather than followed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace graphc::runtime {

/// What a text or model input may hold: 2 GiB - 1, so that any offset in
/// it fits the int line/column numbers of a diagnostic and protobuf's limit.
constexpr int64_t kMaxInputFileBytes = (int64_t{1} << 31) - 1;

/// The file's bytes; throws ir::Error("PATH: why") when it cannot be read
/// or is larger than maxBytes.
std::string readFile(const std::filesystem::path& path, int64_t maxBytes = kMaxInputFileBytes);

/// A regular file open for reading. Its size is the open descriptor's
/// (fstat), so the size a caller checks and the bytes it reads are the same
/// file's even if the path is replaced in between.
class OpenFile {
 public:
  OpenFile(int fd, int64_t size) : fd_(fd), size_(size) {}
  OpenFile(OpenFile&& other) noexcept;
  OpenFile& operator=(OpenFile&&) = delete;
  ~OpenFile();
  int64_t size() const { return size_; }
  /// Reads bytes [offset, offset + length) into `dst`; throws ir::Error
  /// ("why") when the range does not lie inside the file or a read fails.
  void read(int64_t offset, int64_t length, std::byte* dst) const;

 private:
  int fd_;
  int64_t size_;
};

/// A folder opened once, whose files are opened beneath it: a relative path
/// is walked one component at a time from the folder's descriptor
/// (openat with O_NOFOLLOW), so a symlink anywhere on the way is refused and
/// a component renamed or swapped for a symlink during the walk cannot lead
/// the open outside the folder. This is openat2's RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS, done with calls every kernel and sandbox allows.
class Folder {
 public:
  /// Throws ir::Error("PATH: why") when `path` is not an openable folder.
  explicit Folder(const std::filesystem::path& path);
  Folder(Folder&& other) noexcept;
  Folder& operator=(Folder&&) = delete;
  ~Folder();
  /// The regular file `relative` names beneath the folder. Throws
  /// ir::Error("why", a phrase that follows the path's name: "is not a
  /// readable file", ...) for an absolute path, a '..' component, a symlink
  /// component, or anything that is not a regular file (a FIFO is opened
  /// without blocking and refused).
  OpenFile open(const std::filesystem::path& relative) const;

 private:
  int fd_;
};

/// Whether `path` names an existing regular file's size; -1 for anything
/// else (a pipe, a device, a missing file).
int64_t regularFileSize(const std::filesystem::path& path);

/// Writes `bytes` to `path` through a temporary file and a rename.
/// `mode` is the new file's permission bits (0666 is further masked by the
/// umask, as open(2) does; cache entries pass 0600). Throws ir::Error.
void writeFileAtomically(const std::filesystem::path& path, std::string_view bytes, unsigned mode = 0666);

}  // namespace graphc::runtime
