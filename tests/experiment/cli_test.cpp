// Runs `verity experiment transfer` end to end on a tiny self-written BEIR
// fixture with GloVe (2 training steps per run), twice: the rerun must skip
// every finished run. Skips when the glove model is not converted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "../cli/run_verity.hpp"
#include "core/io.hpp"

namespace {
namespace fs = std::filesystem;
using nlohmann::json;

struct ExperimentCli : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    if (!fs::exists(std::string(VERITY_SOURCE_DIR) + "/models/glove/verity.json"))
      GTEST_SKIP() << "glove model not converted (scripts/setup_models.sh)";
    dir = fs::temp_directory_path() / ("exp_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "beir/qrels");
    const char* docs[] = {"cells divide in the tumor",    "the virus infects the liver", "a drug for the heart",
                          "mouse brain neurons",          "blood pressure and the heart", "bone growth in children",
                          "lung cancer and smoking",      "skin cells and sunlight"};
    std::string corpus;
    for (int i = 0; i < 8; ++i)
      corpus += "{\"_id\":\"d" + std::to_string(i) + "\",\"title\":\"\",\"text\":\"" + docs[i] + "\"}\n";
    verity::write_file_atomic((dir / "beir/corpus.jsonl").string(), corpus);
    verity::write_file_atomic((dir / "beir/queries.jsonl").string(),
                              "{\"_id\":\"q1\",\"text\":\"tumor cells\"}\n{\"_id\":\"q2\",\"text\":\"heart drug\"}\n"
                              "{\"_id\":\"q3\",\"text\":\"liver virus\"}\n");
    verity::write_file_atomic((dir / "beir/qrels/test.tsv").string(),
                              "query-id\tcorpus-id\tscore\nq1\td0\t1\nq2\td2\t1\nq3\td1\t1\n");
    auto line = [](const std::string& q, const std::string& p, const std::string& n) {
      return "{\"query\":\"" + q + "\",\"positive\":\"" + p + "\",\"negative\":\"" + n + "\"}\n";
    };
    std::string a, b;
    for (int i = 0; i < 3; ++i) {
      a += line("tumor cells", docs[0], docs[7]) + line("heart drug", docs[2], docs[4]);
      b += line("tumor cells", docs[0], docs[3]) + line("heart drug", docs[2], docs[5]);
    }
    verity::write_file_atomic((dir / "lexical.jsonl").string(), a);
    verity::write_file_atomic((dir / "random.jsonl").string(), b);
    json cfg = {{"out_dir", "out"},
                {"backbone", "glove"},
                {"seeds", {1}},
                {"sources", {{"lexical", "lexical.jsonl"}, {"random", "random.jsonl"}}},
                {"train", {{"max_steps", 2}, {"batch_size", 2}, {"learning_rate", 1e-3}, {"threads", 1}}},
                {"eval", {{{"dir", "beir"}, {"name", "tiny"}}}},
                {"idf_corpus", "beir"},
                {"bootstrap", 5},
                {"matched_reps", 2}};
    verity::write_file_atomic((dir / "transfer.json").string(), cfg.dump());
    cfg["train"]["max_steps"] = -1;
    verity::write_file_atomic((dir / "bad.json").string(), cfg.dump());
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }
};

TEST_F(ExperimentCli, TransferRunsThenResumesWithoutRetraining) {
  auto first = verity_test::run("experiment transfer --config " + (dir / "transfer.json").string() + " --json");
  ASSERT_EQ(first.status, 0) << first.err;
  auto s = json::parse(first.out);
  EXPECT_EQ(s["executed_runs"], 2);
  EXPECT_EQ(s["skipped_runs"], 0);
  EXPECT_TRUE(s["observed"].contains("lexical"));
  EXPECT_TRUE(s["agreement"].contains("lexical_residuality"));
  EXPECT_TRUE(fs::exists(dir / "out/runs/lexical-s1.json"));
  EXPECT_TRUE(fs::exists(dir / "out/transfer.csv"));
  auto second = verity_test::run("experiment transfer --config " + (dir / "transfer.json").string() + " --json");
  ASSERT_EQ(second.status, 0) << second.err;
  auto t = json::parse(second.out);
  EXPECT_EQ(t["executed_runs"], 0);
  EXPECT_EQ(t["skipped_runs"], 2);
  EXPECT_EQ(t["observed"], s["observed"]);  // the recorded results
}

TEST_F(ExperimentCli, BadConfigNamesTheField) {
  auto r = verity_test::run("experiment transfer --config " + (dir / "bad.json").string() + " --json");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("\"train.max_steps\""), std::string::npos) << r.err;
}

TEST_F(ExperimentCli, GeometryPrintsOneJsonObject) {
  std::string lines;
  const char* subjects[] = {"cells", "viruses", "drugs", "mice", "neurons", "bones"};
  for (int i = 0; i < 12; ++i) {
    std::string s = subjects[i % 6], v = i < 6 ? "divide" : "grow";
    lines += "{\"query\":\"the " + s + " " + v + "\",\"positive\":\"" + s + " " + v + "\",\"negative\":\"the " + s +
             " do not " + v + "\",\"type\":\"negation\"}\n";
  }
  verity::write_file_atomic((dir / "nm.jsonl").string(), lines);
  auto r = verity_test::run("geometry --encoder glove --data " + (dir / "nm.jsonl").string() + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto g = json::parse(r.out);  // exactly one object
  EXPECT_EQ(g["all"]["count"], 12);
  EXPECT_TRUE(g["by_type"].contains("negation"));
  EXPECT_LE(g["all"]["cos_edit"]["mean"].get<double>(), 1.0);
}

}  // namespace
