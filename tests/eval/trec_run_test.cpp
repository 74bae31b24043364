#include "eval/trec_run.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/io.hpp"
#include "data/beir.hpp"

using namespace verity;
using namespace verity::eval;
namespace fs = std::filesystem;

namespace {

class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : path_((fs::temp_directory_path() /
               ("verity_run_" + std::to_string(::getpid()) + "_" + name)).string()) {}
  ~TempFile() { fs::remove(path_); }
  void write(const std::string& contents) const { std::ofstream(path_, std::ios::binary) << contents; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string read_error(const std::string& path) {
  try {
    read_trec_run(path);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

void expect_names(const std::string& message, const std::string& path, size_t line,
                  const std::string& what) {
  EXPECT_EQ(message.rfind(path + ":" + std::to_string(line) + ":", 0), 0u) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
}

}  // namespace

TEST(TrecRun, RoundTripExactScoresAndRanks) {
  TempFile f("roundtrip.txt");
  eval::Run run = {{"q2", {{"d1", 0.1}, {"d3", 1.0 / 3}, {"d2", 1.0 / 3}}},
             {"q1", {{"x", -2.5e-7}, {"y", 12345.678901234567}}}};
  write_trec_run(f.path(), run, "bm25");
  EXPECT_FALSE(fs::exists(f.path() + ".tmp." + std::to_string(::getpid())));

  // Queries in id order; ties ranked by doc id descending (d3 before d2).
  std::string text = read_file(f.path());
  std::string expected_start = "q1 Q0 y 1 12345.678901234567 bm25\nq1 Q0 x 2 -2.5e-07 bm25\n";
  EXPECT_EQ(text.rfind(expected_start, 0), 0u) << text;
  EXPECT_NE(text.find("q2 Q0 d3 1 0.3333333333333333 bm25\nq2 Q0 d2 2 "), std::string::npos)
      << text;

  eval::Run back = read_trec_run(f.path());
  ASSERT_EQ(back.size(), 2u);
  for (const auto& [qid, docs] : run) {
    auto expected = docs;
    rank_in_place(expected, qid);
    const auto& got = back.at(qid);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].doc_id, expected[i].doc_id);
      EXPECT_EQ(got[i].score, expected[i].score);  // bit-exact
    }
  }
}

TEST(TrecRun, ReadsTabsAndExtraSpaces) {
  TempFile f("spaces.txt");
  f.write("q1\tQ0\td1\t1\t2.5\ttag\n  q1  Q0 d2 2 1e-3 tag  \r\n\n");
  eval::Run run = read_trec_run(f.path());
  ASSERT_EQ(run.at("q1").size(), 2u);
  EXPECT_EQ(run.at("q1")[1].doc_id, "d2");
  EXPECT_EQ(run.at("q1")[1].score, 1e-3);
}

TEST(TrecRun, MalformedLines) {
  TempFile f("bad.txt");
  const std::string good = "q1 Q0 d1 1 0.5 t\n";
  f.write(good + "q1 Q0 d2 2 0.4\n");
  expect_names(read_error(f.path()), f.path(), 2, "expected 6 fields");
  f.write(good + "q1 Q0 d2 2 0.4 t extra\n");
  expect_names(read_error(f.path()), f.path(), 2, "found 7");
  f.write(good + "q1 Q0 d2 two 0.4 t\n");
  expect_names(read_error(f.path()), f.path(), 2, "rank \"two\" is not an integer");
  f.write(good + "q1 Q0 d2 2 0.4x t\n");
  expect_names(read_error(f.path()), f.path(), 2, "score \"0.4x\" is not a finite number");
  f.write(good + "q1 Q0 d2 2 nan t\n");
  expect_names(read_error(f.path()), f.path(), 2, "not a finite number");
  f.write(good + "q1 Q0 d1 2 0.3 t\n");
  std::string msg = read_error(f.path());
  expect_names(msg, f.path(), 2, "lists document \"d1\" again (first at line 1)");
  f.write(good + "\n" + good);
  expect_names(read_error(f.path()), f.path(), 2, "blank line");
  f.write("");
  EXPECT_TRUE(read_trec_run(f.path()).empty());
}

TEST(TrecRun, RefusesUnwritableIds) {
  TempFile f("unwritable.txt");
  EXPECT_THROW(write_trec_run(f.path(), {{"q 1", {{"d", 1.0}}}}, "t"), FormatError);
  EXPECT_THROW(write_trec_run(f.path(), {{"q1", {{"", 1.0}}}}, "t"), FormatError);
  EXPECT_THROW(write_trec_run(f.path(), {{"q1", {{"d", 1.0}}}}, "my tag"), FormatError);
  EXPECT_FALSE(fs::exists(f.path()));  // nothing half-written
}

TEST(TrecRun, SciFactOracleRunSurvivesRoundTrip) {
  const std::string dir = std::string(VERITY_SHARED_DATA) + "/beir/scifact";
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " not present";
  auto ds = data::load_beir(dir, "test");
  // An oracle run: every judged document, scored by its grade, plus one unjudged decoy
  // ranked below them. Every metric must then be exactly 1.
  eval::Run run;
  for (const auto& [qid, judged] : ds.qrels) {
    for (const auto& [doc, grade] : judged) run[qid].push_back({doc, double(grade)});
    size_t decoy = 0;
    while (judged.count(ds.corpus.docs[decoy].id)) ++decoy;
    run[qid].push_back({ds.corpus.docs[decoy].id, -1.0});
  }
  TempFile f("scifact_oracle.txt");
  write_trec_run(f.path(), run, "oracle");
  eval::Run back = read_trec_run(f.path());
  Evaluation ev = evaluate(back, ds.qrels);
  EXPECT_EQ(ev.counts.queries, 300u);
  EXPECT_EQ(ev.counts.missing_from_run, 0u);
  for (const auto& name : ev.metric_names) EXPECT_DOUBLE_EQ(ev.mean[name], 1.0) << name;
}
