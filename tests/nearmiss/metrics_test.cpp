#include "nearmiss/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"

using verity::nearmiss::pairwise_accuracy;
using verity::nearmiss::roc_auc;

TEST(NearmissMetrics, PerfectSeparation) {
  std::vector<float> pos = {0.9f, 0.8f, 0.7f}, neg = {0.1f, 0.2f, 0.3f};
  EXPECT_DOUBLE_EQ(pairwise_accuracy(pos, neg), 1.0);
  EXPECT_DOUBLE_EQ(roc_auc(pos, neg), 1.0);
}

TEST(NearmissMetrics, Inverted) {
  std::vector<float> pos = {0.1f, 0.2f}, neg = {0.8f, 0.9f};
  EXPECT_DOUBLE_EQ(pairwise_accuracy(pos, neg), 0.0);
  EXPECT_DOUBLE_EQ(roc_auc(pos, neg), 0.0);
}

TEST(NearmissMetrics, TiesFailPairwiseAndCountHalfInAuc) {
  std::vector<float> pos = {0.5f, 0.5f}, neg = {0.5f, 0.5f};
  EXPECT_DOUBLE_EQ(pairwise_accuracy(pos, neg), 0.0);
  EXPECT_DOUBLE_EQ(roc_auc(pos, neg), 0.5);
}

TEST(NearmissMetrics, PairwiseIsPerTripleAucIsPooled) {
  // Triple 0: 0.6 > 0.5 (win); triple 1: 0.2 < 0.3 (loss). Pooled pairs
  // (pos, neg): (0.6,0.5) (0.6,0.3) win, (0.2,0.5) (0.2,0.3) lose -> 0.5.
  std::vector<float> pos = {0.6f, 0.2f}, neg = {0.5f, 0.3f};
  EXPECT_DOUBLE_EQ(pairwise_accuracy(pos, neg), 0.5);
  EXPECT_DOUBLE_EQ(roc_auc(pos, neg), 0.5);
  // Pooled AUC differs from pairwise accuracy: pos {0.9, 0.4}, neg {0.95, 0.1}.
  // Pairs: (0.9,0.95) lose, (0.9,0.1) win, (0.4,0.95) lose, (0.4,0.1) win -> 0.5;
  // pairwise: 0.9<0.95 loss, 0.4>0.1 win -> 0.5. And one with a tie across triples:
  std::vector<float> p2 = {0.5f, 0.7f}, n2 = {0.5f, 0.1f};
  // Pairs: (0.5,0.5) tie .5, (0.5,0.1) win, (0.7,0.5) win, (0.7,0.1) win -> 3.5/4.
  EXPECT_DOUBLE_EQ(roc_auc(p2, n2), 3.5 / 4.0);
  EXPECT_DOUBLE_EQ(pairwise_accuracy(p2, n2), 0.5);
}

TEST(NearmissMetrics, AucMatchesBruteForce) {
  std::vector<float> pos, neg;
  for (int i = 0; i < 40; ++i) {
    pos.push_back(static_cast<float>((i * 37) % 11) / 10.0f);
    neg.push_back(static_cast<float>((i * 53) % 7) / 10.0f);
  }
  double u = 0;
  for (float p : pos)
    for (float n : neg) u += p > n ? 1.0 : (p == n ? 0.5 : 0.0);
  EXPECT_NEAR(roc_auc(pos, neg), u / (pos.size() * neg.size()), 1e-12);
}

TEST(NearmissMetrics, BadInput) {
  std::vector<float> a = {1.0f}, b = {1.0f, 2.0f};
  EXPECT_THROW(pairwise_accuracy(a, b), verity::ConfigError);
  std::vector<float> nan = {std::nanf("")};
  EXPECT_THROW(roc_auc(nan, a), verity::ConfigError);
  EXPECT_DOUBLE_EQ(roc_auc({}, a), 0.5);
}
