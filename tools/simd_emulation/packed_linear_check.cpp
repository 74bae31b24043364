// PackedLinear on every path against double precision, for the emulated
// build of scripts/simd_emulation_check.sh (tests/encode/packed_linear_test.cpp
// needs torch; this check does not).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "encode/packed_linear.hpp"

using namespace verity;
using namespace verity::encode;

TEST(EmulatedPackedLinear, EveryPathMatchesDoublePrecision) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (size_t out : {5, 16, 37, 64})
    for (size_t in : {1, 7, 29}) {
      std::vector<float> w(out * in), b(out);
      for (auto& v : w) v = u(rng);
      for (auto& v : b) v = u(rng);
      PackedLinear packed(w, b, out, in);
      for (size_t rows : {1, 2, 5, 6, 7, 11, 12, 13, 23, 24, 25, 50, 101})
        for (bool relu : {false, true}) {
          std::vector<float> x(rows * in);
          for (auto& v : x) v = u(rng);
          std::vector<double> want(rows * out);
          for (size_t r = 0; r < rows; ++r)
            for (size_t n = 0; n < out; ++n) {
              double s = b[n];
              for (size_t k = 0; k < in; ++k) s += double(x[r * in + k]) * w[n * in + k];
              want[r * out + n] = relu ? std::max(s, 0.0) : s;
            }
          for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
            std::vector<float> y(rows * out, -7.0f);
            packed.apply(x.data(), rows, y.data(), 0, packed.panels(), relu, isa);
            for (size_t i = 0; i < y.size(); ++i)
              ASSERT_NEAR(y[i], want[i], 1e-5) << isa_name(isa) << " out " << out << " in " << in << " rows " << rows;
          }
        }
    }
}
