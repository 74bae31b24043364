#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "verify/kernels.hpp"

using namespace verity::verify::kernels;

namespace {

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

std::vector<float> uniform(size_t n, float lo, float hi, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

double softmax_mean_reference(const std::vector<float>& l, const std::vector<float>& v, double scale) {
  double top = -INFINITY, z = 0, acc = 0;
  for (float x : l) top = std::max(top, double(x));
  for (size_t j = 0; j < l.size(); ++j) {
    const double e = std::exp(scale * (double(l[j]) - top));
    z += e, acc += e * v[j];
  }
  return acc / z;
}

}  // namespace

TEST(Kernels, BestIsaIsSupportedAndPortableAlwaysIs) {
  EXPECT_TRUE(isa_supported(Isa::portable));
  EXPECT_TRUE(isa_supported(best_isa()));
  EXPECT_EQ(isa_name(Isa::avx2), "avx2");
}

TEST(Kernels, SoftmaxMeanMatchesDoublePrecisionOnEveryPath) {
  std::mt19937 rng(3);
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    for (size_t m : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 128, 131}) {
      for (float scale : {1.0f, 10.0f, 100.0f}) {
        const auto l = uniform(m, -1.0f, 1.0f, rng), v = uniform(m, -1.0f, 1.0f, rng);
        const double want = softmax_mean_reference(l, v, scale);
        EXPECT_NEAR(softmax_mean(l.data(), v.data(), m, scale, isa), want, 2e-6 + 1e-5 * std::fabs(want))
            << "m=" << m << " scale=" << scale;
      }
    }
  }
}

TEST(Kernels, MaxValueOnEveryPath) {
  std::mt19937 rng(4);
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    for (size_t m : {1, 3, 8, 15, 16, 17, 40, 128}) {
      auto v = uniform(m, -1.0f, 0.0f, rng);
      for (size_t at : {size_t(0), m / 2, m - 1}) {
        auto w = v;
        w[at] = 0.5f;
        EXPECT_EQ(max_value(w.data(), m, isa), 0.5f) << "m=" << m << " at=" << at;
      }
    }
  }
}

TEST(Kernels, ColumnSoftmaxMeanIsTheRowKernelOnTheTranspose) {
  std::mt19937 rng(6);
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    for (auto [n, m] : std::vector<std::pair<size_t, size_t>>{{1, 1}, {3, 7}, {16, 128}, {5, 17}, {128, 16}, {2, 33}}) {
      const auto l = uniform(n * m, -1.0f, 1.0f, rng), v = uniform(n * m, -1.0f, 1.0f, rng);
      std::vector<float> out(m + 1, 42.0f);
      column_softmax_mean(l.data(), v.data(), n, m, 10.0f, out.data(), isa);
      for (size_t j = 0; j < m; ++j) {
        std::vector<float> lc(n), vc(n);
        for (size_t i = 0; i < n; ++i) lc[i] = l[i * m + j], vc[i] = v[i * m + j];
        const double want = softmax_mean_reference(lc, vc, 10.0);
        ASSERT_NEAR(out[j], want, 2e-6 + 1e-5 * std::fabs(want)) << "n=" << n << " m=" << m << " j=" << j;
      }
      EXPECT_EQ(out[m], 42.0f) << "wrote past the end";
    }
  }
}

TEST(Kernels, SoftmaxMeanIgnoresLanesPastTheEndAndUnderflows) {
  // The tail lanes must not leak into the sums: values past m are huge.
  std::vector<float> l = {0.0f, -1.0f, -2.0f, 1e30f, 1e30f}, v = {1.0f, 2.0f, 3.0f, 1e30f, 1e30f};
  // Far below the maximum, exp underflows: the mean is the maximum's value.
  std::vector<float> far = {0.0f, -50.0f}, far_v = {4.0f, 9.0f};
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    const double want = softmax_mean_reference({0.0f, -1.0f, -2.0f}, {1.0f, 2.0f, 3.0f}, 1.0);
    EXPECT_NEAR(softmax_mean(l.data(), v.data(), 3, 1.0f, isa), want, 1e-6);
    EXPECT_NEAR(softmax_mean(far.data(), far_v.data(), 2, 100.0f, isa), 4.0, 1e-6);
  }
}

TEST(Kernels, AffineRowsMatchesDoublePrecisionOnEveryPath) {
  std::mt19937 rng(5);
  struct Shape {
    size_t rows, k, h, ldx;
  };
  // Includes outputs that are not a multiple of the vector width, row counts
  // past a group of four (5-7, 9), and overlapping rows (ldx < k, the
  // convolution's layout).
  const std::vector<Shape> shapes = {{1, 1, 1, 1},    {1, 15, 32, 15}, {2, 15, 32, 15}, {7, 96, 32, 32},
                                     {5, 211, 64, 211}, {3, 9, 13, 9},  {4, 20, 70, 20},  {6, 48, 16, 16},
                                     {3, 40, 24, 40},   {9, 20, 96, 20}};
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    for (const auto& s : shapes) {
      for (bool relu : {false, true}) {
        const auto x = uniform((s.rows - 1) * s.ldx + s.k, -1.0f, 1.0f, rng);
        const auto w = uniform(s.k * s.h, -1.0f, 1.0f, rng), b = uniform(s.h, -1.0f, 1.0f, rng);
        std::vector<float> y(s.rows * s.h, 123.0f);
        affine_rows(x.data(), s.rows, s.ldx, s.k, w.data(), b.data(), s.h, relu, y.data(), isa);
        for (size_t t = 0; t < s.rows; ++t)
          for (size_t o = 0; o < s.h; ++o) {
            double want = b[o];
            for (size_t c = 0; c < s.k; ++c) want += double(x[t * s.ldx + c]) * w[c * s.h + o];
            if (relu) want = std::max(want, 0.0);
            ASSERT_NEAR(y[t * s.h + o], want, 1e-4) << "rows=" << s.rows << " k=" << s.k << " h=" << s.h
                                                     << " t=" << t << " o=" << o << " relu=" << relu;
          }
      }
    }
  }
}
