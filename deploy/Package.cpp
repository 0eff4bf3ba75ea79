#include "deploy/Package.h"

#include <xxhash.h>
#include <zip.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "runtime/FileIO.h"

#ifndef GRAPHC_VERSION
#define GRAPHC_VERSION "unknown"
#endif

namespace graphc::deploy {

namespace {

using nlohmann::json;

constexpr const char* kManifest = "manifest.json";
constexpr int64_t kAlignment = 64;
/// A fixed time for every entry (2024-01-01), so an export is reproducible.
constexpr time_t kEntryTime = 1704067200;

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};

/// The bytes of every entry, one allocation: each entry starts on a 64-byte
/// boundary.
struct Storage {
  std::byte* data = nullptr;
  ~Storage() { std::free(data); }
};

}  // namespace

std::string checksumOf(std::span<const std::byte> bytes) {
  return fmt::format("{:016x}", XXH3_64bits(bytes.data(), bytes.size()));
}

void writePackage(const std::filesystem::path& path, json manifest, const std::vector<PackageEntry>& entries) {
  manifest["format"] = kPackageFormat;
  manifest["format_version"] = kPackageFormatVersion;
  manifest["graphc_version"] = GRAPHC_VERSION;
  json listed = json::object();
  for (const PackageEntry& e : entries) {
    if (e.name == kManifest || listed.contains(e.name))
      throw ir::Error(fmt::format("package: entry '{}' is reserved or repeated", e.name));
    listed[e.name] = {{"bytes", e.bytes.size()},
                      {"xxh3_64", checksumOf(std::as_bytes(std::span(e.bytes.data(), e.bytes.size())))}};
  }
  manifest["entries"] = std::move(listed);
  const std::string manifestText = manifest.dump(2) + "\n";

  std::error_code ec;
  std::filesystem::remove(path, ec);
  int error = 0;
  zip_t* raw = zip_open(path.c_str(), ZIP_CREATE | ZIP_EXCL, &error);
  if (!raw) {
    zip_error_t e;
    zip_error_init_with_code(&e, error);
    const std::string what = zip_error_strerror(&e);
    zip_error_fini(&e);
    throw ir::Error(fmt::format("{}: cannot create the package: {}", path.string(), what));
  }
  std::unique_ptr<zip_t, ZipCloser> archive(raw);
  auto add = [&](const std::string& name, const std::string& bytes) {
    zip_source_t* source = zip_source_buffer(archive.get(), bytes.data(), bytes.size(), 0);
    const zip_int64_t index = source ? zip_file_add(archive.get(), name.c_str(), source, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (source) zip_source_free(source);
      throw ir::Error(fmt::format("{}: cannot add {}: {}", path.string(), name, zip_strerror(archive.get())));
    }
    zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
    zip_file_set_mtime(archive.get(), static_cast<zip_uint64_t>(index), kEntryTime, 0);
  };
  add(kManifest, manifestText);
  for (const PackageEntry& e : entries) add(e.name, e.bytes);
  if (zip_close(archive.get()) != 0)
    throw ir::Error(fmt::format("{}: cannot write the package: {}", path.string(), zip_strerror(archive.get())));
  archive.release();  // zip_close freed it
}

Package Package::read(const std::filesystem::path& path) {
  const std::string bytes = runtime::readFile(path);
  return fromBytes(std::as_bytes(std::span(bytes.data(), bytes.size())), path.string());
}

Package Package::fromBytes(std::span<const std::byte> archive, const std::string& name) {
  auto fail = [&](const std::string& what) -> ir::Error { return ir::Error(fmt::format("{}: {}", name, what)); };
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(archive.data(), archive.size(), 0, &error);
  zip_t* raw = source ? zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error) : nullptr;
  if (!raw) {
    if (source) zip_source_free(source);
    const std::string what = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw fail("not a graphc package (a zip archive): " + what);
  }
  zip_error_fini(&error);
  std::unique_ptr<zip_t, ZipCloser> zip(raw);

  // Sizes first (from the central directory), then one allocation.
  const zip_int64_t count = zip_get_num_entries(zip.get(), 0);
  struct Found {
    std::string name;
    zip_uint64_t index, size;
    int64_t offset;
    uint32_t crc;
  };
  std::vector<Found> found;
  int64_t total = 0;
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
        !(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_METHOD))
      throw fail(fmt::format("entry {} is unreadable", i));
    if (st.comp_method != ZIP_CM_STORE)
      throw fail(fmt::format("entry '{}' is compressed (a package stores them)", st.name));
    if (st.size > archive.size()) throw fail(fmt::format("entry '{}' is larger than the archive", st.name));
    found.push_back({st.name, static_cast<zip_uint64_t>(i), st.size, total, (st.valid & ZIP_STAT_CRC) ? st.crc : 0});
    total += (static_cast<int64_t>(st.size) + kAlignment - 1) / kAlignment * kAlignment;
  }
  // Stored entries cannot hold more than the archive does: a directory that
  // claims more is damaged (and must not make us allocate it).
  if (total > static_cast<int64_t>(archive.size()) + count * kAlignment)
    throw fail("its entries claim more bytes than the archive holds");
  auto storage = std::make_shared<Storage>();
  storage->data = static_cast<std::byte*>(std::aligned_alloc(kAlignment, static_cast<size_t>(total + kAlignment)));
  if (!storage->data) throw fail("out of memory");

  Package p;
  p.name_ = name;
  for (const Found& f : found) {
    zip_file_t* file = zip_fopen_index(zip.get(), f.index, ZIP_FL_COMPRESSED);  // stored: the bytes as they are
    if (!file) throw fail(fmt::format("cannot open entry '{}': {}", f.name, zip_strerror(zip.get())));
    std::byte* into = storage->data + f.offset;
    const zip_int64_t got = zip_fread(file, into, f.size);
    zip_fclose(file);
    if (got < 0 || static_cast<zip_uint64_t>(got) != f.size) throw fail(fmt::format("entry '{}' is truncated", f.name));
    if (!p.entries_.emplace(f.name, std::span<const std::byte>(into, f.size)).second)
      throw fail(fmt::format("entry '{}' appears twice", f.name));
    // Every other entry is checked against its XXH3 in the manifest (faster
    // than zip's CRC-32 over large weights); the manifest against its CRC.
    if (f.name == kManifest &&
        crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(into), static_cast<uInt>(f.size)) != f.crc)
      throw fail("manifest.json does not match its CRC (damaged or modified)");
  }
  p.storage_ = storage;

  auto manifestBytes = p.entries_.find(kManifest);
  if (manifestBytes == p.entries_.end()) throw fail("no manifest.json (not a graphc package)");
  const auto* text = reinterpret_cast<const char*>(manifestBytes->second.data());
  p.manifest_ = json::parse(text, text + manifestBytes->second.size(), nullptr, /*allow_exceptions=*/false);
  const json& m = p.manifest_;
  if (m.is_discarded() || !m.is_object()) throw fail("manifest.json is not a JSON object");
  if (!m.contains("format") || m["format"] != kPackageFormat) throw fail("manifest.json is not a graphc package's");
  if (!m.contains("format_version") || m["format_version"] != kPackageFormatVersion)
    throw fail(fmt::format("package format version {} (made by graphc {}); this graphc ({}) reads version {}",
                           m.contains("format_version") ? m["format_version"].dump() : "?",
                           m.contains("graphc_version") ? m["graphc_version"].dump() : "?", GRAPHC_VERSION,
                           kPackageFormatVersion));
  if (!m.contains("entries") || !m["entries"].is_object()) throw fail("manifest.json lists no entries");
  std::set<std::string> listed;
  for (const auto& [entry, info] : m["entries"].items()) {
    auto it = p.entries_.find(entry);
    if (it == p.entries_.end()) throw fail(fmt::format("entry '{}' is missing", entry));
    if (!info.is_object() || !info.contains("bytes") || !info["bytes"].is_number_unsigned() ||
        !info.contains("xxh3_64") || !info["xxh3_64"].is_string())
      throw fail(fmt::format("manifest.json: entry '{}' has no size and checksum", entry));
    if (info["bytes"].get<uint64_t>() != it->second.size())
      throw fail(fmt::format("entry '{}' has {} bytes, the manifest says {} (truncated?)", entry, it->second.size(),
                             info["bytes"].get<uint64_t>()));
    if (checksumOf(it->second) != info["xxh3_64"].get<std::string>())
      throw fail(fmt::format("entry '{}' does not match its checksum (damaged or modified)", entry));
    listed.insert(entry);
  }
  for (const auto& [entry, bytes] : p.entries_)
    if (entry != kManifest && !listed.count(entry)) throw fail(fmt::format("entry '{}' is not in the manifest", entry));
  return p;
}

std::span<const std::byte> Package::entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw ir::Error(fmt::format("{}: no entry '{}'", name_, name));
  return it->second;
}

}  // namespace graphc::deploy
