#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"
#include "experiment/config.hpp"
#include "experiment/run_store.hpp"

namespace verity::experiment {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

json tradeoff_base() {
  return {{"out_dir", "out"},
          {"backbones", {"glove"}},
          {"seeds", {1, 2}},
          {"standard_triples", "std.jsonl"},
          {"structural_triples", "/abs/nm.jsonl"},
          {"structural_ratio", 0.25},
          {"train", {{"max_steps", 10}, {"batch_size", 8}}},
          {"eval", {{{"dir", "beir/cranfield"}}, {{"dir", "beir/scifact"}, {"in_domain", true}}}},
          {"nearmiss_test", "nm/test.jsonl"}};
}

std::string error_of(const json &j, bool transfer = false) {
  try {
    if (transfer)
      parse_transfer_config_text(j.dump(), "/cfg/x.json");
    else
      parse_tradeoff_config_text(j.dump(), "/cfg/x.json");
  } catch (const ConfigError &e) {
    return e.what();
  }
  return "";
}

TEST(ExperimentConfig, ParsesTradeoffAndResolvesPaths) {
  auto c = parse_tradeoff_config_text(tradeoff_base().dump(), "/cfg/x.json");
  EXPECT_EQ(c.out_dir, "/cfg/out");
  EXPECT_EQ(c.standard_triples, "/cfg/std.jsonl");
  EXPECT_EQ(c.structural_triples, "/abs/nm.jsonl");
  EXPECT_EQ(c.seeds, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(c.train.max_steps, 10u);
  EXPECT_EQ(c.train.batch_size, 8u);
  ASSERT_EQ(c.eval.size(), 2u);
  EXPECT_EQ(c.eval[0].name, "cranfield");
  EXPECT_FALSE(c.eval[0].in_domain);
  EXPECT_TRUE(c.eval[1].in_domain);
  EXPECT_DOUBLE_EQ(c.structural_ratio, 0.25);
}

TEST(ExperimentConfig, ErrorsNameTheField) {
  auto j = tradeoff_base();
  j["train"]["max_steps"] = -3;
  EXPECT_NE(error_of(j).find("\"train.max_steps\""), std::string::npos) << error_of(j);
  j = tradeoff_base();
  j.erase("backbones");
  EXPECT_NE(error_of(j).find("\"backbones\": missing"), std::string::npos) << error_of(j);
  j = tradeoff_base();
  j["structural_ratio"] = 1.5;
  EXPECT_NE(error_of(j).find("\"structural_ratio\""), std::string::npos) << error_of(j);
  j = tradeoff_base();
  j["eval"][1]["dir"] = 7;
  EXPECT_NE(error_of(j).find("\"eval[1].dir\""), std::string::npos) << error_of(j);
  j = tradeoff_base();
  j["trian"] = json::object();  // typo: unknown fields are errors
  EXPECT_NE(error_of(j).find("\"trian\": unknown field"), std::string::npos) << error_of(j);
  j = tradeoff_base();
  j["seeds"] = {1, 1};
  EXPECT_NE(error_of(j).find("\"seeds[1]\": repeated"), std::string::npos) << error_of(j);
  EXPECT_EQ(error_of(tradeoff_base()), "");
  try {
    parse_tradeoff_config_text("{not json", "/cfg/bad.json");
    FAIL();
  } catch (const ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("/cfg/bad.json"), std::string::npos);
  }
}

// A number beyond double's range is the JSON library's out_of_range, not its
// parse_error: it must still be a ConfigError naming the file.
TEST(ExperimentConfig, OutOfRangeNumberIsAConfigError) {
  try {
    parse_tradeoff_config_text(R"({"structural_ratio": 1e999})", "/cfg/huge.json");
    FAIL();
  } catch (const ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("/cfg/huge.json: not valid JSON"), std::string::npos) << e.what();
  }
}

TEST(ExperimentConfig, TransferNeedsTwoSources) {
  json j = {{"out_dir", "o"},
            {"backbone", "glove"},
            {"sources", {{"bm25", "a.jsonl"}}},
            {"eval", {{{"dir", "c"}}}},
            {"idf_corpus", "c"}};
  EXPECT_NE(error_of(j, true).find("\"sources\""), std::string::npos) << error_of(j, true);
  j["sources"]["unrelated"] = "b.jsonl";
  auto c = parse_transfer_config_text(j.dump(), "/cfg/x.json");
  ASSERT_EQ(c.sources.size(), 2u);
  EXPECT_EQ(c.sources[0].name, "bm25");
  EXPECT_EQ(c.sources[1].triples, "/cfg/b.jsonl");
  EXPECT_EQ(c.seeds.size(), 3u);  // default 1, 2, 3
  j["sources"]["bm25"] = 3;
  EXPECT_NE(error_of(j, true).find("\"sources.bm25\""), std::string::npos) << error_of(j, true);
}

struct TempDir {
  std::string path;
  TempDir() {
    path = (fs::temp_directory_path() / ("verity-exp-" + std::to_string(getpid()))).string();
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(RunStore, RerunSkipsFinishedRuns) {
  TempDir tmp;
  RunStore store(tmp.path);
  std::vector<RunSpec> runs = {
      {"a-1", R"({"seed":1})"}, {"a-2", R"({"seed":2})"}, {"b-1", R"({"seed":1,"b":true})"}};
  int calls = 0;
  auto execute = [&](const RunSpec &r) {
    ++calls;
    if (r.key == "b-1" && calls == 3) throw Interrupted("stop");  // first pass dies on the last run
    return json{{"ndcg", double(calls)}, {"key", r.key}}.dump();
  };
  EXPECT_THROW(run_plan(store, runs, execute), Interrupted);
  EXPECT_TRUE(file_exists(store.record_path("a-2")));
  EXPECT_FALSE(file_exists(store.record_path("b-1")));
  PlanStats stats;
  auto results = run_plan(store, runs, execute, &stats);
  EXPECT_EQ(stats.skipped, 2u);
  EXPECT_EQ(stats.executed, 1u);
  EXPECT_EQ(calls, 4);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(json::parse(results[0])["ndcg"],
            1.0);  // the recorded result, not a new one
  EXPECT_EQ(json::parse(results[2])["key"], "b-1");
  // A changed spec runs again; the others stay skipped.
  runs[1].spec = R"({"seed":2,"steps":5})";
  run_plan(store, runs, execute, &stats);
  EXPECT_EQ(stats.executed, 1u);
  EXPECT_EQ(stats.skipped, 2u);
}

TEST(RunStore, RejectsBadAndDuplicateKeys) {
  TempDir tmp;
  RunStore store(tmp.path);
  auto nop = [](const RunSpec &) { return std::string("{}"); };
  EXPECT_THROW(run_plan(store, {{"a/b", "{}"}}, nop), ConfigError);
  EXPECT_THROW(run_plan(store, {{"a", "{}"}, {"a", "{}"}}, nop), ConfigError);
}

}  // namespace
}  // namespace verity::experiment
