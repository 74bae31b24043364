#include "core/section_file.hpp"

#include "core/crc32c.hpp"

namespace verity {
namespace {
constexpr size_t kAlign = 64;
constexpr std::string_view kEndTag = "END.";

void check_tag(std::string_view tag) {
  VERITY_CHECK(tag.size() == 4, Error, "section tag must be 4 bytes: '", tag, "'");
}
}  // namespace

SectionWriter::SectionWriter(std::string path, std::string_view magic, uint32_t version,
                             uint64_t flags)
    : out_(std::move(path)) {
  check_tag(magic);
  out_.write(magic);
  out_.write(&version, 4);
  out_.write(&flags, 8);
}

void SectionWriter::add(std::string_view tag, const void* data, size_t n) {
  check_tag(tag);
  VERITY_CHECK(tag != kEndTag, Error, "reserved section tag");
  VERITY_CHECK(seen_.emplace(std::string(tag), true).second, Error, "duplicate section '", tag,
               "' in ", out_.path());
  uint32_t crc = crc32c(data, n);
  uint64_t len = n;
  out_.write(tag);
  out_.write(&crc, 4);
  out_.write(&len, 8);
  out_.pad_to(kAlign);
  out_.write(data, n);
}

void SectionWriter::commit() {
  uint32_t crc = crc32c(nullptr, 0);
  uint64_t len = 0;
  out_.write(kEndTag);
  out_.write(&crc, 4);
  out_.write(&len, 8);
  out_.commit();
}

SectionFile::SectionFile(const std::string& path, std::string_view magic, uint32_t max_version,
                         bool verify_checksums)
    : file_(path) {
  ByteReader r(file_.bytes(), path);
  VERITY_CHECK(file_.size() >= 16, FormatError, path, ": file too short (", file_.size(),
               " bytes) for a verity header");
  std::string got(reinterpret_cast<const char*>(r.take(4)), 4);
  VERITY_CHECK(got == magic, FormatError, path, ": bad magic '", got, "', expected '", magic,
               "' (wrong file type?)");
  version_ = r.read<uint32_t>();
  flags_ = r.read<uint64_t>();
  VERITY_CHECK(version_ >= 1 && version_ <= max_version, FormatError, path,
               ": unsupported format version ", version_, " (this build reads 1..", max_version,
               ")");
  for (;;) {
    VERITY_CHECK(r.remaining() >= 16, FormatError, path, ": truncated at offset ", r.position(),
                 " (no end marker)");
    std::string tag(reinterpret_cast<const char*>(r.take(4)), 4);
    auto crc = r.read<uint32_t>();
    auto len = r.read<uint64_t>();
    if (tag == kEndTag) break;
    size_t pad = (kAlign - r.position() % kAlign) % kAlign;
    VERITY_CHECK(pad <= r.remaining() && len <= r.remaining() - pad, FormatError, path,
                 ": section '", tag, "' claims ", len, " bytes at offset ", r.position() + pad,
                 " but the file has only ", r.remaining(), " left (truncated?)");
    r.take(pad);
    const std::byte* p = r.take(size_t(len));
    if (verify_checksums) {
      VERITY_CHECK(crc32c(p, size_t(len)) == crc, FormatError, path, ": checksum mismatch in section '",
                   tag, "' (file corrupted)");
    }
    VERITY_CHECK(sections_.emplace(tag, std::span<const std::byte>(p, size_t(len))).second,
                 FormatError, path, ": duplicate section '", tag, "'");
  }
}

std::span<const std::byte> SectionFile::section(std::string_view tag) const {
  auto it = sections_.find(std::string(tag));
  VERITY_CHECK(it != sections_.end(), FormatError, path(), ": missing section '", tag, "'");
  return it->second;
}

}  // namespace verity
