// End-to-end tests of the verity binary on a tiny fixture corpus.
#include <gtest/gtest.h>

#include "run_verity.hpp"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;

using verity_test::Result;
using verity_test::run;

std::string fixture() { return std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/tiny_beir"; }

// Each directory temp_dir makes is removed when the test program ends.
struct TempDirs {
  std::vector<fs::path> made;
  ~TempDirs() {
    std::error_code ignored;
    for (const auto& d : made) fs::remove_all(d, ignored);
  }
};

std::string temp_dir(const std::string& name) {
  static TempDirs dirs;
  auto d = fs::temp_directory_path() / ("verity_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  dirs.made.push_back(d);
  return d.string();
}

TEST(Cli, EverySubcommandHasHelp) {
  for (const char* sub : {"index", "search", "eval", "calibrate", "verify"}) {
    auto r = run(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub;
    EXPECT_NE(r.out.find("--json"), std::string::npos) << sub;
  }
}

TEST(Cli, EvalJsonIsOneObjectWithStableKeys) {
  auto r = run("eval --dataset " + fixture() + " --retriever bm25 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);  // throws if stdout is not exactly one JSON value
  for (const char* key : {"ndcg@10", "acc@1", "recall@100", "mrr@10", "map@100", "queries", "qps"})
    EXPECT_TRUE(j.contains(key)) << key;
  // q4 has no relevant document: skipped, as BEIR does.
  EXPECT_EQ(j["queries"], 3);
  EXPECT_EQ(j["queries_skipped_no_relevant"], 1);
  // Each of the three queries finds its relevant document first.
  EXPECT_DOUBLE_EQ(j["acc@1"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["recall@100"].get<double>(), 1.0);
}

TEST(Cli, EvalSuiteReportsDatasetsAndMean) {
  auto r = run("eval --dataset " + fixture() + " --dataset " + fixture() + " --json");
  EXPECT_EQ(r.status, 2) << "the same dataset twice is a usage error";
  auto copy = temp_dir("suite") + "/tiny2";
  fs::copy(fixture(), copy, fs::copy_options::recursive);
  r = run("eval --quiet --dataset " + fixture() + " --dataset " + copy + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("datasets"));
  EXPECT_TRUE(j["datasets"].contains("tiny_beir"));
  EXPECT_TRUE(j["datasets"].contains("tiny2"));
  EXPECT_DOUBLE_EQ(j["mean"]["ndcg@10"].get<double>(),
                   j["datasets"]["tiny_beir"]["ndcg@10"].get<double>());
  EXPECT_TRUE(r.err.empty()) << "--quiet must silence stderr: " << r.err;
}

TEST(Cli, EvalWritesTrecRun) {
  auto dir = temp_dir("run");
  auto r = run("eval --quiet --dataset " + fixture() + " --run " + dir + "/run.trec");
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(dir + "/run.trec");
  std::string qid, q0, doc, tag;
  int rank;
  double score;
  ASSERT_TRUE(in >> qid >> q0 >> doc >> rank >> score >> tag);
  EXPECT_EQ(q0, "Q0");
  EXPECT_EQ(rank, 1);
}

TEST(Cli, IndexThenSearch) {
  auto dir = temp_dir("index");
  auto r = run("index --quiet --corpus " + fixture() + " --out " + dir + "/idx --bm25");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/idx/manifest.json"));
  r = run("search --index " + dir + "/idx --query 'measles vaccine' --k 3 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["results"].empty());
  EXPECT_EQ(j["results"][0]["id"], "d3");
  EXPECT_LE(j["results"].size(), 3u);
  // A negative count is refused by name; a k past the corpus returns the corpus.
  r = run("search --index " + dir + "/idx --query 'measles vaccine' --k -1 --json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--k: must not be negative, got -1"), std::string::npos) << r.err;
  r = run("search --index " + dir + "/idx --query 'measles vaccine' --k 99999999999 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LE(nlohmann::json::parse(r.out)["results"].size(), 5u);
  for (const char* query : {"''", "'  ?  '"}) {
    r = run("search --index " + dir + "/idx --query " + query + " --json");
    EXPECT_EQ(r.status, 2) << query;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("query"), std::string::npos) << r.err;
  }
  // Rebuilding over an existing index replaces it.
  r = run("index --quiet --corpus " + fixture() + " --out " + dir + "/idx");
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(Cli, FlagsTheChosenModesNeverReadAreRefused) {
  auto dir = temp_dir("modes");
  ASSERT_EQ(run("index --quiet --corpus " + fixture() + " --out " + dir + "/idx --bm25").status, 0);
  const std::string search = "search --index " + dir + "/idx --query 'measles vaccine' --json ";
  struct Case {
    std::string flags, named, scope;
  };
  const Case refused[] = {
      {"--fusion rrf", "--fusion", "--stage1 hybrid"},
      {"--stage1 bm25 --rrf-k 10 --dense-weight 0.3", "--rrf-k, --dense-weight", "--stage1 hybrid"},
      {"--stage1 hybrid --rrf-k 10", "--rrf-k", "--fusion rrf"},
      {"--stage1 hybrid --fusion rrf --dense-weight 0.3", "--dense-weight", "--fusion weighted"},
      {"--combine rerank", "--combine", "a stage 2 (--verifier)"},
      {"--verifier f0 --combine rerank --verifier-weight 0.5", "--verifier-weight", "--combine weighted"},
      {"--verifier f0 --penalty-beta 0.3 --penalty-tau 0.5", "--penalty-beta, --penalty-tau", "--combine penalty"},
  };
  for (const auto& c : refused) {
    auto r = run(search + c.flags);
    EXPECT_EQ(r.status, 2) << c.flags << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.flags;
    EXPECT_NE(r.err.find(c.named + (c.named.find(',') == std::string::npos ? " applies" : " apply") + " to " + c.scope),
              std::string::npos)
        << c.flags << ": " << r.err;
  }
  auto r = run("eval --dataset " + fixture() + " --retriever bm25 --fusion rrf --json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--fusion applies to --retriever hybrid"), std::string::npos) << r.err;
  // Flags of the chosen modes pass (the bm25-only index then lacks the verifier's tokens).
  r = run(search + "--verifier f0 --combine penalty --penalty-beta 0.3");
  EXPECT_EQ(r.err.find(" not read here"), std::string::npos) << r.err;

  // K below k: refused when given, raised to k when left at its default.
  r = run(search + "--k 3 --candidates 2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--candidates 2 is below --k 3"), std::string::npos) << r.err;
  r = run(search + "--k 150");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("raised from 100 to --k 150"), std::string::npos) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out)["pipeline"].get<std::string>().find("K=150"), std::string::npos) << r.out;
  r = run("eval --dataset " + fixture() + " --retriever bm25 --k 100 --candidates 10 --json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--candidates 10 is below --k 100"), std::string::npos) << r.err;

  // A cache-only server has no /search: its flags are refused, not ignored; --verifier and
  // --encoder mean the cache's (its /verify's too), and must not disagree with its own flags.
  r = run("serve --cache " + dir + "/cache.sqlite --stage1 hybrid --candidates 20 --port 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--stage1, --candidates apply to /search over --index"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--cache-candidates"), std::string::npos) << r.err;
  r = run("serve --cache " + dir + "/cache.sqlite --verifier f1 --cache-verifier default --port 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--verifier f1 and --cache-verifier default disagree"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/cache.sqlite")) << "refused before the cache is opened";
  // A server picks stage 1 and the verifier per request: only the modes no request changes decide.
  r = run("serve --index " + dir + "/idx --fusion rrf --rrf-k 10 --combine rerank --verifier-weight 0.5 --port 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--verifier-weight applies to --combine weighted"), std::string::npos) << r.err;
}

TEST(Cli, BadInputGivesClearErrorsAndExitCodes) {
  auto r = run("eval --dataset /nonexistent/dir");
  EXPECT_EQ(r.status, 2);
  r = run("frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown command 'frobnicate' for verity (commands: "), std::string::npos) << r.err;
  r = run("cache bogus --db x");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown command 'bogus' for verity cache (commands: put, lookup"), std::string::npos) << r.err;
  r = run("cache");
  EXPECT_EQ(r.status, 2);  // no command at all: CLI11's own message
  EXPECT_NE(r.err.find("subcommand is required"), std::string::npos) << r.err;
  auto dir = temp_dir("bad");
  fs::copy(fixture(), dir + "/broken", fs::copy_options::recursive);
  {
    std::ofstream out(dir + "/broken/corpus.jsonl", std::ios::app);
    out << "{\"_id\": \"d6\", \"text\": \"unterminated\n";
  }
  r = run("eval --dataset " + dir + "/broken --json");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.out.empty()) << "nothing on stdout on error";
  EXPECT_NE(r.err.find("corpus.jsonl"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("6"), std::string::npos) << "names the line: " << r.err;
  r = run("search --index " + dir + "/broken --query x");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("manifest.json"), std::string::npos) << r.err;
}

TEST(Cli, CorruptedIndexIsRejected) {
  auto dir = temp_dir("corrupt");
  ASSERT_EQ(run("index --quiet --corpus " + fixture() + " --out " + dir + "/idx").status, 0);
  auto bm25 = dir + "/idx/bm25.vbm";
  fs::resize_file(bm25, fs::file_size(bm25) / 2);
  auto r = run("search --index " + dir + "/idx --query cat");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bm25.vbm"), std::string::npos) << r.err;
}
TEST(Cli, EnsembleVerifierWritesAFileExplainAccepts) {
  auto dir = temp_dir("ensemble");
  const std::string members = std::string(VERITY_SOURCE_DIR) + "/assets/verifiers/f3-ensemble/";
  auto r = run("ensemble-verifier --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--json"), std::string::npos);
  r = run("ensemble-verifier --quiet --json --member " + members + "w64-seed1.vvrf --member " + members +
          "w64-seed2.vvrf --out " + dir + "/pair.vens --provenance two");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // exactly one object on stdout
  EXPECT_EQ(j.at("out"), dir + "/pair.vens");
  EXPECT_EQ(j.at("spec"), "ensemble:" + dir + "/pair.vens");
  EXPECT_EQ(j.at("members").size(), 2u);
  EXPECT_TRUE(j.at("trained").get<bool>());
  r = run("explain --query 'the dog bit the man' --doc 'the man bit the dog' --encoder use-lite --out " + dir +
          "/map.svg --verifier f1,ensemble:" + dir + "/pair.vens --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto scores = nlohmann::json::parse(r.out).at("scores");
  ASSERT_TRUE(scores.contains("ensemble:" + dir + "/pair.vens")) << scores.dump();
  const double score = scores.at("ensemble:" + dir + "/pair.vens").get<double>();
  EXPECT_GT(score, 0.0);
  EXPECT_LT(score, 1.0);
  // A member that is not a weights file is refused, naming it; nothing is written.
  r = run("ensemble-verifier --member " + dir + "/pair.vens --out " + dir + "/bad.vens");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("pair.vens"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/bad.vens"));
}
}  // namespace
