// nearmiss-build on a tiny self-written data root (same layout as
// ../shared/data), through the library and the CLI.
#include "nearmiss/builder.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "../cli/run_verity.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "data/triples.hpp"
#include "nearmiss/text_utils.hpp"

namespace fs = std::filesystem;
using namespace verity::nearmiss;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A data root with every source: sentences chosen so passive/synonym and the
// near-miss generators apply to several of them.
std::string make_fixture_root() {
  fs::path root = fs::temp_directory_path() / ("verity_nm_fixture_" + std::to_string(::getpid()));
  fs::remove_all(root);
  write(root / "beir/scifact/queries.jsonl",
        "{\"_id\": \"1\", \"text\": \"The drug quickly reduces the tumor size in 30 mice.\"}\n"
        "{\"_id\": \"2\", \"text\": \"Aspirin is above the threshold for the early treatment.\"}\n"
        "{\"_id\": \"3\", \"text\": \"The enzyme strongly binds the small receptor.\"}\n"
        "{\"_id\": \"4\", \"text\": \"The patients visited the new clinic before the surgery.\"}\n");
  write(root / "nearmiss/cannot/pairs.tsv",
        "sentence\tnegated\n"
        "The old cat sat on the mat.\tThe old cat did not sit on the mat.\n"
        "The old cat did not sit on the mat.\tThe old cat sat on the mat.\n"
        "The boy quickly ate the apple.\tThe boy did not eat the apple.\n"
        "The tall man opened the heavy door.\tThe tall man did not open the heavy door.\n"
        "broken line without a tab\n");
  write(root / "nearmiss/cannot/labelled.tsv",
        "premise\thypothesis\tlabel\n"
        "The bright sun warmed the cold water.\tThe bright sun did not warm the cold water.\t1\n"
        "The small dog chased the big cat.\tThe small dog chased the large cat.\t0\n");
  nlohmann::json stepgame = nlohmann::json::object();
  const char* stories[][3] = {
      {"A is to the left of B.", "C is to the upper right of D.", "E is below F."},
      {"G is above H.", "K is to the lower left of L.", "M is at the 3 o'clock position relative to N."},
      {"P is to the right of Q.", "R is above S and to the left of S.", "T is to the bottom-left of U."},
      {"V is to the left of W.", "X is to the right of Y.", "Z is below A."}};
  for (int i = 0; i < 4; ++i)
    stepgame[std::to_string(i)] = {{"story", {stories[i][0], stories[i][1], stories[i][2]}},
                                   {"question", "?"},
                                   {"label", "left"}};
  write(root / "nearmiss/stepgame/qa1_test.json", stepgame.dump());
  write(root / "text/sotu/1900_a.txt",
        "The Congress passed the important bill before the recess. The nation quickly built the new "
        "railroad across the western plains. We will not forget the brave soldiers who served.\n\n"
        "The President signed 12 treaties with the northern tribes.");
  write(root / "text/moby-dick/chapter_1.txt",
        "CHAPTER 1. Loomings.\n\nThe whale swiftly struck the small boat near the ship. Ahab hated the "
        "white whale above all things. The sailors quickly lowered the boats into the dark sea.");
  return root.string();
}

BuildResult build(const std::string& root, const std::string& out, uint64_t seed) {
  BuildOptions o;
  o.data_root = root;
  o.out_dir = out;
  o.seed = seed;
  o.command_line = "test";
  return build_nearmiss(o);
}

class NearmissBuilder : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    verity::set_quiet(true);
    root_ = make_fixture_root();
    out_ = root_ + "/out1";
    result_ = build(root_, out_, 5);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  static std::array<verity::data::TripleFile, 3> read_all(const std::string& dir) {
    return {verity::data::read_triples(dir + "/train.jsonl"), verity::data::read_triples(dir + "/dev.jsonl"),
            verity::data::read_triples(dir + "/test.jsonl")};
  }
  static inline std::string root_, out_;
  static inline BuildResult result_;
};

}  // namespace

TEST_F(NearmissBuilder, WritesSplitsAndManifest) {
  auto files = read_all(out_);
  size_t total = 0;
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(files[s].triples.size(), result_.counts[s]);
    total += files[s].triples.size();
  }
  EXPECT_GT(total, 5u);
  auto manifest = nlohmann::json::parse(verity::read_file(out_ + "/manifest.json"));
  EXPECT_EQ(manifest["seed"], 5);
  EXPECT_EQ(manifest["counts"]["train"]["total"], result_.counts[0]);
  EXPECT_GE(manifest["inputs"].size(), 6u);
  EXPECT_EQ(manifest["sources"]["cannot"]["skipped"]["bad_columns"], 1);
  EXPECT_EQ(manifest["sources"]["cannot"]["skipped"]["not_negation_label"], 1);
  EXPECT_GT(manifest["sources"]["stepgame"]["skipped"]["converse:unsupported_word"], 0);
}

TEST_F(NearmissBuilder, SplitsShareNoSentence) {
  auto files = read_all(out_);
  std::map<std::string, size_t> owner;
  for (size_t s = 0; s < 3; ++s)
    for (const auto& t : files[s].triples)
      for (const auto* text : {&t.query, &t.positive, &t.negative}) {
        auto [it, fresh] = owner.emplace(normalize_sentence(*text), s);
        EXPECT_EQ(it->second, s) << *text;
      }
}

TEST_F(NearmissBuilder, EveryTripleIsWellFormed) {
  auto files = read_all(out_);
  std::set<std::string> types, sources;
  for (const auto& f : files)
    for (const auto& t : f.triples) {
      EXPECT_NE(normalize_sentence(t.query), normalize_sentence(t.positive)) << t.query;
      EXPECT_NE(normalize_sentence(t.negative), normalize_sentence(t.positive)) << t.query;
      EXPECT_NE(normalize_sentence(t.negative), normalize_sentence(t.query)) << t.query;
      EXPECT_FALSE(t.type.empty());
      EXPECT_FALSE(t.source.empty());
      types.insert(t.type);
      sources.insert(t.source);
      if (t.source == "stepgame") {
        EXPECT_EQ(t.type, "spatial");
      }
      if (t.source == "cannot") {
        EXPECT_EQ(t.type, "negation");
      }
    }
  EXPECT_TRUE(sources.count("stepgame"));
  EXPECT_TRUE(sources.count("cannot"));
  EXPECT_TRUE(types.count("negation"));
  EXPECT_TRUE(types.count("spatial"));
}

TEST_F(NearmissBuilder, DeterministicWithASeed) {
  build(root_, root_ + "/out2", 5);
  for (const char* f : {"train.jsonl", "dev.jsonl", "test.jsonl"})
    EXPECT_EQ(verity::read_file(out_ + "/" + f), verity::read_file(root_ + "/out2/" + f)) << f;
}

TEST_F(NearmissBuilder, UnknownSourceIsAConfigError) {
  BuildOptions o;
  o.data_root = root_;
  o.out_dir = root_ + "/out3";
  o.sources = {"wikipedia"};
  EXPECT_THROW(build_nearmiss(o), verity::ConfigError);
  EXPECT_FALSE(fs::exists(root_ + "/out3"));
}

TEST_F(NearmissBuilder, BadCannotHeaderNamesTheFile) {
  std::string root = root_ + "/bad_root";
  fs::create_directories(root);
  write(fs::path(root) / "nearmiss/cannot/x.tsv", "a\tb\tc\td\nq\tw\te\tr\n");
  BuildOptions o;
  o.data_root = root;
  o.out_dir = root + "/out";
  o.sources = {"cannot"};
  try {
    build_nearmiss(o);
    FAIL() << "bad header accepted";
  } catch (const verity::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("x.tsv:1"), std::string::npos) << e.what();
  }
}

TEST_F(NearmissBuilder, CliJsonSummary) {
  auto r = verity_test::run("nearmiss-build --data-root " + root_ + " --out " + root_ +
                            "/cli_out --seed 5 --sources cannot,stepgame --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.contains("counts"));
  EXPECT_EQ(j["seed"], 5);
  EXPECT_FALSE(j["sources"].contains("sotu"));
  auto bad = verity_test::run("nearmiss-build --data-root " + root_ + " --out " + root_ +
                              "/cli_bad --ratios 0.5,0.5 --quiet");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("--ratios"), std::string::npos) << bad.err;
}

// The targeted pass takes the sentences after the first max_text (seeded
// order) and makes only role_swap/numeric triples from them.
TEST_F(NearmissBuilder, TargetedPassAddsOnlyRoleSwapAndNumeric) {
  const std::string root = root_ + "/targeted_root";
  write(fs::path(root) / "text/sotu/1901_a.txt",
        "The dog bit the man. The cat chased the mouse. The farmer sold 12 cows to the butcher. "
        "The girl found the ball. The teacher praised the student. The company hired 30 workers. "
        "The boy kicked the ball. The nurse helped the doctor.");
  BuildOptions o;
  o.data_root = root;
  o.out_dir = root + "/out_targeted";
  o.seed = 5;
  o.sources = {"sotu"};
  o.max_text = 1;
  o.max_targeted = 10;
  o.min_words = 4;
  o.ratios = {1.0, 0.0, 0.0};
  o.command_line = "test";
  auto r = build_nearmiss(o);
  auto manifest = nlohmann::json::parse(verity::read_file(o.out_dir + "/manifest.json"));
  EXPECT_EQ(manifest["sources"]["sotu"]["sampled"], 1);
  EXPECT_EQ(manifest["sources"]["sotu"]["targeted"], 7);  // the other 7 sentences
  EXPECT_EQ(manifest["input_caps"]["targeted"], 10);

  // Without the targeted pass: the triples of the one main sentence only.
  o.out_dir = root + "/out_untargeted";
  o.max_targeted = 0;
  auto base = build_nearmiss(o);
  auto with = verity::data::read_triples(root + "/out_targeted/train.jsonl").triples;
  auto without = verity::data::read_triples(o.out_dir + "/train.jsonl").triples;
  ASSERT_GT(with.size(), without.size()) << manifest["sources"]["sotu"].dump();
  EXPECT_EQ(r.counts[0], with.size());
  EXPECT_EQ(base.counts[0], without.size());
  std::set<std::string> main_queries;
  for (const auto& t : without) main_queries.insert(t.query);
  for (const auto& t : with) {
    if (main_queries.count(t.query)) continue;
    EXPECT_TRUE(t.type == "role_swap" || t.type == "numeric") << t.type << ": " << t.query;
  }
}

// --exclude: a second build from the same inputs that reserves the first
// build's dev and test keeps none of their sentences, and says how many
// candidates it dropped.
TEST_F(NearmissBuilder, ExcludeKeepsReservedSentencesOut) {
  BuildOptions o;
  o.data_root = root_;
  o.out_dir = root_ + "/out_excluded";
  o.seed = 5;
  o.ratios = {1.0, 0.0, 0.0};
  o.exclude = {out_ + "/dev.jsonl", out_ + "/test.jsonl"};
  o.command_line = "test";
  auto r = build_nearmiss(o);
  std::set<std::string> reserved;
  size_t reserved_triples = 0;
  for (const auto& path : o.exclude)
    for (const auto& t : verity::data::read_triples(path).triples) {
      ++reserved_triples;
      for (const auto* text : {&t.query, &t.positive, &t.negative}) reserved.insert(normalize_sentence(*text));
    }
  ASSERT_GT(reserved_triples, 0u) << "the fixture build must put something in dev/test";
  auto train = verity::data::read_triples(o.out_dir + "/train.jsonl").triples;
  EXPECT_EQ(train.size(), r.counts[0]);
  EXPECT_GT(train.size(), 0u);
  for (const auto& t : train)
    for (const auto* text : {&t.query, &t.positive, &t.negative})
      EXPECT_FALSE(reserved.count(normalize_sentence(*text))) << *text;
  auto manifest = nlohmann::json::parse(verity::read_file(o.out_dir + "/manifest.json"));
  EXPECT_GE(manifest["dropped_excluded"].get<size_t>(), reserved_triples);
  EXPECT_EQ(manifest["exclude"].size(), 2u);
  EXPECT_EQ(manifest["exclude"][0]["path"], o.exclude[0]);
  o.exclude = {root_ + "/missing.jsonl"};
  EXPECT_THROW(build_nearmiss(o), verity::Error);
}
