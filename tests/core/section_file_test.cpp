#include "core/section_file.hpp"
#include <gtest/gtest.h>
#include <filesystem>
#include <fstream>
#include "core/crc32c.hpp"

using namespace verity;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("verity_test_" + name)).string();
}
void write_sample(const std::string& path) {
  SectionWriter w(path, "TEST", 2);
  std::vector<float> v{1.f, 2.f, 3.f};
  w.add_array<float>("VECS", v);
  ByteWriter meta;
  meta.write<uint32_t>(7);
  meta.write_string("hello");
  w.add("META", meta);
  w.commit();
}
}  // namespace

TEST(Crc32c, KnownVector) {
  // RFC 3720 check value for "123456789".
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
}

TEST(SectionFile, RoundTrip) {
  auto path = temp_path("roundtrip.bin");
  write_sample(path);
  SectionFile f(path, "TEST", 2);
  EXPECT_EQ(f.version(), 2u);
  auto v = f.array<float>("VECS");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[2], 3.f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % 64, 0u);
  auto r = f.reader("META");
  EXPECT_EQ(r.read<uint32_t>(), 7u);
  EXPECT_EQ(r.read_string(), "hello");
  EXPECT_THROW(r.read<uint32_t>(), FormatError);
  EXPECT_THROW(f.section("NOPE"), FormatError);
  std::filesystem::remove(path);
}

TEST(SectionFile, RejectsWrongMagicAndVersion) {
  auto path = temp_path("magic.bin");
  write_sample(path);
  EXPECT_THROW(SectionFile(path, "XXXX", 2), FormatError);
  EXPECT_THROW(SectionFile(path, "TEST", 1), FormatError);
  std::filesystem::remove(path);
}

TEST(SectionFile, DetectsTruncation) {
  auto path = temp_path("trunc.bin");
  write_sample(path);
  auto size = std::filesystem::file_size(path);
  for (auto cut : {size - 1, size - 16, size / 2, uintmax_t(10)}) {
    write_sample(path);
    std::filesystem::resize_file(path, cut);
    try {
      SectionFile f(path, "TEST", 2);
      FAIL() << "truncation to " << cut << " not detected";
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
    }
  }
  std::filesystem::remove(path);
}

TEST(SectionFile, DetectsCorruption) {
  auto path = temp_path("corrupt.bin");
  write_sample(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64 + 4);  // inside the VECS payload
    char c = 0x55;
    f.write(&c, 1);
  }
  try {
    SectionFile f(path, "TEST", 2);
    FAIL() << "corruption not detected";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(AtomicFileWriter, UncommittedLeavesNothing) {
  auto path = temp_path("atomic.txt");
  std::filesystem::remove(path);
  {
    AtomicFileWriter w(path);
    w.write("partial");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  write_file_atomic(path, "done");
  EXPECT_EQ(read_file(path), "done");
  std::filesystem::remove(path);
}
