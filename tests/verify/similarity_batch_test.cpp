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

// The streamed kernel against the reference loop nest, on shapes that hit every
// tail of the 4×2 register blocking (query rows 1-9, candidate rows 0-5), with
// dims that do (AVX2 path) and do not (portable path) divide by 8, and a zero
// candidate row (cosine 0 by definition).
TEST(SimilarityStreamed, MatchesComputeOnEveryBlockTail) {
  std::mt19937 rng(11);
  std::normal_distribution<float> g;
  for (size_t dim : {8u, 24u, 512u, 13u}) {
    for (size_t nq = 1; nq <= 9; ++nq) {
      std::vector<float> query(nq * dim);
      for (auto& v : query) v = g(rng);
      std::vector<std::vector<float>> cands;
      for (size_t n = 0; n <= 5; ++n) {
        std::vector<float> c(n * dim);
        for (auto& v : c) v = g(rng);
        if (n == 3) std::fill(c.begin() + dim, c.begin() + 2 * dim, 0.0f);
        cands.push_back(std::move(c));
      }
      auto maps = SimilarityMap::compute_streamed(query, cands.size(), dim, [&](size_t c, std::vector<float>& rows) {
        rows = cands[c];
        return cands[c].size() / dim;
      });
      ASSERT_EQ(maps.size(), cands.size());
      for (size_t c = 0; c < cands.size(); ++c) {
        auto ref = SimilarityMap::compute(query, cands[c], dim);
        ASSERT_EQ(maps[c].rows(), ref.rows());
        ASSERT_EQ(maps[c].cols(), ref.cols());
        for (size_t i = 0; i < ref.rows(); ++i)
          for (size_t j = 0; j < ref.cols(); ++j)
            ASSERT_NEAR(maps[c].at(i, j), ref.at(i, j), 2e-5) << "dim " << dim << " nq " << nq << " cand " << c;
      }
    }
  }
}

TEST(SimilarityStreamed, RejectsBadQueryAndShortFetch) {
  std::vector<float> q(8, 1.0f);
  auto fetch = [](size_t, std::vector<float>& rows) {
    rows.assign(4, 1.0f);
    return size_t(2);  // claims 2 rows of 4 but wrote one
  };
  EXPECT_THROW(SimilarityMap::compute_streamed(q, 1, 4, fetch), ConfigError);
  q[3] = std::numeric_limits<float>::infinity();
  auto ok = [](size_t, std::vector<float>& rows) {
    rows.assign(4, 1.0f);
    return size_t(1);
  };
  EXPECT_THROW(SimilarityMap::compute_streamed(q, 1, 4, ok), ConfigError);
  std::vector<float> odd(7, 1.0f);
  EXPECT_THROW(SimilarityMap::compute_streamed(odd, 1, 4, ok), ConfigError);
}
