#include "verify/bf16_maps.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <random>

#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "index/token_store.hpp"
#include "verify/pair_scoring.hpp"

using namespace verity;
using verity::verify::RowCodes;
using verity::verify::SimilarityMap;
using verity::verify::TokenRows;

namespace {

// Worst case of bf16 rounding both factors (unit roundoff 2^-8 each) over unit
// vectors: |ΔM| ≤ 2·2^-8 (docs/VERIFIERS.md, "Map precision").
constexpr double kWorstCase = 2.0 / 256.0;

struct Candidate {
  RowCodes codes;
  std::vector<float> f32;       // f32 codes, and the reference values of every encoding
  std::vector<uint16_t> f16;
  std::vector<int8_t> i8;
  std::vector<float> scales;
  size_t n = 0;
  TokenRows rows() const {
    switch (codes) {
      case RowCodes::f32: return {codes, f32.data(), nullptr, n};
      case RowCodes::f16: return {codes, f16.data(), nullptr, n};
      case RowCodes::i8: return {codes, i8.data(), scales.data(), n};
    }
    return {};
  }
};

// n random rows in the given encoding; `f32` holds what the codes decode to.
Candidate make_candidate(RowCodes codes, size_t n, size_t dim, std::mt19937& rng) {
  std::normal_distribution<float> g;
  Candidate c{codes, std::vector<float>(n * dim), {}, {}, {}, n};
  for (auto& v : c.f32) v = g(rng);
  if (n >= 2) std::fill(c.f32.begin() + dim, c.f32.begin() + 2 * dim, 0.0f);  // a zero row
  if (codes == RowCodes::f16)
    for (auto& v : c.f32) v = index::half_to_float(c.f16.emplace_back(index::float_to_half(v)));
  if (codes == RowCodes::i8)
    for (size_t r = 0; r < n; ++r) {
      float mx = 0;
      for (size_t k = 0; k < dim; ++k) mx = std::max(mx, std::fabs(c.f32[r * dim + k]));
      const float s = mx / 127.0f;
      c.scales.push_back(s);
      for (size_t k = 0; k < dim; ++k) {
        const auto q = int8_t(s > 0 ? std::lround(c.f32[r * dim + k] / s) : 0);
        c.i8.push_back(q);
        c.f32[r * dim + k] = float(q) * s;
      }
    }
  return c;
}

// The product paths this CPU runs.
std::vector<verify::Bf16Products> products_here() {
  std::vector<verify::Bf16Products> paths{verify::Bf16Products::avx512};
  if (verify::amx_supported()) paths.push_back(verify::Bf16Products::amx);
  return paths;
}

// Candidate lengths that reach every tail of both blockings: 4×2 rows of the
// AVX-512 kernel and 32-row blocks of the AMX one.
constexpr size_t kCandidateLengths[] = {0, 1, 2, 3, 4, 5, 16, 31, 33};

// Against the exact reference on every encoding, dims that are and are not
// multiples of 16/32, and every tail of the blockings, on every product path.
void expect_exact_within_the_bf16_bound(verify::Bf16Products products) {
  SCOPED_TRACE(std::string(verify::bf16_products_name(products)));
  std::mt19937 rng(5);
  std::normal_distribution<float> g;
  double sum_err = 0;
  size_t cells = 0;
  for (RowCodes codes : {RowCodes::f32, RowCodes::f16, RowCodes::i8})
    for (size_t dim : {8u, 13u, 32u, 100u, 512u})
      for (size_t nq : {1u, 3u, 4u, 7u, 9u, 17u, 33u}) {
        std::vector<float> query(nq * dim);
        for (auto& v : query) v = g(rng);
        std::vector<Candidate> cands;
        for (size_t n : kCandidateLengths) cands.push_back(make_candidate(codes, n, dim, rng));
        auto maps = verify::similarity_maps_bf16(query, cands.size(), dim,
                                                 [&](size_t c) { return cands[c].rows(); }, products);
        ASSERT_EQ(maps.size(), cands.size());
        for (size_t c = 0; c < cands.size(); ++c) {
          const auto ref = SimilarityMap::compute(query, cands[c].f32, dim);
          ASSERT_EQ(maps[c].rows(), ref.rows());
          ASSERT_EQ(maps[c].cols(), ref.cols());
          for (size_t i = 0; i < ref.rows(); ++i) {
            for (size_t j = 0; j < ref.cols(); ++j) {
              const double err = std::fabs(maps[c].at(i, j) - ref.at(i, j));
              ASSERT_LE(err, kWorstCase) << "codes " << int(codes) << " dim " << dim << " nq " << nq
                                         << " cand " << c << " (" << i << "," << j << ")";
              if (j == 1) {
                EXPECT_EQ(maps[c].at(i, j), 0.0f);  // the zero row has no direction
              }
              sum_err += err;
              ++cells;
            }
          }
        }
      }
  // Rounding errors are unbiased: the mean is far below the worst case.
  EXPECT_LT(sum_err / double(cells), 1e-3);
}

}  // namespace

TEST(Bf16Maps, MatchExactMapsWithinTheBf16Bound) {
  if (!verify::bf16_maps_supported()) GTEST_SKIP() << "CPU has no AVX512-BF16";
  for (const auto products : products_here()) expect_exact_within_the_bf16_bound(products);
}

// AMX tiles and AVX512-BF16 dot products multiply the same bf16 inputs; their
// fp32 sums differ only in order, far below the bf16 rounding itself.
TEST(Bf16Maps, AmxTilesAgreeWithTheDotProductPath) {
  if (!verify::amx_supported()) GTEST_SKIP() << "CPU has no AMX-BF16, or the OS does not grant its tiles";
  std::mt19937 rng(17);
  std::normal_distribution<float> g;
  double worst = 0;
  for (size_t dim : {13u, 512u})
    for (size_t nq : {1u, 16u, 20u, 40u}) {
      std::vector<float> query(nq * dim);
      for (auto& v : query) v = g(rng);
      std::vector<Candidate> cands;
      for (size_t n : kCandidateLengths) cands.push_back(make_candidate(RowCodes::f16, n, dim, rng));
      const auto view = [&](size_t c) { return cands[c].rows(); };
      const auto dots = verify::similarity_maps_bf16(query, cands.size(), dim, view, verify::Bf16Products::avx512);
      const auto tiles = verify::similarity_maps_bf16(query, cands.size(), dim, view, verify::Bf16Products::amx);
      for (size_t c = 0; c < cands.size(); ++c) {
        ASSERT_EQ(tiles[c].rows(), dots[c].rows());
        ASSERT_EQ(tiles[c].cols(), dots[c].cols());
        for (size_t i = 0; i < dots[c].rows(); ++i)
          for (size_t j = 0; j < dots[c].cols(); ++j)
            worst = std::max(worst, double(std::fabs(tiles[c].at(i, j) - dots[c].at(i, j))));
      }
    }
  EXPECT_LE(worst, 2e-5);
  if (!isa_pinned()) {
    EXPECT_EQ(verify::best_bf16_products(), verify::Bf16Products::amx);
  }
}

TEST(Bf16Maps, RejectsBadInput) {
  if (!verify::bf16_maps_supported()) GTEST_SKIP() << "CPU has no AVX512-BF16";
  std::vector<float> q(8, 1.0f), c(4, 1.0f);
  auto view = [&](size_t) { return TokenRows{RowCodes::f32, c.data(), nullptr, 1}; };
  std::vector<float> odd(7, 1.0f);
  EXPECT_THROW(verify::similarity_maps_bf16(odd, 1, 4, view), ConfigError);
  q[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(verify::similarity_maps_bf16(q, 1, 4, view), ConfigError);
  q[3] = 1.0f;
  auto no_scales = [&](size_t) { return TokenRows{RowCodes::i8, c.data(), nullptr, 1}; };
  EXPECT_THROW(verify::similarity_maps_bf16(q, 1, 4, no_scales), ConfigError);
  EXPECT_EQ(verify::similarity_maps_bf16(q, 1, 4, view)[0].rows(), 2u);
  if (!verify::amx_supported()) {
    EXPECT_THROW(verify::similarity_maps_bf16(q, 1, 4, view, verify::Bf16Products::amx), ConfigError);
  }
}

// What explain draws is stage2_map: the scores of score_texts must be the
// verifiers' formulas on exactly that map, on any CPU (bf16 or exact products).
TEST(Bf16Maps, Stage2MapIsTheMapScoreTextsScores) {
  std::mt19937 rng(11);
  std::normal_distribution<float> g;
  const size_t dim = 48;
  std::vector<float> q(5 * dim), c(9 * dim);
  for (auto& v : q) v = g(rng);
  for (auto& v : c) v = g(rng);
  const verify::TextTokens query{q, {}, {}}, cand{c, {}, {}};
  const auto map = verify::stage2_map(query, cand, dim);
  ASSERT_EQ(map.rows(), 5u);
  ASSERT_EQ(map.cols(), 9u);
  double sum = 0, maxsim = 0;
  for (size_t i = 0; i < map.rows(); ++i) {
    float best = -2;
    for (size_t j = 0; j < map.cols(); ++j) sum += map.at(i, j), best = std::max(best, map.at(i, j));
    maxsim += best;
  }
  const auto f0 = verify::make_verifier("f0"), f1 = verify::make_verifier("f1");
  EXPECT_NEAR(verify::score_texts(*f0, query, std::span(&cand, 1), dim)[0], sum / double(5 * 9), 1e-6);
  EXPECT_NEAR(verify::score_texts(*f1, query, std::span(&cand, 1), dim)[0], maxsim / 5.0, 1e-6);
  const auto exact = SimilarityMap::compute(q, c, dim);
  double worst = 0;
  for (size_t i = 0; i < map.rows(); ++i)
    for (size_t j = 0; j < map.cols(); ++j) worst = std::max(worst, double(std::fabs(map.at(i, j) - exact.at(i, j))));
  EXPECT_LE(worst, verify::use_bf16_maps() ? kWorstCase : 1e-6);
  EXPECT_THROW(verify::stage2_map(query, verify::TextTokens{std::span(c).first(dim + 1), {}, {}}, dim), ConfigError);
}
