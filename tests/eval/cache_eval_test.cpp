// cache-eval's summaries: the best hit ratio at a target precision, and a
// whole run on a tiny pair file (models/use-lite; skipped without it).
#include "eval/cache_eval.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "../cache/cache_fixture.hpp"

using namespace verity;

TEST(CacheEval, AtPrecisionTakesTheLargestHitRatioThatReachesTheTarget) {
  std::vector<eval::SweepPoint> curve = {
      {0.9, 1.0, 0.1, 1, 1}, {0.8, 0.5, 0.2, 2, 1}, {0.7, 0.667, 0.3, 3, 2}, {0.6, 0.75, 0.4, 4, 3}, {0.5, 0.6, 0.5, 5, 3}};
  auto at = eval::at_precision(curve, {0.70, 0.95, 0.99});
  ASSERT_EQ(at.size(), 3u);
  EXPECT_DOUBLE_EQ(*at[0].hit_ratio, 0.4);  // not the first point: precision recovers at 0.4
  EXPECT_DOUBLE_EQ(*at[0].threshold, 0.6);
  EXPECT_DOUBLE_EQ(*at[1].hit_ratio, 0.1);
  auto none = eval::at_precision({{0.5, 0.5, 1.0, 2, 1}}, {0.9});
  EXPECT_FALSE(none[0].hit_ratio);
}

class CacheEvalRun : public verity_test::CacheFixture {
 protected:
  static data::PairFile fixture_pairs() {
    return data::read_pairs(std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/cache/pairs.jsonl");
  }
  // The fixture cache's options (its verifier is f1) with these scorers, in the test's directory.
  eval::CacheEvalOptions eval_options(std::vector<std::string> scorers) {
    eval::CacheEvalOptions o;
    o.cache = options();
    o.scorers = std::move(scorers);
    o.work_dir = dir_.string();
    return o;
  }
};

TEST_F(CacheEvalRun, BothProtocolsJudgeEveryScorerOnTheSameLookups) {
  auto file = fixture_pairs();
  auto o = eval_options({"cosine", "f1"});
  for (const char* protocol : {"pairs", "stream"}) {
    SCOPED_TRACE(protocol);
    o.protocol = protocol;
    auto r = eval::evaluate_cache("pairs.jsonl", file.pairs, o);
    EXPECT_EQ(r.pairs, 8u);
    EXPECT_EQ(r.same, 4u);
    EXPECT_EQ(r.exact_hits, 1u);  // p4 looks up its own text
    EXPECT_EQ(r.puts, 8u);
    ASSERT_EQ(r.scorers.size(), 2u);
    for (const auto& s : r.scorers) {
      ASSERT_FALSE(s.curve.empty());
      // The exact hit comes first and is correct.
      EXPECT_TRUE(std::isinf(s.curve.front().threshold));
      EXPECT_DOUBLE_EQ(s.curve.front().precision, 1.0);
      // At the lowest threshold every lookup with a candidate is a hit.
      EXPECT_LE(s.curve.back().hits, 8u);
      for (size_t i = 1; i < s.curve.size(); ++i) EXPECT_GT(s.curve[i].hits, s.curve[i - 1].hits);
      EXPECT_GE(s.at_default.paraphrase_served, 0.25);  // at least the exact one
    }
    // The cosine rule has no floor: with one entry per namespace every lookup has a candidate.
    if (std::string(protocol) == "pairs") EXPECT_EQ(r.scorers[0].curve.back().hits, 8u);
  }
}

// A pair whose prompt is punctuation alone is set aside, counted with its
// line, and the rest are judged as without it.
TEST_F(CacheEvalRun, PairsWithoutContentAreSetAsideNotFatal) {
  auto file = fixture_pairs();
  auto o = eval_options({"cosine", "f1"});
  auto with_empty = file.pairs;
  data::Pair question_mark{"q", "?", "What does a lone question mark mean?", false, "", 41};
  data::Pair ellipsis{"e", "Which city is the capital of France?", " ... ", true, "", 42};
  with_empty.insert(with_empty.begin() + 2, question_mark);
  with_empty.push_back(ellipsis);
  for (const char* protocol : {"pairs", "stream"}) {
    SCOPED_TRACE(protocol);
    o.protocol = protocol;
    auto clean = eval::evaluate_cache("pairs.jsonl", file.pairs, o);
    auto r = eval::evaluate_cache("pairs.jsonl", with_empty, o);
    EXPECT_EQ(r.pairs, 8u);
    EXPECT_EQ(r.set_aside, 2u);
    EXPECT_EQ(r.set_aside_lines, (std::vector<size_t>{41, 42}));
    EXPECT_EQ(clean.set_aside, 0u);
    EXPECT_EQ(r.same, clean.same);
    ASSERT_EQ(r.scorers.size(), clean.scorers.size());
    for (size_t s = 0; s < r.scorers.size(); ++s) {
      ASSERT_EQ(r.scorers[s].curve.size(), clean.scorers[s].curve.size());
      EXPECT_EQ(r.scorers[s].curve.back().hits, clean.scorers[s].curve.back().hits);
      EXPECT_EQ(r.scorers[s].curve.back().correct, clean.scorers[s].curve.back().correct);
    }
  }
  EXPECT_THROW(eval::evaluate_cache("empty.jsonl", {question_mark, ellipsis}, o), ConfigError);
}

TEST_F(CacheEvalRun, TimedAndParallelJudgingGiveTheSameCurves) {
  auto file = fixture_pairs();
  auto o = eval_options({"cosine", "f1", "f0"});  // f1's choices come from lookup() when timed
  o.protocol = "stream";
  auto all_timed = eval::evaluate_cache("pairs.jsonl", file.pairs, o);
  o.timed_lookups = 3;
  o.threads = 3;
  auto mixed = eval::evaluate_cache("pairs.jsonl", file.pairs, o);
  EXPECT_EQ(all_timed.lookup_ms.p50 > 0, true);
  EXPECT_EQ(mixed.exact_hits, all_timed.exact_hits);
  for (size_t s = 0; s < 3; ++s) {
    SCOPED_TRACE(all_timed.scorers[s].name);
    const auto& a = all_timed.scorers[s].curve;
    const auto& b = mixed.scorers[s].curve;
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].hits, b[i].hits);
      EXPECT_EQ(a[i].correct, b[i].correct);
      if (std::isfinite(a[i].threshold)) EXPECT_FLOAT_EQ(float(a[i].threshold), float(b[i].threshold));
    }
  }
}
