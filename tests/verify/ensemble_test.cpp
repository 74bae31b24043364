// EnsembleVerifier: the logit mean of its members, and an ensemble file that
// refuses members that changed since it was written.
#include "verify/ensemble.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"
#include "verify/learned.hpp"
#include "verify/verifier.hpp"

namespace fs = std::filesystem;
using namespace verity;
using namespace verity::verify;

namespace {

struct TempDir {
  TempDir() : path(fs::temp_directory_path() / ("verity_ensemble_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path / "members");
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  fs::path path;
};

SimilarityMap ramp(size_t rows, size_t cols, float shift) {
  std::vector<float> v(rows * cols);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) v[i * cols + j] = i == j ? 0.9f - shift : 0.1f + shift * float(j) / cols;
  return SimilarityMap(rows, cols, v);
}

std::string trained_cnn(const TempDir& dir, const std::string& name, uint64_t seed) {
  CnnConfig c;
  c.map_size = 16;
  c.channels = {4, 4, 4};
  auto v = LearnedVerifier::untrained_cnn(c, seed);
  v->mark_trained("ensemble test member");
  const auto path = dir.file("members/" + name);
  v->save(path);
  return path;
}

double logit(double p) { return std::log(p / (1 - p)); }

TEST(EnsembleVerifier, ScoresTheLogitMeanOfItsMembers) {
  TempDir dir;
  const std::vector<std::string> files = {trained_cnn(dir, "a.vvrf", 1), trained_cnn(dir, "b.vvrf", 2),
                                          trained_cnn(dir, "c.vvrf", 3)};
  const auto path = dir.file("three.vens");
  EnsembleVerifier::write(path, files, "seeds 1-3");
  auto e = make_verifier("ensemble:" + path);
  EXPECT_EQ(e->spec(), "ensemble:" + path);
  EXPECT_TRUE(e->is_trained());
  const std::vector<SimilarityMap> maps = {ramp(5, 7, 0.0f), ramp(6, 4, 0.3f), ramp(3, 3, 0.6f)};
  const auto batch = e->score_batch(maps);
  for (size_t m = 0; m < maps.size(); ++m) {
    double sum = 0;
    for (const auto& f : files) sum += logit(LearnedVerifier::load(f)->score(maps[m]));
    const double expected = 1 / (1 + std::exp(-sum / 3));
    EXPECT_NEAR(batch[m], expected, 1e-5) << m;
    EXPECT_NEAR(e->score(maps[m]), expected, 1e-5) << m;
  }
  // logit_batch is the score before the sigmoid.
  const auto member = LearnedVerifier::load(files[0]);
  const auto logits = member->logit_batch(maps), scores = member->score_batch(maps);
  for (size_t m = 0; m < maps.size(); ++m) EXPECT_NEAR(1 / (1 + std::exp(-double(logits[m]))), scores[m], 1e-6);
  // The members disagree, so the mean is not just one of them.
  EXPECT_NE(LearnedVerifier::load(files[0])->score(maps[0]), LearnedVerifier::load(files[1])->score(maps[0]));
  EXPECT_EQ(e->score(SimilarityMap(0, 4, {})), 0.0f);
  // Members are stored relative to the file, so the pair moves together.
  const auto j = nlohmann::json::parse(read_file(path));
  EXPECT_EQ(j.at("members").at(0).at("file"), "members/a.vvrf");
  EXPECT_EQ(j.at("provenance"), "seeds 1-3");
  EXPECT_TRUE(is_ensemble_file(path));
  EXPECT_FALSE(is_ensemble_file(files[0]));
}

TEST(EnsembleVerifier, DefaultAndPlainPathsAcceptAnEnsembleFile) {
  TempDir dir;
  const auto path = dir.file("pair.vens");
  EnsembleVerifier::write(path, {trained_cnn(dir, "a.vvrf", 1), trained_cnn(dir, "b.vvrf", 2)}, "");
  const char* saved = std::getenv("VERITY_DEFAULT_VERIFIER");
  const std::string saved_value = saved ? saved : "";
  setenv("VERITY_DEFAULT_VERIFIER", path.c_str(), 1);
  auto d = make_verifier("default");
  if (saved) setenv("VERITY_DEFAULT_VERIFIER", saved_value.c_str(), 1);
  else unsetenv("VERITY_DEFAULT_VERIFIER");
  EXPECT_EQ(d->spec(), "ensemble:" + path);
  EXPECT_EQ(load_verifier_file(path)->spec(), "ensemble:" + path);
}

void expect_format_error(const std::string& path, const std::string& needle) {
  try {
    EnsembleVerifier::load(path);
    FAIL() << "no error for " << needle;
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(EnsembleVerifier, RefusesChangedMembersAndBadFields) {
  TempDir dir;
  const auto a = trained_cnn(dir, "a.vvrf", 1), b = trained_cnn(dir, "b.vvrf", 2);
  const auto path = dir.file("pair.vens");
  EnsembleVerifier::write(path, {a, b}, "");
  const std::string good = read_file(path);

  std::ofstream(b, std::ios::app) << 'x';  // a longer member
  expect_format_error(path, "members[1].bytes");
  trained_cnn(dir, "b.vvrf", 7);  // same size, other weights
  expect_format_error(path, "members[1].crc32c");
  fs::remove(b);
  expect_format_error(path, "members[1].file");

  auto edit = [&](auto change) {
    auto j = nlohmann::json::parse(good);
    change(j);
    write_file_atomic(path, j.dump());
  };
  edit([](nlohmann::json& j) { j["version"] = 2; });
  expect_format_error(path, "'version'");
  edit([](nlohmann::json& j) { j["combine"] = "max"; });
  expect_format_error(path, "'combine'");
  edit([](nlohmann::json& j) { j["members"] = nlohmann::json::array(); });
  expect_format_error(path, "'members'");
  edit([](nlohmann::json& j) { j["members"][0].erase("crc32c"); });
  expect_format_error(path, "members[0].crc32c");
  // A name no filesystem can hold (found by fuzz_ensemble): std::filesystem's
  // own error escaped the loader.
  edit([](nlohmann::json& j) { j["members"][0]["file"] = std::string(300, 'm'); });
  expect_format_error(path, "members[0].file: cannot check path");
  write_file_atomic(path, "{\"format\": ");
  expect_format_error(path, "not valid JSON");
  write_file_atomic(path, "{\"format\": 1e999}");  // out_of_range, not parse_error, in the JSON library
  expect_format_error(path, "not valid JSON");
  EXPECT_THROW(make_verifier("ensemble"), ConfigError);
  EXPECT_THROW(make_verifier("ensemble:" + dir.file("missing.vens")), ConfigError);
  EXPECT_THROW(EnsembleVerifier::write(dir.file("x.vens"), {path}, ""), Error);  // not a weights file
}

}  // namespace
