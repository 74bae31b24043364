// The `verity eval --json` object, shared by the CLI and the Python module.
#include "eval/detail/eval_json.hpp"

#include <gtest/gtest.h>

using namespace verity;

namespace {
eval::RetrievalEvalResult result(const std::string& name, double ndcg) {
  eval::RetrievalEvalResult r;
  r.dataset = name;
  r.pipeline = "stage1=bm25,K=100,verifier=none";
  r.index_dir = "/cache/" + name;
  r.docs = 5;
  r.qps = 100;
  r.latency.p50_ms = 1.5;
  for (const auto& m : eval::EvalOptions{}.metrics) r.evaluation.mean[m.name()] = ndcg;
  r.evaluation.counts.queries = 3;
  r.evaluation.counts.skipped_no_relevant = 1;
  return r;
}
}  // namespace

TEST(EvalJson, OneDatasetIsItsEntryPlusTheRun) {
  eval::RetrievalEvalOptions o;
  std::vector<eval::RetrievalEvalResult> rs{result("tiny", 0.5)};
  auto j = eval::detail::report_json(rs, o, "test");
  EXPECT_EQ(j["dataset"], "tiny");
  EXPECT_EQ(j["ndcg@10"], 0.5);
  EXPECT_EQ(j["queries"], 3);
  EXPECT_EQ(j["queries_skipped_no_relevant"], 1);
  EXPECT_EQ(j["latency_ms_p50"], 1.5);
  EXPECT_EQ(j["retriever"], "bm25");
  EXPECT_EQ(j["verifier"], "none");
  EXPECT_EQ(j["split"], "test");
  EXPECT_EQ(j["k"], 100);
  EXPECT_EQ(j["index_dir"], "/cache/tiny");
  EXPECT_FALSE(j.contains("datasets"));
}

TEST(EvalJson, LatencyOnlyWithOneThread) {
  eval::RetrievalEvalOptions o;
  o.threads = 2;
  auto j = eval::detail::result_json(result("tiny", 0.5), o);
  EXPECT_FALSE(j.contains("latency_ms_p50"));
  EXPECT_EQ(j["threads"], 2);
}

TEST(EvalJson, SeveralDatasetsGetAMean) {
  eval::RetrievalEvalOptions o;
  std::vector<eval::RetrievalEvalResult> rs{result("a", 0.2), result("b", 0.6)};
  auto j = eval::detail::report_json(rs, o, "dev");
  ASSERT_TRUE(j.contains("datasets"));
  EXPECT_EQ(j["datasets"]["a"]["ndcg@10"], 0.2);
  EXPECT_EQ(j["datasets"]["b"]["queries"], 3);
  EXPECT_DOUBLE_EQ(j["mean"]["ndcg@10"].get<double>(), 0.4);
  EXPECT_EQ(j["mean"].size(), o.metrics.metrics.size());
  EXPECT_EQ(j["split"], "dev");
  EXPECT_FALSE(j.contains("dataset"));
}
