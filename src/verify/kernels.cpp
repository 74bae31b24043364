#include "verify/kernels.hpp"

// GCC 12's AVX-512 headers initialize their "undefined" vectors from themselves.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace verity::verify::kernels {
namespace {

// exp(x) = 2^n · exp(r), n = round(x / ln 2), r = x - n ln 2 in [-ln2/2, ln2/2],
// exp(r) by Cephes' degree-6 polynomial. x is clamped to float's normal range
// (the callers pass x <= 0, so the clamp only turns underflow into 2^-126).
constexpr float kExpHi = 88.3762626647949f, kExpLo = -87.3365478515625f;
constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f, kP3 = 4.1665795894e-2f,
                kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

#define VERITY_AVX2 __attribute__((target("avx2,fma")))
#define VERITY_AVX512 __attribute__((target("avx512f")))

VERITY_AVX2 inline __m256 exp_avx2(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpLo)), _mm256_set1_ps(kExpHi));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kP0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP5));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

VERITY_AVX2 inline float hsum_avx2(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
  return _mm_cvtss_f32(s);
}

VERITY_AVX2 inline float hmax_avx2(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 0x55));
  return _mm_cvtss_f32(s);
}

// Lanes [0, count) set, for the tail of a row.
VERITY_AVX2 inline __m256i tail_mask_avx2(size_t count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(count)), lanes);
}

VERITY_AVX2 float max_value_avx2(const float* v, size_t m) {
  const size_t full = m / 8 * 8;
  __m256 mx = _mm256_set1_ps(-INFINITY);
  for (size_t j = 0; j < full; j += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(v + j));
  float top = hmax_avx2(mx);
  for (size_t j = full; j < m; ++j) top = std::max(top, v[j]);
  return top;
}

VERITY_AVX2 float softmax_mean_avx2(const float* l, const float* v, size_t m, float scale) {
  const size_t full = m / 8 * 8, rest = m - full;
  const __m256i tail = tail_mask_avx2(rest);
  __m256 mx = _mm256_set1_ps(-INFINITY);
  for (size_t j = 0; j < full; j += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(l + j));
  float top = hmax_avx2(mx);
  for (size_t j = full; j < m; ++j) top = std::max(top, l[j]);
  const __m256 s = _mm256_set1_ps(scale), shift = _mm256_set1_ps(top);
  __m256 z = _mm256_setzero_ps(), acc = _mm256_setzero_ps();
  for (size_t j = 0; j < full; j += 8) {
    const __m256 e = exp_avx2(_mm256_mul_ps(s, _mm256_sub_ps(_mm256_loadu_ps(l + j), shift)));
    z = _mm256_add_ps(z, e);
    acc = _mm256_fmadd_ps(e, _mm256_loadu_ps(v + j), acc);
  }
  if (rest) {
    const __m256 keep = _mm256_castsi256_ps(tail);
    const __m256 x = _mm256_maskload_ps(l + full, tail);
    const __m256 e = _mm256_and_ps(exp_avx2(_mm256_mul_ps(s, _mm256_sub_ps(x, shift))), keep);
    z = _mm256_add_ps(z, e);
    acc = _mm256_fmadd_ps(e, _mm256_maskload_ps(v + full, tail), acc);
  }
  return hsum_avx2(acc) / hsum_avx2(z);
}

VERITY_AVX2 void column_softmax_mean_avx2(const float* l, const float* v, size_t n, size_t m, float scale,
                                          float* out) {
  const __m256 s = _mm256_set1_ps(scale);
  for (size_t j = 0; j < m; j += 8) {
    const size_t lanes = std::min<size_t>(8, m - j);
    const __m256i mask = tail_mask_avx2(lanes);
    __m256 top = _mm256_set1_ps(-INFINITY);
    for (size_t i = 0; i < n; ++i) top = _mm256_max_ps(top, _mm256_maskload_ps(l + i * m + j, mask));
    __m256 z = _mm256_setzero_ps(), acc = _mm256_setzero_ps();
    for (size_t i = 0; i < n; ++i) {
      const __m256 e = exp_avx2(_mm256_mul_ps(s, _mm256_sub_ps(_mm256_maskload_ps(l + i * m + j, mask), top)));
      z = _mm256_add_ps(z, e);
      acc = _mm256_fmadd_ps(e, _mm256_maskload_ps(v + i * m + j, mask), acc);
    }
    _mm256_maskstore_ps(out + j, mask, _mm256_div_ps(acc, z));
  }
}

VERITY_AVX512 inline __m512 exp_avx512(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(kExpLo)), _mm512_set1_ps(kExpHi));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kP0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP5));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

VERITY_AVX512 float max_value_avx512(const float* v, size_t m) {
  const size_t full = m / 16 * 16, rest = m - full;
  __m512 mx = _mm512_set1_ps(-INFINITY);
  for (size_t j = 0; j < full; j += 16) mx = _mm512_max_ps(mx, _mm512_loadu_ps(v + j));
  if (rest) {
    const __mmask16 tail = __mmask16((1u << rest) - 1u);
    mx = _mm512_mask_max_ps(mx, tail, mx, _mm512_maskz_loadu_ps(tail, v + full));
  }
  return _mm512_reduce_max_ps(mx);
}

VERITY_AVX512 float softmax_mean_avx512(const float* l, const float* v, size_t m, float scale) {
  const size_t full = m / 16 * 16, rest = m - full;
  const __mmask16 tail = __mmask16((1u << rest) - 1u);
  __m512 mx = _mm512_set1_ps(-INFINITY);
  for (size_t j = 0; j < full; j += 16) mx = _mm512_max_ps(mx, _mm512_loadu_ps(l + j));
  if (rest) mx = _mm512_mask_max_ps(mx, tail, mx, _mm512_maskz_loadu_ps(tail, l + full));
  const float top = _mm512_reduce_max_ps(mx);
  const __m512 s = _mm512_set1_ps(scale), shift = _mm512_set1_ps(top);
  __m512 z = _mm512_setzero_ps(), acc = _mm512_setzero_ps();
  for (size_t j = 0; j < full; j += 16) {
    const __m512 e = exp_avx512(_mm512_mul_ps(s, _mm512_sub_ps(_mm512_loadu_ps(l + j), shift)));
    z = _mm512_add_ps(z, e);
    acc = _mm512_fmadd_ps(e, _mm512_loadu_ps(v + j), acc);
  }
  if (rest) {
    const __m512 x = _mm512_maskz_loadu_ps(tail, l + full);
    const __m512 e = _mm512_maskz_mov_ps(tail, exp_avx512(_mm512_mul_ps(s, _mm512_sub_ps(x, shift))));
    z = _mm512_add_ps(z, e);
    acc = _mm512_fmadd_ps(e, _mm512_maskz_loadu_ps(tail, v + full), acc);
  }
  return _mm512_reduce_add_ps(acc) / _mm512_reduce_add_ps(z);
}

VERITY_AVX512 void column_softmax_mean_avx512(const float* l, const float* v, size_t n, size_t m, float scale,
                                              float* out) {
  const __m512 s = _mm512_set1_ps(scale);
  for (size_t j = 0; j < m; j += 16) {
    const size_t lanes = std::min<size_t>(16, m - j);
    const __mmask16 mask = __mmask16((1u << lanes) - 1u);
    __m512 top = _mm512_set1_ps(-INFINITY);
    for (size_t i = 0; i < n; ++i) top = _mm512_max_ps(top, _mm512_maskz_loadu_ps(mask, l + i * m + j));
    __m512 z = _mm512_setzero_ps(), acc = _mm512_setzero_ps();
    for (size_t i = 0; i < n; ++i) {
      const __m512 e = exp_avx512(_mm512_mul_ps(s, _mm512_sub_ps(_mm512_maskz_loadu_ps(mask, l + i * m + j), top)));
      z = _mm512_add_ps(z, e);
      acc = _mm512_fmadd_ps(e, _mm512_maskz_loadu_ps(mask, v + i * m + j), acc);
    }
    _mm512_mask_storeu_ps(out + j, mask, _mm512_div_ps(acc, z));
  }
}

float softmax_mean_portable(const float* l, const float* v, size_t m, float scale) {
  const float top = *std::max_element(l, l + m);
  float z = 0, acc = 0;
  for (size_t j = 0; j < m; ++j) {
    const float e = std::exp(scale * (l[j] - top));
    z += e, acc += e * v[j];
  }
  return acc / z;
}

void affine_rows_portable(const float* x, size_t rows, size_t ldx, size_t k, const float* w, const float* bias,
                          size_t h, bool relu, float* y) {
  for (size_t t = 0; t < rows; ++t) {
    float* out = y + t * h;
    std::copy(bias, bias + h, out);
    const float* in = x + t * ldx;
    for (size_t c = 0; c < k; ++c) {
      const float a = in[c];
      if (a == 0.0f) continue;  // masked features and relu zeros
      const float* wr = w + c * h;
      for (size_t o = 0; o < h; ++o) out[o] += a * wr[o];
    }
    if (relu)
      for (size_t o = 0; o < h; ++o) out[o] = std::max(out[o], 0.0f);
  }
}

// Outputs [from, h) of `rows` consecutive rows, one at a time.
inline void affine_outputs_portable(const float* x, size_t rows, size_t ldx, size_t k, const float* w,
                                    const float* bias, size_t h, size_t from, bool relu, float* y) {
  for (size_t r = 0; r < rows; ++r) {
    const float* in = x + r * ldx;
    float* out = y + r * h;
    for (size_t q = from; q < h; ++q) {
      float s = bias[q];
      for (size_t c = 0; c < k; ++c) s += in[c] * w[c * h + q];
      out[q] = relu ? std::max(s, 0.0f) : s;
    }
  }
}

// Outputs in blocks of up to 4 vectors, two rows at a time: 8 independent
// accumulators keep both FMA ports busy.
template <int B>
VERITY_AVX2 inline void affine_block_avx2(const float* x0, const float* x1, size_t k, const float* w, const float* bias,
                                          size_t h, size_t o, bool relu, float* y0, float* y1) {
  __m256 a0[B], a1[B];
  for (int b = 0; b < B; ++b) a0[b] = a1[b] = _mm256_loadu_ps(bias + o + 8 * b);
  for (size_t c = 0; c < k; ++c) {
    const float* wr = w + c * h + o;
    const __m256 u = _mm256_set1_ps(x0[c]);
    const __m256 v = _mm256_set1_ps(x1[c]);
    for (int b = 0; b < B; ++b) {
      const __m256 wv = _mm256_loadu_ps(wr + 8 * b);
      a0[b] = _mm256_fmadd_ps(u, wv, a0[b]);
      a1[b] = _mm256_fmadd_ps(v, wv, a1[b]);
    }
  }
  const __m256 zero = _mm256_setzero_ps();
  for (int b = 0; b < B; ++b) {
    _mm256_storeu_ps(y0 + o + 8 * b, relu ? _mm256_max_ps(a0[b], zero) : a0[b]);
    if (y1) _mm256_storeu_ps(y1 + o + 8 * b, relu ? _mm256_max_ps(a1[b], zero) : a1[b]);
  }
}

VERITY_AVX2 void affine_rows_avx2(const float* x, size_t rows, size_t ldx, size_t k, const float* w, const float* bias,
                                  size_t h, bool relu, float* y) {
  for (size_t t = 0; t < rows; t += 2) {
    const bool pair = t + 1 < rows;
    const float* x0 = x + t * ldx;
    const float* x1 = pair ? x0 + ldx : x0;  // a lone last row is computed twice, stored once
    float* y0 = y + t * h;
    float* y1 = pair ? y0 + h : nullptr;
    size_t o = 0;
    for (; o + 32 <= h; o += 32) affine_block_avx2<4>(x0, x1, k, w, bias, h, o, relu, y0, y1);
    for (; o + 16 <= h; o += 16) affine_block_avx2<2>(x0, x1, k, w, bias, h, o, relu, y0, y1);
    for (; o + 8 <= h; o += 8) affine_block_avx2<1>(x0, x1, k, w, bias, h, o, relu, y0, y1);
    // h not a multiple of the vector width: the last outputs the portable way
    affine_outputs_portable(x0, pair ? 2 : 1, ldx, k, w, bias, h, o, relu, y0);
  }
}

// Outputs in blocks of up to 4 vectors for R rows at a time. F5's hidden
// width is 32 (two vectors): four rows give the 8 independent accumulators
// that keep both FMA ports busy, where two rows leave half their cycles
// waiting on the FMA latency. Each output's sum runs over c in order, so the
// row grouping changes no bit.
template <int B, int R>
VERITY_AVX512 inline void affine_block_avx512(const float* const* x, size_t k, const float* w, const float* bias,
                                              size_t h, size_t o, bool relu, float* const* y, int stored) {
  __m512 a[R][B];
  for (int r = 0; r < R; ++r)
    for (int b = 0; b < B; ++b) a[r][b] = _mm512_loadu_ps(bias + o + 16 * b);
  for (size_t c = 0; c < k; ++c) {
    const float* wr = w + c * h + o;
    __m512 u[R];
    for (int r = 0; r < R; ++r) u[r] = _mm512_set1_ps(x[r][c]);
    for (int b = 0; b < B; ++b) {
      const __m512 wv = _mm512_loadu_ps(wr + 16 * b);
      for (int r = 0; r < R; ++r) a[r][b] = _mm512_fmadd_ps(u[r], wv, a[r][b]);
    }
  }
  const __m512 zero = _mm512_setzero_ps();
  for (int r = 0; r < stored; ++r)
    for (int b = 0; b < B; ++b) _mm512_storeu_ps(y[r] + o + 16 * b, relu ? _mm512_max_ps(a[r][b], zero) : a[r][b]);
}

// R rows from row t (rows past the last repeat it and are not stored).
template <int R>
VERITY_AVX512 void affine_row_group_avx512(const float* x, size_t rows, size_t t, size_t ldx, size_t k, const float* w,
                                           const float* bias, size_t h, bool relu, float* y) {
  const float* xs[R];
  float* ys[R];
  const int stored = int(std::min<size_t>(R, rows - t));
  for (int r = 0; r < R; ++r) {
    const size_t row = t + size_t(std::min(r, stored - 1));
    xs[r] = x + row * ldx, ys[r] = y + row * h;
  }
  size_t o = 0;
  for (; o + 64 <= h; o += 64) affine_block_avx512<4, R>(xs, k, w, bias, h, o, relu, ys, stored);  // 16 of 32 registers
  for (; o + 32 <= h; o += 32) affine_block_avx512<2, R>(xs, k, w, bias, h, o, relu, ys, stored);
  for (; o + 16 <= h; o += 16) affine_block_avx512<1, R>(xs, k, w, bias, h, o, relu, ys, stored);
  affine_outputs_portable(x + t * ldx, size_t(stored), ldx, k, w, bias, h, o, relu, y + t * h);
}

VERITY_AVX512 void affine_rows_avx512(const float* x, size_t rows, size_t ldx, size_t k, const float* w,
                                      const float* bias, size_t h, bool relu, float* y) {
  size_t t = 0;
  for (; t + 4 <= rows; t += 4) affine_row_group_avx512<4>(x, rows, t, ldx, k, w, bias, h, relu, y);
  for (; t < rows; t += 2) affine_row_group_avx512<2>(x, rows, t, ldx, k, w, bias, h, relu, y);
}

}  // namespace


float max_value(const float* values, size_t m, Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return max_value_avx512(values, m);
    case Isa::avx2:
      return max_value_avx2(values, m);
    case Isa::portable:
      break;
  }
  return *std::max_element(values, values + m);
}

float softmax_mean(const float* logits, const float* values, size_t m, float scale, Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return softmax_mean_avx512(logits, values, m, scale);
    case Isa::avx2:
      return softmax_mean_avx2(logits, values, m, scale);
    case Isa::portable:
      break;
  }
  return softmax_mean_portable(logits, values, m, scale);
}

void column_softmax_mean(const float* logits, const float* values, size_t n, size_t m, float scale, float* out,
                         Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return column_softmax_mean_avx512(logits, values, n, m, scale, out);
    case Isa::avx2:
      return column_softmax_mean_avx2(logits, values, n, m, scale, out);
    case Isa::portable:
      break;
  }
  std::vector<float> top(m, -INFINITY), z(m, 0.0f), acc(m, 0.0f);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < m; ++j) top[j] = std::max(top[j], logits[i * m + j]);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < m; ++j) {
      const float e = std::exp(scale * (logits[i * m + j] - top[j]));
      z[j] += e, acc[j] += e * values[i * m + j];
    }
  for (size_t j = 0; j < m; ++j) out[j] = acc[j] / z[j];
}

void affine_rows(const float* x, size_t rows, size_t ldx, size_t k, const float* w, const float* bias, size_t h,
                 bool relu, float* y, Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return affine_rows_avx512(x, rows, ldx, k, w, bias, h, relu, y);
    case Isa::avx2:
      return affine_rows_avx2(x, rows, ldx, k, w, bias, h, relu, y);
    case Isa::portable:
      break;
  }
  affine_rows_portable(x, rows, ldx, k, w, bias, h, relu, y);
}

}  // namespace verity::verify::kernels
