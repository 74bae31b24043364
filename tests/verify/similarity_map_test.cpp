#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/error.hpp"
#include "verify/similarity_map.hpp"

using namespace verity;
using namespace verity::verify;

TEST(SimilarityMap, HandMadeVectors) {
  // Query tokens: x axis, 45°, zero vector. Candidate: x axis (scaled), y axis.
  std::vector<float> q = {1, 0, 0, 1, 1, 0, 0, 0, 0};
  std::vector<float> c = {5, 0, 0, 0, 2, 0};
  auto m = SimilarityMap::compute(q, c, 3);
  ASSERT_EQ(m.rows(), 3u);
  ASSERT_EQ(m.cols(), 2u);
  EXPECT_FLOAT_EQ(m.at(0, 0), 1.0f);
  EXPECT_FLOAT_EQ(m.at(0, 1), 0.0f);
  EXPECT_NEAR(m.at(1, 0), 1 / std::sqrt(2.0), 1e-6);
  EXPECT_NEAR(m.at(1, 1), 1 / std::sqrt(2.0), 1e-6);
  EXPECT_EQ(m.at(2, 0), 0.0f);  // zero vector: no direction, 0
  EXPECT_EQ(m.at(2, 1), 0.0f);
  std::vector<float> neg = {-3, 0, 0};
  EXPECT_FLOAT_EQ(SimilarityMap::compute(q, neg, 3).at(0, 0), -1.0f);
}

TEST(SimilarityMap, MatchesNaiveCosineOnRandomInput) {
  std::mt19937 rng(5);
  std::normal_distribution<float> g;
  const size_t d = 37, nq = 9, nc = 23;
  std::vector<float> q(nq * d), c(nc * d);
  for (auto& x : q) x = g(rng);
  for (auto& x : c) x = g(rng);
  auto m = SimilarityMap::compute(q, c, d);
  for (size_t i = 0; i < nq; ++i)
    for (size_t j = 0; j < nc; ++j) {
      double ab = 0, aa = 0, bb = 0;
      for (size_t k = 0; k < d; ++k) {
        ab += double(q[i * d + k]) * c[j * d + k];
        aa += double(q[i * d + k]) * q[i * d + k];
        bb += double(c[j * d + k]) * c[j * d + k];
      }
      EXPECT_NEAR(m.at(i, j), ab / std::sqrt(aa * bb), 1e-5);
    }
}

TEST(SimilarityMap, RejectsBadInput) {
  std::vector<float> q = {1, 2, 3}, c = {1, std::numeric_limits<float>::infinity(), 0};
  EXPECT_THROW(SimilarityMap::compute(q, c, 3), ConfigError);
  EXPECT_THROW(SimilarityMap::compute(q, q, 2), ConfigError);
  EXPECT_THROW(SimilarityMap(2, 2, {1, 2, 3}), ConfigError);
  EXPECT_THROW(SimilarityMap(1, 1, {std::nanf("")}), ConfigError);
  std::vector<float> none;
  EXPECT_TRUE(SimilarityMap::compute(none, q, 3).empty());
}

TEST(SimilarityMap, PadAndCropPolicy) {
  SimilarityMap m(2, 3, {1, 2, 3, 4, 5, 6});
  auto p = pad_or_crop(m, 4, -0.5f);
  EXPECT_EQ(p.size, 4u);
  EXPECT_FALSE(p.cropped);
  EXPECT_EQ(p.values[0 * 4 + 2], 3.0f);
  EXPECT_EQ(p.values[1 * 4 + 0], 4.0f);
  EXPECT_EQ(p.values[1 * 4 + 3], -0.5f);
  EXPECT_EQ(p.values[3 * 4 + 3], -0.5f);
  EXPECT_EQ(p.mask[1 * 4 + 2], 1);
  EXPECT_EQ(p.mask[1 * 4 + 3], 0);
  EXPECT_EQ(p.mask[2 * 4 + 0], 0);
  size_t real = 0;
  for (auto v : p.mask) real += v;
  EXPECT_EQ(real, 6u);
  auto c = pad_or_crop(m, 2);  // keeps the leading 2 columns
  EXPECT_TRUE(c.cropped);
  EXPECT_EQ(c.values, (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(pad_or_crop(m).size, kDefaultMapSize);
}
