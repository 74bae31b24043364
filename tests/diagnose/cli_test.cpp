// Runs `verity diagnose` end to end on tiny self-written fixtures with the glove encoder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "../cli/run_verity.hpp"
#include "core/io.hpp"

namespace {
namespace fs = std::filesystem;

struct CliFixture : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    if (!fs::exists(std::string(VERITY_SOURCE_DIR) + "/models/glove/verity.json"))
      GTEST_SKIP() << "glove model not converted (scripts/setup_models.sh)";
    dir = fs::temp_directory_path() / ("dg_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir / "corpus");
    std::string corpus;
    const char* docs[] = {"cells divide in the tumor", "the virus infects the liver", "a drug for the heart",
                          "mouse brain neurons", "blood pressure and the heart", "bone growth in children",
                          "lung cancer and smoking", "skin cells and sunlight"};
    for (int i = 0; i < 8; ++i)
      corpus += "{\"_id\":\"d" + std::to_string(i) + "\",\"title\":\"\",\"text\":\"" + docs[i] + "\"}\n";
    verity::write_file_atomic((dir / "corpus/corpus.jsonl").string(), corpus);
    auto line = [](const std::string& q, const std::string& p, const std::string& n, const std::string& src) {
      return "{\"query\":\"" + q + "\",\"positive\":\"" + p + "\",\"negative\":\"" + n + "\",\"source\":\"" + src +
             "\"}\n";
    };
    verity::write_file_atomic((dir / "a.jsonl").string(),
                              line("tumor cells divide", "cells divide in the tumor", "tumor cells die", "lexical") +
                                  line("heart drug", "a drug for the heart", "heart drug trials", "lexical") +
                                  "{\"query\":\"x\",\"positive\":\"y\"}\n");
    verity::write_file_atomic((dir / "b.jsonl").string(),
                              line("tumor cells divide", "cells divide in the tumor", "mitosis in neoplasms", "semantic") +
                                  line("heart drug", "a drug for the heart", "cardiac medication", "semantic"));
    verity::write_file_atomic((dir / "transfer.csv").string(), "source,metric\nlexical,0.2\nsemantic,0.4\n");
    verity::write_file_atomic((dir / "bad.csv").string(), "source,metric\nlexical,0.2\nsemantic;0.4\n");
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }
  std::string base() const {
    return "diagnose --encoder glove --no-cache --idf-corpus " + (dir / "corpus").string() + " --triples " +
           (dir / "a.jsonl").string() + " --triples " + (dir / "b.jsonl").string() + " --s0-docs 8";
  }
};

TEST_F(CliFixture, JsonHasEveryKey) {
  auto r = verity_test::run(base() + " --transfer " + (dir / "transfer.csv").string() +
                            " --bootstrap 20 --matched-reps 5 --matched-bins 2,4 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["sources"].contains("lexical"));
  ASSERT_TRUE(j["sources"].contains("semantic"));
  for (const char* key : {"lexical_residuality", "noncoverage", "cos_qn", "cos_pn", "margin", "rho", "eta", "w"})
    for (const char* stat : {"mean", "std", "q10", "q50", "q90"})
      EXPECT_TRUE(j["sources"]["lexical"][key].contains(stat)) << key << "." << stat;
  for (const char* key : {"ambiguity_rate", "mnrl_loss", "eci_sem", "eci_sem_linear", "count", "skipped"})
    EXPECT_TRUE(j["sources"]["semantic"].contains(key)) << key;
  EXPECT_EQ(j["sources"]["lexical"]["count"], 2);
  EXPECT_EQ(j["sources"]["lexical"]["skipped"], 1);  // the line without a negative
  EXPECT_EQ(j["sources"]["semantic"]["skipped"], 0);
  EXPECT_LT(j["sources"]["lexical"]["lexical_residuality"]["mean"].get<double>(),
            j["sources"]["semantic"]["lexical_residuality"]["mean"].get<double>());
  EXPECT_TRUE(j["agreement"]["diagnostics"]["eci_sem"]["kendall_tau_b"].contains("ci_low"));
  EXPECT_EQ(j["agreement"]["bootstrap"], 20);
  EXPECT_EQ(j["matched"]["resolutions"].size(), 2u);
}

TEST_F(CliFixture, BadTransferLineNamesFileAndLine) {
  auto r = verity_test::run(base() + " --transfer " + (dir / "bad.csv").string() + " --json");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find((dir / "bad.csv").string() + ":3"), std::string::npos) << r.err;
}

TEST_F(CliFixture, ControlsNeedADataset) {
  auto r = verity_test::run(base() + " --controls --json");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--controls needs --dataset"), std::string::npos) << r.err;
}

}  // namespace
