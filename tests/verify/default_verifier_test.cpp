// make_verifier("default"): the committed trained verifier, or the file named
// by $VERITY_DEFAULT_VERIFIER.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "verify/alignment_verifier.hpp"
#include "verify/learned.hpp"
#include "verify/verifier.hpp"

namespace fs = std::filesystem;
using namespace verity;
using namespace verity::verify;

namespace {

struct EnvGuard {
  EnvGuard() {
    if (const char* v = std::getenv("VERITY_DEFAULT_VERIFIER")) saved = v, had = true;
  }
  ~EnvGuard() {
    if (had) setenv("VERITY_DEFAULT_VERIFIER", saved.c_str(), 1);
    else unsetenv("VERITY_DEFAULT_VERIFIER");
  }
  std::string saved;
  bool had = false;
};

SimilarityMap diagonal(size_t n) {
  std::vector<float> v(n * n, 0.1f);
  for (size_t i = 0; i < n; ++i) v[i * n + i] = 0.9f;
  return SimilarityMap(n, n, v);
}

TEST(DefaultVerifier, EnvVariableSelectsTheFile) {
  EnvGuard guard;
  const auto path = (fs::temp_directory_path() / ("verity_default_" + std::to_string(::getpid()) + ".vvrf")).string();
  CnnConfig c;
  c.map_size = 16;
  c.channels = {4, 4, 4};
  auto v = LearnedVerifier::untrained_cnn(c, 11);
  v->mark_trained("test fixture");
  v->save(path);
  setenv("VERITY_DEFAULT_VERIFIER", path.c_str(), 1);
  auto d = make_verifier("default");
  EXPECT_EQ(d->spec(), "f3:" + path);
  EXPECT_TRUE(d->is_trained());
  EXPECT_FLOAT_EQ(d->score(diagonal(5)), v->score(diagonal(5)));
  fs::remove(path);
}

TEST(DefaultVerifier, MissingFileIsAConfigErrorNamingIt) {
  EnvGuard guard;
  setenv("VERITY_DEFAULT_VERIFIER", "/nonexistent/default.vvrf", 1);
  try {
    make_verifier("default");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/default.vvrf"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_verifier("default:x"), ConfigError);
}

TEST(DefaultVerifier, KindIsListed) {
  bool listed = false;
  for (const auto& k : verifier_kinds()) listed |= k.name == "default";
  EXPECT_TRUE(listed);
}

// The committed default: a trained, calibrated F5 that records its encoder
// and how it was trained, small enough for the repository.
TEST(DefaultVerifier, CommittedFileIsACalibratedF5) {
  EnvGuard guard;
  unsetenv("VERITY_DEFAULT_VERIFIER");
  const auto path = std::string(VERITY_SOURCE_DIR) + "/assets/verifiers/default.valn";
  ASSERT_TRUE(fs::exists(path)) << path;
  auto d = make_verifier("default");
  EXPECT_EQ(d->spec(), "f5:" + path);
  ASSERT_TRUE(d->is_trained());
  EXPECT_TRUE(d->uses_context());
  ASSERT_TRUE(d->default_threshold().has_value());
  EXPECT_GT(*d->default_threshold(), 0.0f);
  EXPECT_LT(*d->default_threshold(), 1.0f);
  EXPECT_EQ(d->encoder().rfind("use-lite:", 0), 0u) << d->encoder();
  // How it was trained, and each recalibration since, the latest outermost
  // (calibrate keeps the file's record under "trained").
  const auto provenance = nlohmann::json::parse(AlignmentVerifier::load(path)->provenance());
  std::vector<nlohmann::json> recalibrations;
  const nlohmann::json* trained = &provenance;
  while (trained->contains("recalibrated")) {
    recalibrations.push_back(trained->at("recalibrated"));
    EXPECT_FALSE(recalibrations.back().at("argv").get<std::string>().empty());
    trained = &trained->at("trained");
  }
  EXPECT_FALSE(trained->at("argv").get<std::string>().empty());
  ASSERT_FALSE(recalibrations.empty());
  const auto added = [&](const char* source) {
    return std::find_if(recalibrations.begin(), recalibrations.end(), [&](const auto& r) {
      return r.contains("added_antonyms") && r.at("added_antonyms").at("source") == source;
    });
  };
  const auto with_lexicon = added("relations+directions"), with_spatial = added("spatial"), with_time = added("time");
  ASSERT_NE(with_lexicon, recalibrations.end());
  ASSERT_NE(with_spatial, recalibrations.end());
  ASSERT_NE(with_time, recalibrations.end());
  EXPECT_LT(with_spatial, with_lexicon) << "the spatial relation changes came later";
  EXPECT_LT(with_time, with_spatial) << "the time changes came after";
  // Then its lexicon was read in whole words, the network unchanged.
  const auto whole_words = std::find_if(recalibrations.begin(), recalibrations.end(),
                                        [](const auto& r) { return r.value("whole_words", false); });
  ASSERT_NE(whole_words, recalibrations.end());
  EXPECT_LT(whole_words, with_time) << "whole words came last";
  EXPECT_TRUE(AlignmentVerifier::load(path)->config().whole_words);
  EXPECT_LE(fs::file_size(path), 5u * 1024 * 1024);
  // Its lexicon holds the relation and direction opposites and the spatial
  // relation and time changes beside WordNet's antonyms, as its record says.
  const auto f5 = AlignmentVerifier::load(path);
  for (const auto& list :
       {relation_antonyms(), direction_antonyms(), spatial_relation_changes(), time_relation_changes()})
    for (const auto& [x, y] : list)
      EXPECT_TRUE(f5->lexicon().antonyms(token_identity("\u2581" + x), token_identity("\u2581" + y)))
          << x << " / " << y;
  // And USE-lite's spellings of the forms it splits, so "disable" ("\u2581dis" "able") faces "enable".
  const auto& spellings = f5->lexicon().spellings();
  // The latest step that spelled them counted them all.
  const auto latest_spelling = std::find_if(recalibrations.begin(), recalibrations.end(),
                                            [](const auto& r) { return r.contains("spelled_forms"); });
  ASSERT_NE(latest_spelling, recalibrations.end());
  EXPECT_EQ(latest_spelling->at("spelled_forms").get<size_t>(), spellings.size());
  EXPECT_LT(with_lexicon->at("spelled_forms").get<size_t>(), spellings.size()) << "the later lists added some";
  const auto disable = std::find_if(spellings.begin(), spellings.end(), [](const auto& s) { return s.first == "disable"; });
  ASSERT_NE(disable, spellings.end());
  EXPECT_EQ(disable->second, (std::vector<std::string>{"\u2581dis", "able"}));
  const auto run = f5->lexicon().spelled_at(token_identities(disable->second), 0);
  EXPECT_EQ(run.length, 2u);
  EXPECT_TRUE(f5->lexicon().antonym_words(run.word, f5->lexicon().word_of(token_identity("\u2581enable"))));
  // A number word it splits is that number: "sixty" ("\u2581six" "ty") is not "six".
  const auto sixty = std::find_if(spellings.begin(), spellings.end(), [](const auto& s) { return s.first == "sixty"; });
  ASSERT_NE(sixty, spellings.end());
  EXPECT_EQ(f5->lexicon().spelled_at(token_identities(sixty->second), 0).number, Lexicon::number_identity("sixty"));
  // Texts the same but for case and punctuation are floored where a rule says so, and the record counts them.
  ASSERT_TRUE(f5->calibration().has_value());
  EXPECT_GT(f5->calibration()->surface_floor, f5->calibration()->threshold);
  const auto with_floor = std::find_if(recalibrations.begin(), recalibrations.end(),
                                       [](const auto& r) { return r.contains("surface_floor"); });
  ASSERT_NE(with_floor, recalibrations.end());
  EXPECT_GT(with_floor->at("surface_floor").at("pairs").get<size_t>(), 0u);
  // A capitalized word swapped for another ("Python" / "Java"), two words trading places ("from Boston to
  // Denver" / "from Denver to Boston") and a changed number ("thirteen" / "thirty") are capped under the
  // threshold, and the record counts them.
  for (const char* cap : {"name_cap", "transposition_cap", "number_cap"}) {
    const auto with_cap = std::find_if(recalibrations.begin(), recalibrations.end(),
                                       [&](const auto& r) { return r.contains(cap); });
    ASSERT_NE(with_cap, recalibrations.end()) << cap;
    EXPECT_GT(with_cap->at(cap).at("pairs").get<size_t>(), 0u) << cap;
  }
  EXPECT_LT(f5->calibration()->name_cap, f5->calibration()->threshold);
  EXPECT_LT(f5->calibration()->transposition_cap, f5->calibration()->threshold);
  EXPECT_LT(f5->calibration()->number_cap, f5->calibration()->threshold);
  // The earlier F3 ensemble stays loadable for comparisons.
  auto old = make_verifier("ensemble:" + std::string(VERITY_SOURCE_DIR) + "/assets/verifiers/f3-ensemble.vens");
  EXPECT_TRUE(old->is_trained());
}

}  // namespace
