#include "eval/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/error.hpp"

using namespace verity;
using namespace verity::eval;

namespace {

EvalOptions with_metrics(const std::string& list) {
  EvalOptions opt;
  opt.metrics = parse_metrics(list);
  return opt;
}

// Graded query used by several tests:
//   qrels q1: a=3, b=2, c=0, d=1  (relevant: a, b, d; ideal gains 3, 2, 1)
//   run   q1: c .9, b .8, x .7, a .6, d .5  -> ranks c1 b2 x3 a4 d5
const Qrels kGraded = {{"q1", {{"a", 3}, {"b", 2}, {"c", 0}, {"d", 1}}}};
const eval::Run kGradedRun = {
    {"q1", {{"a", 0.6}, {"c", 0.9}, {"d", 0.5}, {"x", 0.7}, {"b", 0.8}}}};

}  // namespace

TEST(Metrics, DefaultNames) {
  Evaluation ev = evaluate(kGradedRun, kGraded);
  std::vector<std::string> expected{"ndcg@10", "acc@1", "recall@100", "mrr@10", "map@100"};
  EXPECT_EQ(ev.metric_names, expected);
  for (const auto& name : expected) EXPECT_TRUE(ev.mean.count(name)) << name;
}

TEST(Metrics, GradedNdcg) {
  Evaluation ev = evaluate(kGradedRun, kGraded, with_metrics("ndcg@10,ndcg@3,ndcg@1"));
  // DCG@10  = 2/log2(3) + 3/log2(5) + 1/log2(6) = 1.2618595 + 1.2920297 + 0.3868528 = 2.9407420
  // IDCG@10 = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.2618595 + 0.5             = 4.7618595
  EXPECT_NEAR(ev.mean["ndcg@10"], 0.6175616866029846, 1e-12);
  // DCG@3 = 2/log2(3) = 1.2618595; IDCG@3 is the full ideal 4.7618595 (3 relevant docs).
  EXPECT_NEAR(ev.mean["ndcg@3"], 0.26499301486112564, 1e-12);
  // Rank 1 is c (grade 0).
  EXPECT_EQ(ev.mean["ndcg@1"], 0.0);
  EXPECT_EQ(ev.per_query.at("q1").at("ndcg@10"), ev.mean["ndcg@10"]);
}

TEST(Metrics, NdcgPerfectAndNegativeGrades) {
  // A perfect ranking scores exactly 1.
  eval::Run perfect = {{"q1", {{"a", 4}, {"b", 3}, {"d", 2}, {"c", 1}}}};
  EXPECT_NEAR(evaluate(perfect, kGraded, with_metrics("ndcg@10")).mean["ndcg@10"], 1.0, 1e-12);
  // A negative grade is not relevant and gains nothing: z=-1 at rank 1, y=1 at rank 2,
  // nDCG = (1/log2(3)) / 1 = 0.6309297535714575.
  Qrels qrels = {{"q", {{"z", -1}, {"y", 1}}}};
  eval::Run run = {{"q", {{"z", 2.0}, {"y", 1.0}}}};
  EXPECT_NEAR(evaluate(run, qrels, with_metrics("ndcg@10")).mean["ndcg@10"], 0.6309297535714575,
              1e-12);
}

TEST(Metrics, AccRecallMrrMap) {
  Evaluation ev = evaluate(kGradedRun, kGraded,
                           with_metrics("acc@1,acc@2,recall@2,recall@5,mrr@1,mrr@10,map@4,map@100"));
  EXPECT_EQ(ev.mean["acc@1"], 0.0);  // c is not relevant
  EXPECT_EQ(ev.mean["acc@2"], 1.0);  // b is
  EXPECT_NEAR(ev.mean["recall@2"], 1.0 / 3, 1e-12);  // b of {a, b, d}
  EXPECT_EQ(ev.mean["recall@5"], 1.0);
  EXPECT_EQ(ev.mean["mrr@1"], 0.0);
  EXPECT_EQ(ev.mean["mrr@10"], 0.5);  // first relevant at rank 2
  // Relevant at ranks 2, 4, 5: precisions 1/2, 2/4, 3/5; divided by 3 relevant.
  EXPECT_NEAR(ev.mean["map@100"], (0.5 + 0.5 + 0.6) / 3, 1e-12);
  // Cut at 4: only ranks 2 and 4 count, still divided by all 3 relevant.
  EXPECT_NEAR(ev.mean["map@4"], (0.5 + 0.5) / 3, 1e-12);
}

TEST(Metrics, TiesBrokenByDocIdDescending) {
  // All three tie; trec_eval orders them c, b, a, so relevant "a" is at rank 3.
  Qrels qrels = {{"q", {{"a", 1}}}};
  eval::Run run = {{"q", {{"a", 1.0}, {"b", 1.0}, {"c", 1.0}}}};
  Evaluation ev = evaluate(run, qrels, with_metrics("mrr@10,acc@2"));
  EXPECT_NEAR(ev.mean["mrr@10"], 1.0 / 3, 1e-12);
  EXPECT_EQ(ev.mean["acc@2"], 0.0);

  // The comparison is byte-wise, not numeric: "9" > "10".
  std::vector<ScoredDoc> docs{{"10", 0.5}, {"9", 0.5}, {"2", 0.7}};
  rank_in_place(docs, "q");
  EXPECT_EQ(docs[0].doc_id, "2");
  EXPECT_EQ(docs[1].doc_id, "9");
  EXPECT_EQ(docs[2].doc_id, "10");

  // The input order never matters.
  std::vector<ScoredDoc> many;
  for (int i = 0; i < 50; ++i) many.push_back({"d" + std::to_string(i), double(i % 4)});
  auto reference = many;
  rank_in_place(reference, "q");
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(many.begin(), many.end(), rng);
    auto ranked = many;
    rank_in_place(ranked, "q");
    for (size_t i = 0; i < ranked.size(); ++i) EXPECT_EQ(ranked[i].doc_id, reference[i].doc_id);
  }
}

TEST(Metrics, SkippedMissingAndRunOnlyQueries) {
  Qrels qrels = kGraded;
  qrels["q2"] = {{"x", 0}};  // no relevant document: skipped
  qrels["q3"] = {{"y", 1}};  // relevant, but absent from the run: scores 0
  eval::Run run = kGradedRun;
  run["q4"] = {{"a", 1.0}};  // not in qrels: ignored
  Evaluation ev = evaluate(run, qrels);
  EXPECT_EQ(ev.counts.queries, 2u);
  EXPECT_EQ(ev.counts.skipped_no_relevant, 1u);
  EXPECT_EQ(ev.counts.missing_from_run, 1u);
  EXPECT_EQ(ev.counts.ignored_not_in_qrels, 1u);
  EXPECT_FALSE(ev.per_query.count("q2"));
  EXPECT_FALSE(ev.per_query.count("q4"));
  for (const auto& name : ev.metric_names) EXPECT_EQ(ev.per_query.at("q3").at(name), 0.0);
  // Means are over q1 and q3.
  EXPECT_NEAR(ev.mean["ndcg@10"], 0.6175616866029846 / 2, 1e-12);
  EXPECT_NEAR(ev.mean["mrr@10"], 0.25, 1e-12);
}

TEST(Metrics, IgnoreIdenticalIds) {
  // The query itself is in the corpus and retrieved first (as in ArguAna/Quora).
  Qrels qrels = {{"q1", {{"d1", 1}}}};
  eval::Run run = {{"q1", {{"q1", 0.9}, {"d1", 0.8}}}};
  EXPECT_EQ(evaluate(run, qrels, with_metrics("mrr@10")).mean["mrr@10"], 0.5);
  EvalOptions opt = with_metrics("mrr@10");
  opt.ignore_identical_ids = true;
  Evaluation ev = evaluate(run, qrels, opt);
  EXPECT_EQ(ev.mean["mrr@10"], 1.0);
  EXPECT_EQ(ev.counts.identical_ids_dropped, 1u);
  EXPECT_EQ(run.at("q1").size(), 2u);  // the caller's run is untouched
}

TEST(Metrics, BadRunsAndSpecs) {
  Qrels qrels = {{"q", {{"a", 1}}}};
  eval::Run dup = {{"q", {{"a", 1.0}, {"b", 0.5}, {"a", 0.2}}}};
  try {
    evaluate(dup, qrels);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("query \"q\" lists document \"a\" twice"),
              std::string::npos)
        << e.what();
  }
  eval::Run nan = {{"q", {{"a", std::nan("")}}}};
  EXPECT_THROW(evaluate(nan, qrels), FormatError);

  EXPECT_EQ(parse_metric("ndcg@100").name(), "ndcg@100");
  EXPECT_EQ(parse_metric("acc@10"), (MetricSpec{Metric::kAcc, 10}));
  EXPECT_EQ(parse_metrics("recall@5,map@100").size(), 2u);
  for (const char* bad : {"ndcg", "ndcg@0", "ndcg@x", "ndcg@10x", "p@10", "", "ndcg@10,"})
    EXPECT_THROW(parse_metrics(bad), ConfigError) << bad;
  EXPECT_THROW(evaluate({}, qrels, with_metrics("acc@1,acc@1")), ConfigError);
}

TEST(Metrics, EmptyQrels) {
  Evaluation ev = evaluate(kGradedRun, {});
  EXPECT_EQ(ev.counts.queries, 0u);
  EXPECT_EQ(ev.counts.ignored_not_in_qrels, 1u);
  EXPECT_EQ(ev.mean["ndcg@10"], 0.0);
}
