#include "diagnose/log_det.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include <random>
#include <vector>

namespace verity::diagnose {
namespace {

struct Case {
  std::vector<double> r, w;
};
Case random_case(size_t n, size_t d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  std::uniform_real_distribution<double> u(0, 1);
  Case c;
  c.r.resize(n * d);
  for (size_t k = 0; k < n; ++k) {
    double norm = 0;
    for (size_t i = 0; i < d; ++i) norm += (c.r[k * d + i] = g(rng)) * c.r[k * d + i];
    for (size_t i = 0; i < d; ++i) c.r[k * d + i] /= std::sqrt(norm);
    c.w.push_back(u(rng));
  }
  return c;
}

TEST(LogDet, CholeskyOfKnownMatrix) {
  std::vector<double> a = {4, 2, 2, 3};  // det 8
  EXPECT_NEAR(cholesky_log_det(a, 2), std::log(8.0), 1e-12);
  std::vector<double> singular = {1, 1, 1, 1};
  EXPECT_THROW(cholesky_log_det(singular, 2), Error);
}

TEST(LogDet, GramEqualsPrimal) {
  for (auto [n, d] : {std::pair<size_t, size_t>{7, 12}, {20, 6}, {1, 5}, {16, 16}}) {
    auto c = random_case(n, d, 42 + n);
    for (double gamma : {0.1, 1.0, 25.0}) {
      double primal = log_det_primal(c.r, n, d, c.w, gamma);
      double gram = log_det_gram(c.r, n, d, c.w, gamma);
      EXPECT_NEAR(primal, gram, 1e-10 * std::max(1.0, std::abs(primal))) << n << "x" << d << " gamma " << gamma;
      EXPECT_DOUBLE_EQ(source_log_det(c.r, n, d, c.w, gamma), n < d ? gram : primal);
      EXPECT_GT(primal, 0);
    }
  }
}

TEST(LogDet, OneDirectionIsLog1pOfWeight) {
  // Rank one: log det(I + (g/1) w r r^T) = log(1 + g w) for unit r.
  std::vector<double> r = {0.6, 0.8, 0.0}, w = {0.5};
  EXPECT_NEAR(log_det_primal(r, 1, 3, w, 2.0), std::log(2.0), 1e-12);
  EXPECT_NEAR(log_det_gram(r, 1, 3, w, 2.0), std::log(2.0), 1e-12);
}

TEST(LogDet, ApproachesLinearRegimeForSmallGamma) {
  size_t n = 30, d = 8;
  auto c = random_case(n, d, 7);
  double mean_w = 0;
  for (double x : c.w) mean_w += x / double(n);
  for (double gamma : {1.0, 1e-2, 1e-4}) {
    double exact = source_log_det(c.r, n, d, c.w, gamma), linear = gamma * mean_w;
    EXPECT_LE(exact, linear);  // log det(I + A) <= tr(A) for PSD A
    if (gamma <= 1e-4) EXPECT_NEAR(exact / linear, 1.0, 1e-3);
  }
  // At gamma = 1 the directions overlap enough that the gap is visible.
  EXPECT_LT(source_log_det(c.r, n, d, c.w, 1.0), 0.99 * mean_w);
}

TEST(LogDet, ZeroWeightsAndEmptyGiveZero) {
  auto c = random_case(4, 3, 1);
  std::vector<double> zero(4, 0.0);
  EXPECT_EQ(source_log_det(c.r, 4, 3, zero, 1.0), 0.0);
  EXPECT_EQ(source_log_det({}, 0, 3, {}, 1.0), 0.0);
  std::vector<double> negative = {1, 1, -1, 1};
  EXPECT_THROW(source_log_det(c.r, 4, 3, negative, 1.0), ConfigError);
}

}  // namespace
}  // namespace verity::diagnose
