// PackedLinear on every path against double precision. Torch-free, so
// scripts/simd_emulation_check.sh also builds it with emulated intrinsics.
#include "encode/packed_linear.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.hpp"

namespace verity::encode {
namespace {

std::vector<float> random_values(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// y = x · Wᵀ + b in double, the oracle.
std::vector<double> reference(const std::vector<float>& x, size_t rows, const std::vector<float>& w,
                              const std::vector<float>& b, size_t out, size_t in, bool relu) {
  std::vector<double> y(rows * out);
  for (size_t r = 0; r < rows; ++r)
    for (size_t n = 0; n < out; ++n) {
      double s = b[n];
      for (size_t k = 0; k < in; ++k) s += double(x[r * in + k]) * double(w[n * in + k]);
      y[r * out + n] = relu ? std::max(s, 0.0) : s;
    }
  return y;
}

// Every path this CPU runs (the others are checked where a CPU has them).
std::vector<Isa> paths() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

// Row counts cover every register-block remainder (6 rows a block on AVX2,
// 12 on AVX-512) and more than one row chunk; 37 outputs leave a partial last
// panel.
TEST(PackedLinear, MatchesReferenceForEveryRowCountAndPartialPanel) {
  for (Isa isa : paths())
    for (size_t out : {16, 37, 64}) {
      const size_t in = 29;
      auto w = random_values(out * in, 1 + out), b = random_values(out, 2 + out);
      PackedLinear packed(w, b, out, in);
      EXPECT_EQ(packed.panels(), (out + 15) / 16);
      for (size_t rows : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 25, 50, 101})
        for (bool relu : {false, true}) {
          auto x = random_values(rows * in, 3 + rows);
          std::vector<float> y(rows * out, -7.0f);
          packed.apply(x.data(), rows, y.data(), 0, packed.panels(), relu, isa);
          auto want = reference(x, rows, w, b, out, in, relu);
          for (size_t i = 0; i < y.size(); ++i)
            ASSERT_NEAR(y[i], want[i], 1e-5)
                << isa_name(isa) << " out " << out << " rows " << rows << " relu " << relu << " at " << i;
        }
    }
  EXPECT_EQ(std::string_view(PackedLinear::kernel()), isa_name(best_isa()));
}

TEST(PackedLinear, PanelRangesWriteOnlyTheirColumns) {
  const size_t out = 48, in = 8, rows = 3;
  auto w = random_values(out * in, 5), b = random_values(out, 6), x = random_values(rows * in, 7);
  PackedLinear packed(w, b, out, in);
  auto want = reference(x, rows, w, b, out, in, false);
  for (Isa isa : paths()) {
    std::vector<float> y(rows * out, -7.0f);
    packed.apply(x.data(), rows, y.data(), 1, 2, false, isa);
    for (size_t r = 0; r < rows; ++r)
      for (size_t n = 0; n < out; ++n) {
        if (n >= 16 && n < 32) EXPECT_NEAR(y[r * out + n], want[r * out + n], 1e-5) << isa_name(isa);
        else EXPECT_EQ(y[r * out + n], -7.0f) << isa_name(isa) << ": column " << n << " is outside panel 1";
      }
  }
  // A path the CPU lacks is an error, not a crash.
  for (Isa isa : {Isa::avx2, Isa::avx512})
    if (!isa_supported(isa)) {
      std::vector<float> y(rows * out);
      EXPECT_THROW(packed.apply(x.data(), rows, y.data(), 0, 1, false, isa), ConfigError);
    }
}

TEST(PackedLinear, RejectsMismatchedShapes) {
  std::vector<float> w(12), b(3);
  EXPECT_THROW(PackedLinear(w, b, 3, 5), ConfigError);
  EXPECT_THROW(PackedLinear(w, std::vector<float>(4), 3, 4), ConfigError);
  EXPECT_NO_THROW(PackedLinear(w, b, 3, 4));
}

}  // namespace
}  // namespace verity::encode
