// Reading and writing whole files, the one place graphc does either:
//
//  - readFile refuses what is not a readable file of bounded size before
//    allocating for it: a directory, a file over the limit, or a stream
//    (a pipe, /dev/zero) that runs past it;
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

/// Reads bytes [offset, offset + length) of the regular file `path` into
/// `dst`; throws ir::Error("PATH: why") when it is not a regular file or
/// the range does not lie inside it (the range is checked against the
/// file's size before anything is read).
void readFileRange(const std::filesystem::path& path, int64_t offset, int64_t length, std::byte* dst);

/// Whether `path` names an existing regular file's size; -1 for anything
/// else (a pipe, a device, a missing file).
int64_t regularFileSize(const std::filesystem::path& path);

/// Writes `bytes` to `path` through a temporary file and a rename.
/// `mode` is the new file's permission bits (0666 is further masked by the
/// umask, as open(2) does; cache entries pass 0600). Throws ir::Error.
void writeFileAtomically(const std::filesystem::path& path, std::string_view bytes, unsigned mode = 0666);

}  // namespace graphc::runtime
