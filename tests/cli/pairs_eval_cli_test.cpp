// verity pairs-eval end to end on a tiny fixture: the report's keys, scorers
// named as given, relative paths in what it records, and bad input. Needs
// models/use-lite (required when VERITY_REQUIRE_MODELS is set, skipped otherwise).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_verity.hpp"

namespace fs = std::filesystem;

namespace {

struct Fixture {
  fs::path dir = fs::temp_directory_path() / ("verity_pairs_eval_" + std::to_string(::getpid()));
  std::string pairs = (dir / "probe" / "pairs.jsonl").string();
  Fixture() {
    fs::remove_all(dir);
    fs::create_directories(dir / "probe");
    std::ofstream(pairs) << R"({"a": "Is port 6379 open by default?", "b": "Is the port 6379 open by default?", "label": 1})" "\n"
                         << R"({"a": "Is port 6379 open by default?", "b": "Is port 6379 closed by default?", "label": 0})" "\n"
                         << R"({"a": "How do I reset my password?", "b": "How can I reset my password?", "label": 1})" "\n"
                         << R"({"a": "The dog bit the man.", "b": "The man bit the dog.", "label": 0})" "\n";
  }
  ~Fixture() { fs::remove_all(dir); }
};

}  // namespace

TEST(PairsEvalCli, ReportsEveryScorerUnderTheSpecGivenWithRelativePaths) {
  if (!verity_test::have_use_lite()) {
    if (std::getenv("VERITY_REQUIRE_MODELS")) FAIL() << "models/use-lite missing";
    GTEST_SKIP() << "models/use-lite not converted (scripts/setup_models.sh)";
  }
  Fixture fx;
  const auto scores = (fx.dir / "scores.jsonl").string();
  auto r = verity_test::run("pairs-eval --data " + fx.pairs + " --verifier cosine --verifier f1 --verifier default" +
                            " --scores-out " + scores + " --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("scorers").size(), 3u);
  for (const char* name : {"cosine", "f1", "default"}) {
    ASSERT_TRUE(j.at("scorers").contains(name)) << name;
    const auto& s = j.at("scorers").at(name);
    const auto& m = s.at("files").at("probe/pairs");
    for (const char* key : {"auc", "ap", "accuracy", "best_accuracy", "ece", "recall_at_precision_0.90",
                            "recall_at_precision_0.95", "count"})
      EXPECT_TRUE(m.contains(key)) << name << " lacks " << key;
    EXPECT_EQ(m.at("count").get<int>(), 4) << name;
    EXPECT_TRUE(s.contains("overall") && s.contains("macro_auc") && s.contains("spec")) << name;
  }
  // The default is the calibrated F5: verdicts at its own threshold; its file
  // and the encoder are named without the source tree's absolute path.
  const auto& d = j.at("scorers").at("default");
  EXPECT_TRUE(d.at("calibrated").get<bool>());
  EXPECT_TRUE(d.at("threshold").is_number());
  EXPECT_TRUE(d.at("files").at("probe/pairs").at("accuracy").is_number());
  EXPECT_EQ(d.at("spec").get<std::string>().rfind("f5:", 0), 0u) << d.at("spec");
  EXPECT_TRUE(j.at("scorers").at("cosine").at("files").at("probe/pairs").at("accuracy").is_null());
  const std::string source_dir = VERITY_SOURCE_DIR;
  for (const auto& text : {d.at("spec").get<std::string>(), j.at("encoder").get<std::string>()}) {
    EXPECT_EQ(text.find(source_dir), std::string::npos) << text;
    EXPECT_EQ(text.find(":/"), std::string::npos) << text;
  }
  EXPECT_EQ(j.at("encoder_identity").get<std::string>().rfind("use-lite:", 0), 0u);
  EXPECT_EQ(d.at("encoder_recorded"), j.at("encoder_identity"));
  // --scores-out names the scorers as the report does: a line per pair and scorer.
  std::ifstream in(scores);
  size_t lines = 0, of_default = 0;
  for (std::string line; std::getline(in, line); ++lines) of_default += nlohmann::json::parse(line).at("scorer") == "default";
  EXPECT_EQ(lines, 12u);
  EXPECT_EQ(of_default, 4u);
  // One scorer: its results at the top level too, under the name given.
  r = verity_test::run("pairs-eval --data " + fx.pairs + " --verifier default --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("verifier"), "default");
}

TEST(PairsEvalCli, BadInputIsAClearError) {
  Fixture fx;
  auto r = verity_test::run("pairs-eval --data " + fx.pairs + " --verifier f1 --verifier f1 --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("given twice"), std::string::npos) << r.err;
  const auto bad = (fx.dir / "probe" / "bad.jsonl").string();
  std::ofstream(bad) << R"({"a": "x", "b": "y", "label": 1})" "\n" << R"({"a": "x", "label": 1})" "\n";
  r = verity_test::run("pairs-eval --data " + bad + " --verifier f1 --quiet");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(":2"), std::string::npos) << r.err;
  const auto empty = (fx.dir / "probe" / "empty.jsonl").string();
  std::ofstream(empty) << "";
  r = verity_test::run("pairs-eval --data " + empty + " --verifier f1 --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("empty.jsonl: no pairs"), std::string::npos) << r.err;
}

TEST(PairsEvalCli, OneLabelOnlyLeavesTheAucUndefined) {
  if (!verity_test::have_use_lite()) {
    if (std::getenv("VERITY_REQUIRE_MODELS")) FAIL() << "models/use-lite missing and VERITY_REQUIRE_MODELS is set";
    GTEST_SKIP() << "models/use-lite not converted (scripts/setup_models.sh)";
  }
  Fixture fx;
  const auto same = (fx.dir / "probe" / "same.jsonl").string();
  std::ofstream(same) << R"({"a": "How do I reset my password?", "b": "How can I reset my password?", "label": 1})" "\n"
                      << R"({"a": "Is it raining?", "b": "Is it raining now?", "label": 1})" "\n";
  auto r = verity_test::run("pairs-eval --data " + same + " --data " + fx.pairs + " --verifier f1 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& one = j["files"]["probe/same"];
  EXPECT_TRUE(one["auc"].is_null()) << one;
  EXPECT_TRUE(one["ap"].is_number()) << one;  // defined: there are positives
  EXPECT_EQ(one["best_accuracy"], 1.0);
  EXPECT_NE(r.err.find("every pair is labelled 1"), std::string::npos) << r.err;
  // The macro AUC is the other file's alone.
  EXPECT_EQ(j["macro_auc"], j["files"]["probe/pairs"]["auc"]);
}
