#include <gtest/gtest.h>

#include "core/error.hpp"
#include "eval/pair_metrics.hpp"

using namespace verity;
using namespace verity::eval;

TEST(PairMetrics, PerfectAndInvertedScorers) {
  std::vector<float> s = {0.9f, 0.8f, 0.2f, 0.1f};
  std::vector<int> y = {1, 1, 0, 0};
  auto m = binary_metrics(s, y, 0.5);
  EXPECT_DOUBLE_EQ(m.auc, 1.0);
  EXPECT_DOUBLE_EQ(m.ap, 1.0);
  EXPECT_DOUBLE_EQ(*m.accuracy, 1.0);
  EXPECT_DOUBLE_EQ(m.best_accuracy, 1.0);
  EXPECT_DOUBLE_EQ(m.recall_at_precision_90, 1.0);
  std::vector<int> inverted = {0, 0, 1, 1};
  auto w = binary_metrics(s, inverted, 0.5);
  EXPECT_DOUBLE_EQ(w.auc, 0.0);
  EXPECT_DOUBLE_EQ(*w.accuracy, 0.0);
  EXPECT_DOUBLE_EQ(w.best_accuracy, 0.5);  // "everything is different" gets the two negatives
  EXPECT_DOUBLE_EQ(w.recall_at_precision_90, 0.0);
}

TEST(PairMetrics, HandComputedValues) {
  // Sorted: 0.95(1) 0.75(0) 0.65(1) 0.45(1) 0.35(0); each in its own ECE bin.
  std::vector<float> s = {0.45f, 0.95f, 0.35f, 0.75f, 0.65f};
  std::vector<int> y = {1, 1, 0, 0, 1};
  auto m = binary_metrics(s, y);
  EXPECT_FALSE(m.accuracy.has_value());
  // AP = (1/3)(1/1) + (1/3)(2/3) + (1/3)(3/4)
  EXPECT_NEAR(m.ap, (1.0 + 2.0 / 3 + 0.75) / 3, 1e-12);
  // AUC: positives 0.9, 0.6, 0.4 vs negatives 0.7, 0.3: wins 2 + 1 + 1 = 4 of 6.
  EXPECT_NEAR(m.auc, 4.0 / 6.0, 1e-12);
  // Best threshold 0.45: tp 3, fp 1 -> accuracy 4/5.
  EXPECT_NEAR(m.best_accuracy, 0.8, 1e-12);
  EXPECT_FLOAT_EQ(float(m.best_threshold), 0.45f);
  // Precision >= 0.9 only at the top score: recall 1/3.
  EXPECT_NEAR(m.recall_at_precision_90, 1.0 / 3, 1e-12);
  // ECE: one item per bin, |confidence - label| each.
  const double ece = (0.35 + 0.55 + 0.35 + 0.75 + 0.05) / 5;
  EXPECT_NEAR(m.ece, ece, 1e-6);
}

TEST(PairMetrics, TiesAndErrors) {
  std::vector<float> s = {0.5f, 0.5f};
  std::vector<int> y = {1, 0};
  EXPECT_DOUBLE_EQ(binary_metrics(s, y).auc, 0.5);
  std::vector<int> bad = {1, 2};
  EXPECT_THROW(binary_metrics(s, bad), ConfigError);
  std::vector<int> short_labels = {1};
  EXPECT_THROW(binary_metrics(s, short_labels), ConfigError);
}
