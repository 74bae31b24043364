#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "core/error.hpp"
#include "core/io.hpp"
#include "index/token_store.hpp"

using namespace verity;
using namespace verity::index;

namespace {

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "verity_token_store_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// Documents of 0..40 tokens, dim 48, values spread over several magnitudes.
std::vector<std::vector<float>> make_documents(size_t dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  std::uniform_int_distribution<int> len(0, 40);
  std::vector<std::vector<float>> docs(25);
  for (size_t d = 0; d < docs.size(); ++d) {
    docs[d].resize(size_t(d == 3 ? 0 : len(rng)) * dim);
    const float magnitude = std::pow(10.0f, float(int(d % 5) - 2));  // 0.01 .. 100
    for (auto& x : docs[d]) x = g(rng) * magnitude;
  }
  return docs;
}

double cosine(const float* a, const float* b, size_t d) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < d; ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return (aa == 0 || bb == 0) ? 1.0 : ab / std::sqrt(aa * bb);
}

struct ErrorStats {
  double max_abs = 0, mean_abs = 0, min_cos = 1, max_rel_normal = 0;
  size_t count = 0;
};

}  // namespace

TEST(Half, KnownEncodings) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie -> even
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  for (uint32_t h = 0; h < 0x7c00; ++h) EXPECT_EQ(float_to_half(half_to_float(uint16_t(h))), h);
}

TEST(TokenStore, ErrorBoundsPerPrecision) {
  const size_t dim = 48;
  auto docs = make_documents(dim, 11);
  for (auto precision : {TokenPrecision::fp32, TokenPrecision::fp16, TokenPrecision::int8}) {
    TokenStoreBuilder builder(dim, precision);
    for (auto& d : docs) builder.add_document(d);
    const std::string path = temp_path(std::string(to_string(precision)) + ".vtok");
    builder.save(path);
    TokenStore store(path);
    ASSERT_EQ(store.num_documents(), docs.size());
    EXPECT_EQ(store.precision(), precision);
    ErrorStats s;
    for (size_t d = 0; d < docs.size(); ++d) {
      auto got = store.get(d);
      ASSERT_EQ(got.size(), docs[d].size());
      for (size_t t = 0; t < got.size() / dim; ++t) {
        const float* want = docs[d].data() + t * dim;
        float max_abs = 0;
        for (size_t c = 0; c < dim; ++c) max_abs = std::max(max_abs, std::fabs(want[c]));
        for (size_t c = 0; c < dim; ++c) {
          const double err = std::fabs(double(got[t * dim + c]) - want[c]);
          s.max_abs = std::max(s.max_abs, err);
          s.mean_abs += err;
          ++s.count;
          if (precision == TokenPrecision::int8) {
            // Documented bound: |err| <= scale/2 (plus float rounding of x/scale).
            EXPECT_LE(err, max_abs / 127.0 * 0.5 * (1 + 1e-5)) << d << "," << t << "," << c;
          } else if (precision == TokenPrecision::fp16) {
            if (std::fabs(want[c]) >= std::ldexp(1.0, -14)) {
              s.max_rel_normal = std::max(s.max_rel_normal, err / std::fabs(want[c]));
              EXPECT_LE(err, std::fabs(want[c]) * std::ldexp(1.0, -11));
            } else {
              EXPECT_LE(err, std::ldexp(1.0, -25));
            }
          } else {
            EXPECT_EQ(err, 0.0);
          }
        }
        s.min_cos = std::min(s.min_cos, cosine(want, got.data() + t * dim, dim));
      }
    }
    s.mean_abs /= double(std::max<size_t>(1, s.count));
    std::printf("[ measure  ] %s: %zu bytes/token vector (d=%zu), max abs err %.3g, mean abs err "
                "%.3g, max rel err (normal range) %.3g, min cosine %.6f\n",
                std::string(to_string(precision)).c_str(), bytes_per_token_vector(precision, dim),
                dim, s.max_abs, s.mean_abs, s.max_rel_normal, s.min_cos);
    if (precision == TokenPrecision::fp16) {
      EXPECT_GT(s.min_cos, 0.99999);
    }
    if (precision == TokenPrecision::int8) {
      EXPECT_GT(s.min_cos, 0.999);
    }
    const size_t data_bytes = store.num_tokens() * bytes_per_token_vector(precision, dim);
    EXPECT_LT(std::filesystem::file_size(path), data_bytes + 4096);  // compact: little overhead
  }
  EXPECT_EQ(bytes_per_token_vector(TokenPrecision::int8, 128), 132u);
  EXPECT_EQ(bytes_per_token_vector(TokenPrecision::fp16, 128), 256u);
}

// The empty document also covers a memcpy from or to an empty span's null pointer
// (undefined behaviour, found by fuzz/token_store.cpp under UBSan).
TEST(TokenStore, DecodeIntoBufferAndRanges) {
  TokenStoreBuilder builder(2, TokenPrecision::fp32);
  std::vector<float> a = {1, 2, 3, 4}, empty, b = {5, 6};
  EXPECT_EQ(builder.add_document(a), 0u);
  EXPECT_EQ(builder.add_document(empty), 1u);
  EXPECT_EQ(builder.add_document(b), 2u);
  const std::string path = temp_path("small.vtok");
  builder.save(path);
  TokenStore store(path);
  EXPECT_EQ(store.num_tokens(), 3u);
  EXPECT_EQ(store.num_tokens(0), 2u);
  EXPECT_EQ(store.num_tokens(1), 0u);
  std::vector<float> out(2);
  store.decode(2, out);
  EXPECT_EQ(out, b);
  EXPECT_TRUE(store.get(1).empty());
  std::vector<float> wrong(3);
  EXPECT_THROW(store.decode(2, wrong), ConfigError);
  EXPECT_THROW(store.get(3), ConfigError);
}

TEST(TokenStore, RejectsBadInput) {
  TokenStoreBuilder half(2, TokenPrecision::fp16);
  std::vector<float> big = {1, 70000};
  EXPECT_THROW(half.add_document(big), ConfigError);
  TokenStoreBuilder b(2, TokenPrecision::int8);
  std::vector<float> nan = {1, 2, std::numeric_limits<float>::quiet_NaN(), 0};
  try {
    b.add_document(nan);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("document 0 token 1 component 0"), std::string::npos)
        << e.what();
  }
  std::vector<float> odd = {1, 2, 3};
  EXPECT_THROW(b.add_document(odd), ConfigError);
  EXPECT_THROW(parse_token_precision("bf16"), ConfigError);
  EXPECT_EQ(parse_token_precision("int8"), TokenPrecision::int8);
}

TEST(TokenStore, DamagedFilesAreFormatErrors) {
  TokenStoreBuilder builder(4, TokenPrecision::int8);
  auto docs = make_documents(4, 3);
  for (auto& d : docs) builder.add_document(d);
  const std::string path = temp_path("damaged.vtok");
  builder.save(path);
  const std::string good = read_file(path);
  for (size_t keep : {size_t(8), good.size() / 2, good.size() - 1}) {
    write_file_atomic(path, good.substr(0, keep));
    EXPECT_THROW(TokenStore{path}, FormatError) << keep;
  }
  std::string bad = good;
  bad[good.size() / 2] ^= 0x20;
  write_file_atomic(path, bad);
  EXPECT_THROW(TokenStore{path}, FormatError);
  bad = good;
  bad[4] = 9;  // version 9
  write_file_atomic(path, bad);
  try {
    TokenStore store(path);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("version"), std::string::npos) << e.what();
  }
}

TEST(TokenStore, InconsistentOffsetsAreFormatErrors) {
  // A well-formed container whose offsets disagree with its data: checksums
  // pass, so only the semantic validation can catch it.
  const std::string path = temp_path("offsets.vtok");
  auto write = [&](std::vector<uint64_t> offsets, uint64_t tokens, size_t data_bytes) {
    SectionWriter out(path, "VTOK", 1);
    ByteWriter meta;
    meta.write<uint64_t>(2);
    meta.write<uint32_t>(0);
    meta.write<uint64_t>(offsets.size() - 1);
    meta.write<uint64_t>(tokens);
    out.add("META", meta);
    out.add_array("OFFS", std::span<const uint64_t>(offsets));
    std::vector<char> data(data_bytes);
    out.add("DATA", data.data(), data.size());
    out.commit();
  };
  write({0, 2, 3}, 3, 3 * 2 * 4);
  EXPECT_NO_THROW(TokenStore{path});
  write({0, 3, 2}, 2, 2 * 2 * 4);  // decreasing
  EXPECT_THROW(TokenStore{path}, FormatError);
  write({1, 2, 3}, 3, 3 * 2 * 4);  // does not start at 0
  EXPECT_THROW(TokenStore{path}, FormatError);
  write({0, 2, 3}, 3, 2 * 2 * 4);  // data too short
  EXPECT_THROW(TokenStore{path}, FormatError);
  write({0, 2, 4}, 3, 3 * 2 * 4);  // last offset != tokens
  EXPECT_THROW(TokenStore{path}, FormatError);
}

TEST(TokenStore, IdentitiesAndPooledVectorsRoundTrip) {
  TokenStoreBuilder b(2, TokenPrecision::fp16);
  std::vector<float> doc0 = {1, 0, 0, 1}, doc1 = {0.5f, 0.5f};
  std::vector<uint32_t> ids0 = {7, 9}, ids1 = {11};
  std::vector<float> pooled0 = {3, 4}, pooled1 = {0, 2};
  b.add_document(doc0, ids0, pooled0);
  b.add_document(doc1, ids1, pooled1);
  EXPECT_THROW(b.add_document(doc1), ConfigError);                 // ids for all documents or none
  EXPECT_THROW(b.add_document(doc1, ids0, pooled1), ConfigError);  // 2 ids for 1 token
  const std::string path = temp_path("ids.vtok");
  b.save(path);
  TokenStore s(path);
  ASSERT_TRUE(s.has_ids());
  ASSERT_TRUE(s.has_pooled());
  ASSERT_EQ(s.ids(0).size(), 2u);
  EXPECT_EQ(s.ids(0)[1], 9u);
  EXPECT_EQ(s.ids(1)[0], 11u);
  EXPECT_FLOAT_EQ(s.pooled(0)[0], 0.6f);  // stored normalized
  EXPECT_FLOAT_EQ(s.pooled(1)[1], 1.0f);
  // An empty text has no tokens and so no identities, wherever it comes.
  TokenStoreBuilder gaps(2, TokenPrecision::fp16);
  gaps.add_document({}, {}, pooled0);
  gaps.add_document(doc0, ids0, pooled0);
  gaps.add_document({}, {}, pooled1);
  gaps.add_document(doc1, ids1, pooled1);
  EXPECT_THROW(gaps.add_document(doc1, {}, pooled1), ConfigError);
  gaps.save(path);
  TokenStore g(path);
  ASSERT_TRUE(g.has_ids());
  EXPECT_TRUE(g.ids(0).empty());
  EXPECT_EQ(g.ids(1)[1], 9u);
  EXPECT_TRUE(g.ids(2).empty());
  EXPECT_EQ(g.ids(3)[0], 11u);
  // A store without them still loads and says so.
  TokenStoreBuilder plain(2, TokenPrecision::fp32);
  plain.add_document(doc0);
  plain.save(path);
  TokenStore p(path);
  EXPECT_FALSE(p.has_pooled());
  EXPECT_TRUE(p.ids(0).empty());
}
