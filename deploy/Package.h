// The container of an exported package (`.gcpkg`, docs/export.md): a zip
// archive (libzip) whose entries are stored uncompressed, the first being
// manifest.json — the format and its version, the graphc that wrote it,
// the device and target, and for every other entry its size and XXH3-64
// checksum. Reading refuses an archive libzip cannot read, a manifest that
// is not this format's or names another format version, an entry that is
// missing, extra, compressed, of another size or checksum — each as an
// ir::Error naming the file and the entry — so a truncated or tampered
// package never reaches the loader.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace graphc::deploy {

/// The package format this graphc writes and reads. Bumped whenever an
/// entry's form changes; a package of another version is refused.
constexpr int kPackageFormatVersion = 2;  // 2: cuda packages; MX inputs in the kernel table
constexpr const char* kPackageFormat = "graphc-package";

struct PackageEntry {
  std::string name;
  std::string bytes;
};

/// Writes `entries` after a manifest made of `manifest` (the caller's
/// fields) plus the format, its version, the graphc version and each entry's
/// size and checksum. The archive's timestamps are fixed, so one export
/// always writes the same bytes. Throws ir::Error.
void writePackage(const std::filesystem::path& path, nlohmann::json manifest, const std::vector<PackageEntry>& entries);

class Package {
 public:
  /// Reads and checks the package at `path` (every entry read whole, each
  /// into a buffer aligned to 64 bytes).
  static Package read(const std::filesystem::path& path);
  /// The same from the archive's bytes; `name` is what errors call it.
  static Package fromBytes(std::span<const std::byte> archive, const std::string& name);

  const nlohmann::json& manifest() const { return manifest_; }
  /// The entry called `name`; throws ir::Error when there is none.
  std::span<const std::byte> entry(const std::string& name) const;
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  /// Every entry's name (manifest.json too), sorted.
  std::vector<std::string> entryNames() const {
    std::vector<std::string> names;
    for (const auto& [name, bytes] : entries_) names.push_back(name);
    return names;
  }
  /// What keeps the entries' bytes alive (so tensors can point into them).
  std::shared_ptr<const void> storage() const { return storage_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  nlohmann::json manifest_;
  std::map<std::string, std::span<const std::byte>> entries_;
  std::shared_ptr<const void> storage_;
};

/// An entry's checksum as the manifest spells it (16 hex digits).
std::string checksumOf(std::span<const std::byte> bytes);

}  // namespace graphc::deploy
