#include <gtest/gtest.h>

#include <random>

#include "core/error.hpp"
#include "verify/similarity_map.hpp"

using namespace verity;
using verity::verify::SimilarityMap;

TEST(SimilarityBatch, MatchesOneByOne) {
  std::mt19937 rng(7);
  std::normal_distribution<float> g;
  const size_t dim = 24, nq = 5;
  std::vector<size_t> counts{3, 0, 7, 1};
  std::vector<float> query(nq * dim), block;
  for (auto& v : query) v = g(rng);
  std::vector<std::vector<float>> cands;
  for (size_t n : counts) {
    std::vector<float> c(n * dim);
    for (auto& v : c) v = g(rng);
    block.insert(block.end(), c.begin(), c.end());
    cands.push_back(std::move(c));
  }
  auto maps = SimilarityMap::compute_many(query, block, counts, dim);
  ASSERT_EQ(maps.size(), counts.size());
  for (size_t c = 0; c < counts.size(); ++c) {
    auto ref = SimilarityMap::compute(query, cands[c], dim);
    ASSERT_EQ(maps[c].rows(), ref.rows());
    ASSERT_EQ(maps[c].cols(), ref.cols());
    for (size_t i = 0; i < ref.rows(); ++i)
      for (size_t j = 0; j < ref.cols(); ++j) EXPECT_NEAR(maps[c].at(i, j), ref.at(i, j), 1e-5);
  }
}

TEST(SimilarityBatch, RejectsInconsistentInput) {
  std::vector<float> q(8, 1.0f), c(8, 1.0f);
  std::vector<size_t> counts{3};
  EXPECT_THROW(SimilarityMap::compute_many(q, c, counts, 4), ConfigError);
  c[1] = std::numeric_limits<float>::quiet_NaN();
  std::vector<size_t> ok{2};
  EXPECT_THROW(SimilarityMap::compute_many(q, c, ok, 4), ConfigError);
}
