#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/section_file.hpp"
#include "verify/detail/learned_modules.hpp"
#include "verify/learned.hpp"

using namespace verity;
using namespace verity::verify;

namespace {

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "verity_learned_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

SimilarityMap random_map(size_t rows, size_t cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(rows * cols);
  for (auto& x : v) x = u(rng);
  return SimilarityMap(rows, cols, std::move(v));
}

CnnConfig small_cnn() {
  CnnConfig c;
  c.map_size = 32;
  c.channels = {4, 8, 8};
  return c;
}

VitConfig small_vit() {
  VitConfig c;
  c.map_size = 32;
  c.patch = 8;
  c.dim = 32;
  c.layers = 2;
  c.heads = 4;
  c.mlp_dim = 64;
  return c;
}

std::vector<std::unique_ptr<LearnedVerifier>> both(uint64_t seed) {
  std::vector<std::unique_ptr<LearnedVerifier>> out;
  out.push_back(LearnedVerifier::untrained_cnn(small_cnn(), seed));
  out.push_back(LearnedVerifier::untrained_vit(small_vit(), seed));
  return out;
}

// Rewrites a weights file with a different CONF, keeping the parameters.
void rewrite_conf(const std::string& from, const std::string& to,
                  const std::function<void(nlohmann::json&)>& edit) {
  SectionFile in(from, "VVRF", 1);
  auto conf_bytes = in.section("CONF");
  auto conf = nlohmann::json::parse(
      std::string(reinterpret_cast<const char*>(conf_bytes.data()), conf_bytes.size()));
  edit(conf);
  const std::string text = conf.dump();
  SectionWriter out(to, "VVRF", 1);
  out.add("CONF", text.data(), text.size());
  auto names = in.section("PNAM");
  out.add("PNAM", names.data(), names.size());
  auto data = in.section("PDAT");
  out.add("PDAT", data.data(), data.size());
  out.commit();
}

}  // namespace

TEST(LearnedVerifiers, ForwardShapes) {
  std::mt19937 rng(1);
  std::vector<SimilarityMap> maps = {random_map(5, 9, rng), random_map(40, 13, rng)};
  std::vector<const SimilarityMap*> ptrs = {&maps[0], &maps[1]};
  auto batch = verify::detail::make_map_batch(ptrs, 32, 8);
  EXPECT_EQ(batch.values.sizes(), torch::IntArrayRef({2, 32, 16}));  // rows cropped to 32
  EXPECT_EQ(batch.mask.sum().item<float>(), 5 * 9 + 32 * 13);
  for (auto& v : both(7)) {
    auto logits = v->impl().forward_logits(batch);
    EXPECT_EQ(logits.sizes(), torch::IntArrayRef({2})) << v->kind();
    auto scores = v->score_batch(maps);
    ASSERT_EQ(scores.size(), 2u);
    for (float s : scores) {
      EXPECT_GT(s, 0.0f);
      EXPECT_LT(s, 1.0f);
    }
  }
  auto full = verify::detail::make_map_batch(ptrs, 32, 4, 32);
  EXPECT_EQ(full.values.sizes(), torch::IntArrayRef({2, 32, 32}));
}

TEST(LearnedVerifiers, DeterministicAndCanvasIndependent) {
  std::mt19937 rng(2);
  auto small = random_map(6, 11, rng), big = random_map(30, 29, rng);
  std::vector<SimilarityMap> pair = {small, big};
  SimilarityMap empty(0, 4, {});
  for (size_t k = 0; k < 2; ++k) {
    auto a = both(42), b = both(42), c = both(43);
    const float alone = a[k]->score(small);
    EXPECT_EQ(alone, b[k]->score(small)) << "same seed, same weights";
    EXPECT_EQ(alone, a[k]->score(small)) << "repeatable";
    EXPECT_NE(alone, c[k]->score(small)) << "the seed matters";
    // Building a verifier leaves torch's global random stream alone.
    torch::manual_seed(99);
    const float before = torch::rand({1}).item<float>();
    torch::manual_seed(99);
    both(5);
    EXPECT_EQ(torch::rand({1}).item<float>(), before);
    // Padding to the 32×32 canvas of the bigger map changes nothing: masking works.
    EXPECT_NEAR(a[k]->score_batch(pair)[0], alone, 1e-5) << a[k]->kind();
    // The map content matters.
    EXPECT_NE(a[k]->score(big), alone);
    EXPECT_EQ(a[k]->score(empty), 0.0f);
    // Garbage in padded cells never reaches the model: the mask removes it.
    std::vector<const SimilarityMap*> one = {&small};
    auto batch = verify::detail::make_map_batch(one, 32, 8, 32);
    auto poisoned = batch;
    poisoned.values = batch.values + (1 - batch.mask) * 5.0f;
    torch::NoGradGuard no_grad;
    EXPECT_NEAR(a[k]->impl().forward_logits(poisoned).item<float>(),
                a[k]->impl().forward_logits(batch).item<float>(), 1e-5);
  }
}

TEST(LearnedVerifiers, SaveLoadGivesIdenticalScores) {
  std::mt19937 rng(3);
  std::vector<SimilarityMap> maps;
  for (size_t k = 0; k < 5; ++k) maps.push_back(random_map(3 + 5 * k, 40 - 6 * k, rng));
  for (auto& v : both(11)) {
    EXPECT_FALSE(v->is_trained());
    EXPECT_NE(v->spec().find("<unsaved>"), std::string::npos);
    v->mark_trained("unit test: pretend-trained");
    const std::string path = temp_path(v->kind() + ".vvrf");
    v->save(path);
    EXPECT_EQ(v->spec(), v->kind() + ":" + path);
    auto loaded = make_verifier(v->spec());
    EXPECT_EQ(loaded->spec(), v->spec());
    EXPECT_TRUE(loaded->is_trained());
    EXPECT_EQ(loaded->score_batch(maps), v->score_batch(maps)) << v->kind();
    auto direct = LearnedVerifier::load(path);
    EXPECT_EQ(direct->provenance(), "unit test: pretend-trained");
    EXPECT_EQ(direct->parameter_count(), v->parameter_count());
    // The other kind's prefix is refused.
    EXPECT_THROW(make_verifier((v->kind() == "f3" ? "f4:" : "f3:") + path), ConfigError);
  }
}

TEST(LearnedVerifiers, UntrainedFileLoadsWithWarning) {
  auto v = LearnedVerifier::untrained_cnn(small_cnn(), 5);
  const std::string path = temp_path("untrained.vvrf");
  v->save(path);
  testing::internal::CaptureStderr();
  auto loaded = make_verifier("f3:" + path);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(loaded->is_trained());
  EXPECT_NE(err.find("untrained"), std::string::npos) << err;
}

TEST(LearnedVerifiers, BadFilesAreRejected) {
  for (auto& v : both(13)) {
    const std::string path = temp_path(v->kind() + "-good.vvrf");
    const std::string bad = temp_path(v->kind() + "-bad.vvrf");
    v->save(path);
    // A config whose shapes disagree with the stored parameters.
    rewrite_conf(path, bad, [&](nlohmann::json& c) {
      if (v->kind() == "f3") c["config"]["channels"] = {4, 8, 16};
      else c["config"]["mlp_dim"] = 48;
    });
    try {
      LearnedVerifier::load(bad);
      FAIL() << v->kind();
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("shape"), std::string::npos) << e.what();
    }
    rewrite_conf(path, bad, [](nlohmann::json& c) { c["config"]["layers"] = 3; });
    EXPECT_THROW(LearnedVerifier::load(bad), FormatError);
    rewrite_conf(path, bad, [](nlohmann::json& c) { c.erase("trained"); });
    EXPECT_THROW(LearnedVerifier::load(bad), FormatError);
    rewrite_conf(path, bad, [](nlohmann::json& c) { c["kind"] = "f7"; });
    EXPECT_THROW(LearnedVerifier::load(bad), FormatError);
    const std::string good = read_file(path);
    write_file_atomic(bad, good.substr(0, good.size() / 2));
    EXPECT_THROW(LearnedVerifier::load(bad), FormatError);
    std::string flipped = good;
    flipped[good.size() - 200] ^= 0x11;
    write_file_atomic(bad, flipped);
    EXPECT_THROW(LearnedVerifier::load(bad), FormatError);
  }
  EXPECT_THROW(make_verifier("f3:/nonexistent/weights.vvrf"), Error);
}

// Found by fuzz/learned_verifier.cpp: finite weights near float's limit passed the
// load checks and then scored NaN. Such output is an error, never a score.
TEST(LearnedVerifiers, OverflowingWeightsAreAnErrorNotANaNScore) {
  for (auto& v : both(14)) {
    torch::NoGradGuard no_grad;
    for (auto& p : v->impl().module().parameters()) p.fill_(3e38f);
    const std::string path = temp_path(v->kind() + "-huge.vvrf");
    v->mark_trained("test: weights at float's limit");
    v->save(path);
    const auto loaded = LearnedVerifier::load(path);  // every value is finite
    std::mt19937 rng(1);
    try {
      loaded->score(random_map(5, 7, rng));
      FAIL() << v->kind() << " scored weights that overflow";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos) << e.what();
    }
  }
}

TEST(LearnedVerifiers, ConfigValidation) {
  auto c = small_cnn();
  c.map_size = 30;
  EXPECT_THROW(LearnedVerifier::untrained_cnn(c, 0), ConfigError);
  c = small_cnn();
  c.channels = {4, 8};
  EXPECT_THROW(LearnedVerifier::untrained_cnn(c, 0), ConfigError);
  auto t = small_vit();
  t.heads = 5;
  EXPECT_THROW(LearnedVerifier::untrained_vit(t, 0), ConfigError);
  t = small_vit();
  t.patch = 7;
  EXPECT_THROW(LearnedVerifier::untrained_vit(t, 0), ConfigError);
  EXPECT_THROW(LearnedVerifier::untrained_cnn(small_cnn(), 0)->mark_trained(""), ConfigError);
}

TEST(LearnedVerifiers, DefaultSizeSpeed) {
  // Paper-sized models (F3 32/64/128 channels, F4 d=256, 2 layers, 8 heads)
  // scoring 32×128 maps, frozen (inference mode).
  std::mt19937 rng(4);
  std::vector<SimilarityMap> maps;
  for (size_t k = 0; k < 16; ++k) maps.push_back(random_map(32, 128, rng));
  auto f3 = LearnedVerifier::untrained_cnn(CnnConfig{}, 1);
  auto f4 = LearnedVerifier::untrained_vit(VitConfig{}, 1);
  for (auto* v : {f3.get(), f4.get()}) {
    v->score_batch(std::span(maps).subspan(0, 2));  // warm-up
    auto t0 = std::chrono::steady_clock::now();
    auto s = v->score_batch(maps);
    auto t1 = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    std::printf("[ measure  ] %s (%zu params): %zu maps 32x128 in %.1f ms = %.0f pairs/s\n",
                v->kind().c_str(), v->parameter_count(), maps.size(), ms, maps.size() / ms * 1000);
    EXPECT_EQ(s.size(), maps.size());
  }
}

// F3 with pool "mean_max": the masked maximum joins the mean. Canvas padding
// still changes nothing, the setting survives save/load, and a file written
// before the key existed loads as "mean".
TEST(LearnedVerifiers, MeanMaxPooling) {
  std::mt19937 rng(21);
  auto small = random_map(6, 11, rng), big = random_map(30, 29, rng);
  std::vector<SimilarityMap> pair = {small, big};
  auto config = small_cnn();
  config.pool = "mean_max";
  auto v = LearnedVerifier::untrained_cnn(config, 8);
  auto mean_only = LearnedVerifier::untrained_cnn(small_cnn(), 8);
  EXPECT_EQ(v->parameter_count(), mean_only->parameter_count() + size_t(config.channels[2]));
  const float alone = v->score(small);
  EXPECT_NEAR(v->score_batch(pair)[0], alone, 1e-5);
  std::vector<const SimilarityMap*> one = {&small};
  auto batch = verify::detail::make_map_batch(one, 32, 4, 32);
  auto poisoned = batch;
  poisoned.values = batch.values + (1 - batch.mask) * 5.0f;
  {
    torch::NoGradGuard no_grad;
    EXPECT_NEAR(v->impl().forward_logits(poisoned).item<float>(), v->impl().forward_logits(batch).item<float>(),
                1e-5);
  }
  v->mark_trained("unit test");
  const std::string path = temp_path("f3-mean-max.vvrf");
  v->save(path);
  auto loaded = LearnedVerifier::load(path, "f3");
  EXPECT_EQ(loaded->score_batch(pair), v->score_batch(pair));
  EXPECT_EQ(loaded->parameter_count(), v->parameter_count());
  // The head has twice the inputs: a mean-pooled config cannot read it.
  const std::string bad = temp_path("f3-mean-max-bad.vvrf");
  rewrite_conf(path, bad, [](nlohmann::json& c) { c["config"].erase("pool"); });
  EXPECT_THROW(LearnedVerifier::load(bad), FormatError);
  rewrite_conf(path, bad, [](nlohmann::json& c) { c["config"]["pool"] = "median"; });
  EXPECT_THROW(LearnedVerifier::load(bad), FormatError);
  // A mean-pooled file without the key (the first F3 files) loads as "mean".
  const std::string old_path = temp_path("f3-mean.vvrf");
  mean_only->mark_trained("unit test");
  mean_only->save(old_path);
  const std::string legacy = temp_path("f3-legacy.vvrf");
  rewrite_conf(old_path, legacy, [](nlohmann::json& c) { c["config"].erase("pool"); });
  EXPECT_EQ(LearnedVerifier::load(legacy)->score_batch(pair), mean_only->score_batch(pair));
  auto c = small_cnn();
  c.pool = "max";
  EXPECT_THROW(LearnedVerifier::untrained_cnn(c, 0), ConfigError);
}
