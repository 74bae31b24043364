#pragma once
// The one container format behind every verity binary file (indexes, vectors,
// token stores). Layout, all little-endian:
//   header : magic[4] | u32 version | u64 flags
//   section: tag[4] | u32 crc32c(payload) | u64 length | zero pad to 64 | payload
//   ...      and a final section tagged "END." with length 0.
// Payloads start 64-byte aligned so arrays can be used straight from the mmap.
// A missing END marks a truncated file; a crc mismatch a corrupted one.
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "core/io.hpp"

namespace verity {

class SectionWriter {
 public:
  SectionWriter(std::string path, std::string_view magic, uint32_t version, uint64_t flags = 0);
  void add(std::string_view tag, const void* data, size_t n);
  template <typename T>
  void add_array(std::string_view tag, std::span<const T> values) {
    add(tag, values.data(), values.size_bytes());
  }
  void add(std::string_view tag, const ByteWriter& w) { add(tag, w.buffer().data(), w.buffer().size()); }
  void commit();

 private:
  AtomicFileWriter out_;
  std::map<std::string, bool> seen_;
};

class SectionFile {
 public:
  // Maps the file, checks magic, version (1..max_version) and, unless
  // verify_checksums is false, every section's crc.
  SectionFile(const std::string& path, std::string_view magic, uint32_t max_version,
              bool verify_checksums = true);
  uint32_t version() const { return version_; }
  uint64_t flags() const { return flags_; }
  bool has(std::string_view tag) const { return sections_.count(std::string(tag)) > 0; }
  std::span<const std::byte> section(std::string_view tag) const;
  template <typename T>
  std::span<const T> array(std::string_view tag) const {
    auto b = section(tag);
    VERITY_CHECK(b.size() % sizeof(T) == 0, FormatError, path(), ": section '", tag, "' has ",
                 b.size(), " bytes, not a multiple of ", sizeof(T));
    return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
  }
  ByteReader reader(std::string_view tag) const {
    return ByteReader(section(tag), path() + " section '" + std::string(tag) + "'");
  }
  const std::string& path() const { return file_.path(); }

 private:
  MappedFile file_;
  uint32_t version_ = 0;
  uint64_t flags_ = 0;
  std::map<std::string, std::span<const std::byte>> sections_;
};

}  // namespace verity
