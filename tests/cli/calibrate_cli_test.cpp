// verity calibrate --name-cap and --transposition-cap end to end on the
// shipped default verifier and USE-lite, whose pieces keep case: each counts
// the dev pairs its rule picks (a swapped name; two words trading places),
// caps their P at (same + 1) / (pairs + 2), and with --keep-calibration moves
// no other score. Needs models/use-lite (required
// when VERITY_REQUIRE_MODELS is set, skipped otherwise).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_verity.hpp"
#include "verify/alignment_verifier.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<double> scores_of(const std::string& path) {
  std::vector<double> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line).at("score").get<double>());
  return out;
}

// A cap fitted by `flag` with --keep-calibration on six pairs of the source
// "rules": rows 0-2 are what the rule picks (one same-meaning), rows 3-5 are
// not. The cap is (1 + 1) / (3 + 2); only rows 0-2 move.
void expect_kept_cap(const std::string& flag, const std::string& key, float verity::verify::Calibration::*cap,
                     const std::string& rows) {
  if (!verity_test::have_use_lite()) {
    if (std::getenv("VERITY_REQUIRE_MODELS")) FAIL() << "models/use-lite missing";
    GTEST_SKIP() << "models/use-lite not converted (scripts/setup_models.sh)";
  }
  const fs::path dir = fs::temp_directory_path() / ("verity_calibrate_" + key + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "rules");
  const auto pairs = (dir / "rules" / "dev.jsonl").string();  // the source "rules", as its folder says
  std::ofstream(pairs) << rows;
  const std::string before = std::string(VERITY_SOURCE_DIR) + "/assets/verifiers/default.valn";
  const auto after = (dir / "capped.valn").string();
  auto r = verity_test::run("calibrate --verifier " + before + " --dev-pairs " + pairs +
                            " --encoder use-lite --keep-calibration " + flag + " --json --quiet --out " + after);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  const auto& fit = summary.at(key);
  EXPECT_EQ(fit.at("pairs"), 3);
  EXPECT_EQ(fit.at("same"), 1);
  EXPECT_DOUBLE_EQ(fit.at("cap").get<double>(), 2.0 / 5.0);  // (same + 1) / (pairs + 2)
  EXPECT_EQ(fit.at("by_group").at("rules").at("pairs"), 3);
  EXPECT_EQ(summary.at("calibration").at("kept"), true);
  const auto old = verity::verify::AlignmentVerifier::load(before), fitted = verity::verify::AlignmentVerifier::load(after);
  ASSERT_TRUE(old->calibration() && fitted->calibration());
  auto kept = *fitted->calibration();
  EXPECT_FLOAT_EQ(kept.*cap, 0.4f);
  kept.*cap = (*old->calibration()).*cap;
  EXPECT_EQ(verity::verify::calibration_json(kept), verity::verify::calibration_json(*old->calibration()));
  EXPECT_EQ(nlohmann::json::parse(fitted->provenance()).at("recalibrated").at(key).at("pairs"), 3);

  // Scored: the picked pairs at most the cap, every other pair as before.
  std::vector<std::vector<double>> scores;
  for (const auto& v : {before, after}) {
    const auto out = (dir / "scores.jsonl").string();
    r = verity_test::run("pairs-eval --data " + pairs + " --verifier f5:" + v + " --scores-out " + out +
                         " --json --quiet");
    ASSERT_EQ(r.status, 0) << r.err;
    scores.push_back(scores_of(out));
    ASSERT_EQ(scores.back().size(), 6u);
  }
  for (size_t i = 0; i < 3; ++i) EXPECT_LE(scores[1][i], 0.4 + 1e-6) << i;
  for (size_t i = 3; i < 6; ++i) EXPECT_DOUBLE_EQ(scores[1][i], scores[0][i]) << i;
  fs::remove_all(dir);
}

TEST(CalibrateCli, NameCapOnAKeptCalibration) {
  // Rows 0-2 swap a name; 3 is a near spelling, 4 a paraphrase, 5 swaps a lower-case word.
  expect_kept_cap("--name-cap", "name_cap", &verity::verify::Calibration::name_cap,
                  R"({"a": "How do I install Python on Windows?", "b": "How do I install Java on Windows?", "label": 0})" "\n"
                  R"({"a": "What is the weather in Canada today?", "b": "what is the weather in Germany today", "label": 0})" "\n"
                  R"({"a": "Do you tip your Deliveroo courier?", "b": "Do you tip your Glovo courier?", "label": 1})" "\n"
                  R"({"a": "He studied with Willi Muenzenberg.", "b": "He studied with Willy Muenzenberg.", "label": 1})" "\n"
                  R"({"a": "How do I reset my password?", "b": "How can I reset my password?", "label": 1})" "\n"
                  R"({"a": "How do I cook quinoa?", "b": "How do I cook couscous?", "label": 0})" "\n");
}

TEST(CalibrateCli, TranspositionCapOnAKeptCalibration) {
  // Rows 0-2: two words trade places; 3 a coordination the other way round,
  // 4 two neighbours trading places, 5 a paraphrase.
  expect_kept_cap("--transposition-cap", "transposition_cap", &verity::verify::Calibration::transposition_cap,
                  R"({"a": "How do I convert Celsius to Fahrenheit?", "b": "How do I convert Fahrenheit to Celsius?", "label": 0})" "\n"
                  R"({"a": "Are cats afraid of dogs?", "b": "are dogs afraid of cats", "label": 0})" "\n"
                  R"({"a": "How far is Paris from Rome?", "b": "How far is Rome from Paris?", "label": 1})" "\n"
                  R"({"a": "Should I learn Python or Java first?", "b": "Should I learn Java or Python first?", "label": 1})" "\n"
                  R"({"a": "How can I learn chess fast online?", "b": "How can I learn chess online fast?", "label": 1})" "\n"
                  R"({"a": "How do I reset my password?", "b": "How can I reset my password?", "label": 1})" "\n");
}

TEST(CalibrateCli, NumberCapOnAKeptCalibration) {
  // Rows 0-2 change quantities (a number word, a unit written as a word,
  // two numbers); 3 writes a number of two words as digits, 4 changes a
  // number and a word, 5 is a paraphrase.
  expect_kept_cap("--number-cap", "number_cap", &verity::verify::Calibration::number_cap,
                  R"({"a": "The meeting lasted thirteen minutes.", "b": "The meeting lasted thirty minutes.", "label": 0})" "\n"
                  R"({"a": "Is a 10 kg bag allowed?", "b": "is a 10 lb bag allowed", "label": 0})" "\n"
                  R"({"a": "Walk 5 km in 40 minutes", "b": "Walk 6 km in 50 minutes", "label": 1})" "\n"
                  R"({"a": "The company has twenty five employees.", "b": "The company has 25 employees.", "label": 1})" "\n"
                  R"({"a": "Is port 6379 open by default?", "b": "Is port 6380 closed by default?", "label": 0})" "\n"
                  R"({"a": "How do I reset my password?", "b": "How can I reset my password?", "label": 1})" "\n");
}

}  // namespace
