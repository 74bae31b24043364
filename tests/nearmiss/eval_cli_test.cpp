// verity nearmiss-eval end to end on a tiny fixture; needs models/use-lite
// (required when VERITY_REQUIRE_MODELS is set, skipped otherwise).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../cli/run_verity.hpp"
#include "core/error.hpp"
#include "nearmiss/evaluate.hpp"

namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("verity_nm_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string write_fixture() {
  std::string path = temp_path("triples.jsonl");
  std::ofstream f(path);
  f << R"({"query": "The dog bit the man.", "positive": "The man was bitten by the dog.", "negative": "The man bit the dog.", "type": "role_swap", "source": "fixture"})" "\n"
    << R"({"query": "The cup is left of the plate.", "positive": "The plate is right of the cup.", "negative": "The cup is right of the plate.", "type": "spatial", "source": "fixture"})" "\n"
    << R"({"query": "The vaccine reduces mortality.", "positive": "The vaccine lowers mortality.", "negative": "The vaccine does not reduce mortality.", "type": "negation", "source": "fixture"})" "\n";
  return path;
}

}  // namespace

TEST(NearmissEvalCli, BadDataLineNamesFileAndLine) {
  std::string path = temp_path("bad.jsonl");
  {
    std::ofstream f(path);
    f << R"({"query": "a", "positive": "b", "negative": "c", "type": "negation"})" "\n"
      << R"({"query": "a", "positive": "b"})" "\n";
  }
  auto r = verity_test::run("nearmiss-eval --data " + path + " --verifier f1 --json --quiet");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(path + ":2"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  fs::remove(path);
}

TEST(NearmissEvalCli, UnknownVerifierIsAnError) {
  std::string path = write_fixture();
  auto r = verity_test::run("nearmiss-eval --data " + path + " --verifier f9 --quiet");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("f9"), std::string::npos) << r.err;
  fs::remove(path);
}

TEST(NearmissEvalCli, ReportsKeysForF1AndNone) {
  if (!verity_test::have_use_lite()) {
    if (std::getenv("VERITY_REQUIRE_MODELS")) FAIL() << "models/use-lite missing";
    GTEST_SKIP() << "models/use-lite not converted (scripts/setup_models.sh)";
  }
  std::string path = write_fixture();
  for (const char* verifier : {"f1", "none"}) {
    auto r = verity_test::run("nearmiss-eval --data " + path + " --data " + path +
                              " --encoder use-lite --verifier " + verifier + " --json --quiet");
    ASSERT_EQ(r.status, 0) << verifier << ": " << r.err;
    auto j = nlohmann::json::parse(r.out);
    for (const char* key : {"pairwise_acc", "auc", "count", "by_type", "by_source", "verifier", "encoder", "data"})
      EXPECT_TRUE(j.contains(key)) << verifier << " lacks " << key;
    EXPECT_EQ(j["count"], 6);
    EXPECT_EQ(j["verifier"], verifier);
    EXPECT_EQ(j["data"].size(), 2u);
    for (const char* type : {"role_swap", "spatial", "negation"}) {
      ASSERT_TRUE(j["by_type"].contains(type)) << type;
      EXPECT_EQ(j["by_type"][type]["count"], 2);
      double acc = j["by_type"][type]["pairwise_acc"];
      EXPECT_TRUE(acc == 0.0 || acc == 1.0) << "duplicated triples score identically";
    }
    EXPECT_EQ(j["by_source"]["fixture"]["count"], 6);
    // --scores-out: one line per triple, in input order, agreeing with the summary.
    const std::string scores_path = temp_path(std::string("scores_") + verifier + ".jsonl");
    auto again = verity_test::run("nearmiss-eval --data " + path + " --encoder use-lite --verifier " + verifier +
                                  " --scores-out " + scores_path + " --json --quiet");
    ASSERT_EQ(again.status, 0) << again.err;
    std::ifstream lines(scores_path);
    std::string line;
    size_t n = 0, correct = 0;
    while (std::getline(lines, line)) {
      auto row = nlohmann::json::parse(line);
      EXPECT_EQ(row["index"], n);
      EXPECT_EQ(row["correct"], row["score_positive"].get<double>() > row["score_negative"].get<double>());
      correct += row["correct"].get<bool>();
      ++n;
    }
    EXPECT_EQ(n, 3u);
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(again.out)["pairwise_acc"].get<double>(), correct / 3.0);
    fs::remove(scores_path);
    double auc = j["auc"];
    EXPECT_GE(auc, 0.0);
    EXPECT_LE(auc, 1.0);
  }
  fs::remove(path);
}

TEST(NearmissEval, VerifierSpecs) {
  EXPECT_EQ(verity::nearmiss::make_eval_verifier("none"), nullptr);
  EXPECT_EQ(verity::nearmiss::make_eval_verifier("f1")->spec(), "f1");
  EXPECT_THROW(verity::nearmiss::make_eval_verifier("/nonexistent/weights.vvrf"), verity::Error);
}
