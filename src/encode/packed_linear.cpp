#include "encode/packed_linear.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/error.hpp"

namespace verity::encode {
namespace {

constexpr size_t kP = PackedLinear::kPanel;
constexpr size_t kRowBlock = 6;   // rows per register block: 12 accumulators + 2 weights + 1 broadcast
constexpr size_t kRowChunk = 48;  // rows per pass over the panels, so a chunk of x stays in L2

// Writes a kP-wide result row to y, only the first `cols` columns.
inline void store_row(const float* tmp, float* y, size_t cols) { std::memcpy(y, tmp, cols * sizeof(float)); }

template <size_t R>
__attribute__((target("avx2,fma"))) void block_avx2(const float* x, size_t ldx, const float* w,
                                                    const float* bias, size_t k_len, float* y,
                                                    size_t ldy, size_t cols, bool relu) {
  __m256 lo[R], hi[R];
  const __m256 b0 = _mm256_loadu_ps(bias), b1 = _mm256_loadu_ps(bias + 8);
#pragma GCC unroll 8
  for (size_t r = 0; r < R; ++r) lo[r] = b0, hi[r] = b1;
  for (size_t k = 0; k < k_len; ++k) {
    const __m256 w0 = _mm256_loadu_ps(w + k * kP), w1 = _mm256_loadu_ps(w + k * kP + 8);
#pragma GCC unroll 8
    for (size_t r = 0; r < R; ++r) {
      const __m256 xv = _mm256_broadcast_ss(x + r * ldx + k);
      lo[r] = _mm256_fmadd_ps(xv, w0, lo[r]);
      hi[r] = _mm256_fmadd_ps(xv, w1, hi[r]);
    }
  }
  const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 8
  for (size_t r = 0; r < R; ++r) {
    if (relu) lo[r] = _mm256_max_ps(lo[r], zero), hi[r] = _mm256_max_ps(hi[r], zero);
    if (cols == kP) {
      _mm256_storeu_ps(y + r * ldy, lo[r]);
      _mm256_storeu_ps(y + r * ldy + 8, hi[r]);
    } else {
      alignas(32) float tmp[kP];
      _mm256_store_ps(tmp, lo[r]);
      _mm256_store_ps(tmp + 8, hi[r]);
      store_row(tmp, y + r * ldy, cols);
    }
  }
}

template <size_t R>
__attribute__((target("avx512f"))) void block_avx512(const float* x, size_t ldx, const float* w,
                                                     const float* bias, size_t k_len, float* y,
                                                     size_t ldy, size_t cols, bool relu) {
  __m512 acc[R];
  const __m512 b = _mm512_loadu_ps(bias);
#pragma GCC unroll 16
  for (size_t r = 0; r < R; ++r) acc[r] = b;
  for (size_t k = 0; k < k_len; ++k) {
    const __m512 wv = _mm512_loadu_ps(w + k * kP);
#pragma GCC unroll 16
    for (size_t r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * ldx + k]), wv, acc[r]);
  }
  const __mmask16 mask = cols == kP ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
  const __m512 zero = _mm512_setzero_ps();
  // maskz_max: _mm512_max_ps's undefined pass-through trips GCC 12's
  // maybe-uninitialized warning once the loops are unrolled.
#pragma GCC unroll 16
  for (size_t r = 0; r < R; ++r)
    _mm512_mask_storeu_ps(y + r * ldy, mask, relu ? _mm512_maskz_max_ps(0xFFFF, acc[r], zero) : acc[r]);
}

// Runs block(integral_constant<R>, first_row) over `rows` in blocks of B rows,
// and the remainder (1 .. B-1 rows) as one block of its own size, so every
// register block has a compile-time row count.
template <size_t B, class Block>
void by_row_blocks(size_t rows, Block&& block) {
  size_t r = 0;
  for (; r + B <= rows; r += B) block(std::integral_constant<size_t, B>{}, r);
  [&]<size_t... R>(std::index_sequence<R...>) {
    ((rows - r == R + 1 ? block(std::integral_constant<size_t, R + 1>{}, r) : void()), ...);
  }(std::make_index_sequence<B - 1>{});
}

void rows_avx2(const float* x, size_t rows, size_t ldx, const float* w, const float* bias, size_t k_len, float* y,
               size_t ldy, size_t cols, bool relu) {
  by_row_blocks<kRowBlock>(rows, [&](auto n, size_t r) {
    block_avx2<n.value>(x + r * ldx, ldx, w, bias, k_len, y + r * ldy, ldy, cols, relu);
  });
}

// 12 rows a block on AVX-512: 12 accumulators of the 32 registers, one weight
// row, broadcasts.
constexpr size_t kRowBlock512 = 12;

void rows_avx512(const float* x, size_t rows, size_t ldx, const float* w, const float* bias, size_t k_len,
                 float* y, size_t ldy, size_t cols, bool relu) {
  by_row_blocks<kRowBlock512>(rows, [&](auto n, size_t r) {
    block_avx512<n.value>(x + r * ldx, ldx, w, bias, k_len, y + r * ldy, ldy, cols, relu);
  });
}

void rows_portable(const float* x, size_t rows, size_t ldx, const float* w, const float* bias, size_t k_len,
                   float* y, size_t ldy, size_t cols, bool relu) {
  for (size_t r = 0; r < rows; ++r) {
    float acc[kP];
    std::copy(bias, bias + kP, acc);
    for (size_t k = 0; k < k_len; ++k)
      for (size_t c = 0; c < kP; ++c) acc[c] += x[r * ldx + k] * w[k * kP + c];
    if (relu)
      for (float& v : acc) v = std::max(v, 0.0f);
    store_row(acc, y + r * ldy, cols);
  }
}

}  // namespace

PackedLinear::PackedLinear(std::span<const float> weight, std::span<const float> bias, size_t out, size_t in)
    : in_(in), out_(out) {
  VERITY_CHECK(out > 0 && in > 0, ConfigError, "packed linear: shape ", out, "x", in, " must be positive");
  VERITY_CHECK(weight.size() == out * in, ConfigError, "packed linear: weight has ", weight.size(),
               " values, shape ", out, "x", in, " needs ", out * in);
  VERITY_CHECK(bias.size() == out, ConfigError, "packed linear: bias has ", bias.size(), " values, expected ", out);
  panels_.assign(panels() * in * kP, 0.0f);
  bias_.assign(panels() * kP, 0.0f);
  for (size_t n = 0; n < out; ++n) {
    const size_t p = n / kP, c = n % kP;
    for (size_t k = 0; k < in; ++k) panels_[(p * in + k) * kP + c] = weight[n * in + k];
    bias_[n] = bias[n];
  }
}

void PackedLinear::apply(const float* x, size_t rows, float* y, size_t panel_begin, size_t panel_end, bool relu,
                         Isa isa) const {
  VERITY_CHECK(isa_supported(isa), ConfigError, "packed linear: this CPU has no ", isa_name(isa), " path");
  const auto rows_kernel = isa == Isa::avx512 ? rows_avx512 : isa == Isa::avx2 ? rows_avx2 : rows_portable;
  panel_end = std::min(panel_end, panels());
  for (size_t r0 = 0; r0 < rows; r0 += kRowChunk) {
    const size_t n = std::min(kRowChunk, rows - r0);
    for (size_t p = panel_begin; p < panel_end; ++p) {
      const size_t cols = std::min(kP, out_ - p * kP);
      const float* w = panels_.data() + p * in_ * kP;
      rows_kernel(x + r0 * in_, n, in_, w, bias_.data() + p * kP, in_, y + r0 * out_ + p * kP, out_, cols, relu);
    }
  }
}

const char* PackedLinear::kernel() { return isa_name(best_isa()).data(); }

}  // namespace verity::encode
