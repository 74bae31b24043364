#include "encode/safetensors.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <cmath>
#include <fstream>
#include <optional>

#include "core/error.hpp"

using namespace verity;
using namespace verity::encode;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("verity_h4_st_" + name)).string();
}

// Writes a raw safetensors file: header JSON as given, then data bytes.
void write_raw(const std::string& path, const std::string& header, const std::string& data,
               std::optional<uint64_t> declared_len = std::nullopt) {
  std::ofstream out(path, std::ios::binary);
  uint64_t len = declared_len.value_or(header.size());
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << header << data;
}

template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "<no FormatError>";
}

}  // namespace

TEST(Safetensors, RoundTripF32AndMetadata) {
  auto path = temp_path("roundtrip.safetensors");
  std::vector<float> a{1.f, -2.5f, 3.f, 4.f, 5.f, 6.f};
  std::vector<float> b{0.25f};
  std::vector<int64_t> ids{7, -1};
  write_safetensors(path,
                    {f32_tensor("layer.weight", {2, 3}, a), f32_tensor("bias", {1}, b),
                     {"ids", DType::I64, {2}, std::as_bytes(std::span<const int64_t>(ids))}},
                    {{"format", "pt"}});
  SafetensorsFile f(path);
  EXPECT_EQ(f.names(), (std::vector<std::string>{"bias", "ids", "layer.weight"}));
  EXPECT_TRUE(f.has("bias"));
  EXPECT_FALSE(f.has("nope"));
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.tensor("layer.weight").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f.to_float32("layer.weight"), a);
  EXPECT_EQ(f.to_int64("ids"), ids);
  EXPECT_THROW(f.to_int64("bias"), FormatError);
  EXPECT_NE(error_of([&] { f.tensor("nope"); }).find("'nope'"), std::string::npos);
  // Header padded to a multiple of 8 keeps F32 data aligned in the mapping.
  uint64_t len = 0;
  std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(&len), 8);
  EXPECT_EQ(len % 8, 0u);
  std::filesystem::remove(path);
}

TEST(Safetensors, ConvertsHalfAndBFloat16) {
  auto path = temp_path("half.safetensors");
  // F16: 1.0 = 0x3C00, -2.0 = 0xC000, smallest subnormal 2^-24 = 0x0001, 65504 = 0x7BFF.
  std::vector<uint16_t> f16{0x3C00, 0xC000, 0x0001, 0x7BFF};
  // BF16: top half of the float bits: 1.0 = 0x3F80, -0.5 = 0xBF00, 3.0 = 0x4040.
  std::vector<uint16_t> bf16{0x3F80, 0xBF00, 0x4040};
  write_safetensors(path, {{"h", DType::F16, {4}, std::as_bytes(std::span<const uint16_t>(f16))},
                           {"b", DType::BF16, {3}, std::as_bytes(std::span<const uint16_t>(bf16))}});
  SafetensorsFile f(path);
  auto h = f.to_float32("h");
  EXPECT_EQ(h, (std::vector<float>{1.f, -2.f, std::ldexp(1.f, -24), 65504.f}));
  EXPECT_EQ(f.to_float32("b"), (std::vector<float>{1.f, -0.5f, 3.f}));
  std::filesystem::remove(path);
}

TEST(Safetensors, WriterRejectsBadInput) {
  auto path = temp_path("bad_write.safetensors");
  std::vector<float> v{1, 2, 3};
  EXPECT_THROW(write_safetensors(path, {f32_tensor("x", {2, 2}, v)}), ConfigError);
  EXPECT_THROW(write_safetensors(path, {f32_tensor("x", {3}, v), f32_tensor("x", {3}, v)}),
               ConfigError);
  EXPECT_THROW(write_safetensors(path, {f32_tensor("__metadata__", {3}, v)}), ConfigError);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Safetensors, RejectsTruncatedFiles) {
  auto path = temp_path("trunc.safetensors");
  std::vector<float> v(16, 1.f);
  write_safetensors(path, {f32_tensor("w", {4, 4}, v)});
  auto size = std::filesystem::file_size(path);
  for (uintmax_t cut : {uintmax_t(0), uintmax_t(5), uintmax_t(12), size - 1, size - 40}) {
    write_safetensors(path, {f32_tensor("w", {4, 4}, v)});
    std::filesystem::resize_file(path, cut);
    EXPECT_THROW(SafetensorsFile f(path), FormatError) << "cut at " << cut;
  }
  std::filesystem::remove(path);
}

TEST(Safetensors, RejectsBadHeaders) {
  auto path = temp_path("bad.safetensors");
  const std::string data(16, '\0');  // 4 floats
  struct Case {
    std::string header, expect;
  };
  std::vector<Case> cases = {
      {"not json", "not valid JSON"},
      {"[1,2]", "JSON object"},
      {R"({"w":{"dtype":"F32","shape":[4]}})", "no 'data_offsets'"},
      {R"({"w":{"dtype":"Q4","shape":[4],"data_offsets":[0,16]}})", "unsupported dtype 'Q4'"},
      {R"({"w":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", "non-negative"},
      {R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[16,0]}})", "begin 16 > end 0"},
      {R"({"w":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})", "past the 16-byte"},
      {R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", "needs 12 bytes"},
      {R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,16]}})", "overflows"},
      {R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
       "overlaps"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", "unreferenced bytes"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", "cover only 8"},
      {R"({"__metadata__":{"k":1},"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
       "must be a string"},
  };
  for (const auto& c : cases) {
    write_raw(path, c.header, data);
    std::string msg = error_of([&] { SafetensorsFile f(path); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.header << " -> " << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
  // Declared header length beyond the file / beyond the sanity bound.
  write_raw(path, "{}", "", 1000);
  EXPECT_NE(error_of([&] { SafetensorsFile f(path); }).find("runs past the end"), std::string::npos);
  write_raw(path, "{}", "", uint64_t(1) << 40);
  EXPECT_NE(error_of([&] { SafetensorsFile f(path); }).find("limit"), std::string::npos);
  // Names the tensor at fault.
  write_raw(path, R"({"enc.layer.0":{"dtype":"F32","shape":[5],"data_offsets":[0,16]}})", data);
  EXPECT_NE(error_of([&] { SafetensorsFile f(path); }).find("'enc.layer.0'"), std::string::npos);
  // An empty file set with trailing-space padding is valid.
  write_raw(path, "{}      ", "");
  EXPECT_TRUE(SafetensorsFile(path).names().empty());
  std::filesystem::remove(path);
}
