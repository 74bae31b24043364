#include "diagnose/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"

namespace verity::diagnose {
namespace {
using V = std::vector<double>;

TEST(Statistics, Summary) {
  V x = {5, 1, 4, 2, 3};
  auto s = summarize(x);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.std, std::sqrt(2.0), 1e-12);  // population std
  EXPECT_NEAR(s.q10, 1.4, 1e-12);             // position 0.4 between 1 and 2
  EXPECT_NEAR(s.q50, 3, 1e-12);
  EXPECT_NEAR(s.q90, 4.6, 1e-12);
  auto e = summarize(V{});
  EXPECT_EQ(e.mean, 0);
}

TEST(Statistics, AverageRanks) {
  EXPECT_EQ(average_ranks(V{10, 20, 20, 30, 20}), (V{1, 3, 3, 5, 3}));
  EXPECT_EQ(average_ranks(V{3, 1, 2}), (V{3, 1, 2}));
}

TEST(Statistics, KendallTauB) {
  EXPECT_DOUBLE_EQ(kendall_tau_b(V{1, 2, 3, 4}, V{10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(kendall_tau_b(V{1, 2, 3, 4}, V{4, 3, 2, 1}), -1.0);
  // One discordant pair of three: (2 - 1) / 3.
  EXPECT_NEAR(kendall_tau_b(V{1, 2, 3}, V{2, 1, 3}), 1.0 / 3.0, 1e-12);
  // Tie in x: C = 5, D = 0, n0 = 6, n1 = 1, n2 = 0 -> 5 / sqrt(5 * 6).
  EXPECT_NEAR(kendall_tau_b(V{1, 2, 2, 3}, V{1, 3, 2, 4}), 5 / std::sqrt(30.0), 1e-12);
  // Two ties in y: C = 8, n0 = 10, n2 = 2 -> 8 / sqrt(10 * 8) = 0.894427.
  EXPECT_NEAR(kendall_tau_b(V{1, 2, 3, 4, 5}, V{1, 1, 2, 2, 3}), 0.894427191, 1e-9);
  EXPECT_TRUE(std::isnan(kendall_tau_b(V{1, 1, 1}, V{1, 2, 3})));
  EXPECT_THROW(kendall_tau_b(V{1, 2}, V{1}), ConfigError);
}

TEST(Statistics, SpearmanWithTies) {
  EXPECT_DOUBLE_EQ(spearman_rho(V{1, 2, 3, 4}, V{1, 4, 9, 16}), 1.0);
  // ranks x = 1, 2.5, 2.5, 4; y = 1, 3, 2, 4: sxy = 4.5, sxx = 4.5, syy = 5.
  EXPECT_NEAR(spearman_rho(V{1, 2, 2, 3}, V{1, 3, 2, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  // Without ties rho = 1 - 6 sum d^2 / (n (n^2 - 1)): sum d^2 = 2 -> 0.8; 6 -> 0.4.
  EXPECT_NEAR(spearman_rho(V{1, 2, 3, 4}, V{1, 4, 1.5, 5}), 0.8, 1e-12);
  EXPECT_NEAR(spearman_rho(V{1, 2, 3, 4}, V{1, 4, 2, 3}), 0.4, 1e-12);
  EXPECT_TRUE(std::isnan(spearman_rho(V{1, 2, 3}, V{5, 5, 5})));
}

}  // namespace
}  // namespace verity::diagnose
