// bf16 similarity maps (see bf16_maps.hpp). Rows are converted to bf16 with a
// stride padded to 32 (one vdpbf16ps step) and zero-filled, so any dim works.
#include "verify/bf16_maps.hpp"

// GCC 12's AVX-512 headers initialize their "undefined" vectors from themselves.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <ATen/Parallel.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/cpu_features.hpp"
#include "core/error.hpp"

namespace verity::verify {
namespace {

constexpr size_t kStep = 32;  // bf16 values per vdpbf16ps

size_t padded(size_t dim) { return (dim + kStep - 1) / kStep * kStep; }

#define VERITY_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,f16c")))

// 16 values of row r from column k (lanes outside m are 0), as fp32.
VERITY_BF16_TARGET inline __m512 load16(const TokenRows& rows, size_t r, size_t dim, size_t k,
                                        __mmask16 m) {
  switch (rows.codes) {
    case RowCodes::f32:
      return _mm512_maskz_loadu_ps(m, static_cast<const float*>(rows.data) + r * dim + k);
    case RowCodes::f16:
      return _mm512_cvtph_ps(
          _mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(rows.data) + r * dim + k));
    case RowCodes::i8:
      return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(
                               m, static_cast<const int8_t*>(rows.data) + r * dim + k))),
                           _mm512_set1_ps(rows.scales[r]));
  }
  return _mm512_setzero_ps();
}

VERITY_BF16_TARGET inline void store_bf16(uint16_t* dst, __m512 x) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), (__m256i)_mm512_cvtneps_pbh(x));
}

// Writes row r times `mul` as bf16 into o[0, stride) (zero beyond dim) and
// returns the sum of squares of the unscaled row, in one pass over the codes.
VERITY_BF16_TARGET float convert_row(const TokenRows& rows, size_t r, size_t dim, size_t stride,
                                     float mul, uint16_t* o) {
  const size_t full = dim / 16 * 16;
  const auto tail = __mmask16((1u << (dim - full)) - 1u);
  const __m512 scale = _mm512_set1_ps(mul);
  __m512 sq = _mm512_setzero_ps();
  size_t k = 0;
  for (; k < full + (tail ? 16 : 0); k += 16) {
    const __m512 x = load16(rows, r, dim, k, k < full ? __mmask16(0xffff) : tail);
    sq = _mm512_fmadd_ps(x, x, sq);
    store_bf16(o + k, _mm512_mul_ps(x, scale));
  }
  std::fill(o + k, o + stride, uint16_t(0));
  return _mm512_reduce_add_ps(sq);
}

float inverse_norm(float sum_of_squares) {
  return sum_of_squares > 0 ? 1.0f / std::sqrt(sum_of_squares) : 0.0f;
}

// Converts rows.n rows into bf16 rows of stride `stride` and writes each row's
// inverse fp32 norm (0 for a zero row). normalize: the rows are scaled to unit
// length before rounding (the query: converted a second time, once its norm is
// known); otherwise the caller applies inv_norm to the products (candidates,
// read once).
VERITY_BF16_TARGET void to_bf16_rows(const TokenRows& rows, size_t dim, size_t stride,
                                     uint16_t* out, float* inv_norm, bool normalize) {
  for (size_t r = 0; r < rows.n; ++r) {
    uint16_t* o = out + r * stride;
    inv_norm[r] = inverse_norm(convert_row(rows, r, dim, stride, 1.0f, o));
    if (normalize) convert_row(rows, r, dim, stride, inv_norm[r], o);
  }
}

VERITY_BF16_TARGET inline __m512bh bf16_at(const uint16_t* p) {
  return (__m512bh)_mm512_loadu_si512(p);
}

VERITY_BF16_TARGET float dot1(const uint16_t* a, const uint16_t* b, size_t stride) {
  __m512 acc = _mm512_setzero_ps();
  for (size_t k = 0; k < stride; k += kStep) acc = _mm512_dpbf16_ps(acc, bf16_at(a + k), bf16_at(b + k));
  return _mm512_reduce_add_ps(acc);
}

// out[i * n + j] = <q_i, c_j> · inv_c[j], clamped to [-1, 1]. Four query rows ×
// two candidate rows per step: 8 accumulators, 6 loads per 8 dot instructions.
VERITY_BF16_TARGET void dots_bf16(const uint16_t* q, size_t nq, const uint16_t* c, const float* inv_c,
                                  size_t n, size_t stride, float* out) {
  auto put = [&](size_t i, size_t j, float v) { out[i * n + j] = std::clamp(v * inv_c[j], -1.0f, 1.0f); };
  size_t i = 0;
  for (; i + 4 <= nq; i += 4) {
    const uint16_t* q0 = q + i * stride;
    size_t j = 0;
    for (; j + 2 <= n; j += 2) {
      const uint16_t* c0 = c + j * stride;
      const uint16_t* c1 = c0 + stride;
      __m512 a00 = _mm512_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00,
             a30 = a00, a31 = a00;
      for (size_t k = 0; k < stride; k += kStep) {
        const __m512bh x0 = bf16_at(c0 + k), x1 = bf16_at(c1 + k);
        __m512bh y = bf16_at(q0 + k);
        a00 = _mm512_dpbf16_ps(a00, y, x0), a01 = _mm512_dpbf16_ps(a01, y, x1);
        y = bf16_at(q0 + stride + k);
        a10 = _mm512_dpbf16_ps(a10, y, x0), a11 = _mm512_dpbf16_ps(a11, y, x1);
        y = bf16_at(q0 + 2 * stride + k);
        a20 = _mm512_dpbf16_ps(a20, y, x0), a21 = _mm512_dpbf16_ps(a21, y, x1);
        y = bf16_at(q0 + 3 * stride + k);
        a30 = _mm512_dpbf16_ps(a30, y, x0), a31 = _mm512_dpbf16_ps(a31, y, x1);
      }
      put(i, j, _mm512_reduce_add_ps(a00)), put(i, j + 1, _mm512_reduce_add_ps(a01));
      put(i + 1, j, _mm512_reduce_add_ps(a10)), put(i + 1, j + 1, _mm512_reduce_add_ps(a11));
      put(i + 2, j, _mm512_reduce_add_ps(a20)), put(i + 2, j + 1, _mm512_reduce_add_ps(a21));
      put(i + 3, j, _mm512_reduce_add_ps(a30)), put(i + 3, j + 1, _mm512_reduce_add_ps(a31));
    }
    for (; j < n; ++j)
      for (size_t r = 0; r < 4; ++r) put(i + r, j, dot1(q0 + r * stride, c + j * stride, stride));
  }
  for (; i < nq; ++i)
    for (size_t j = 0; j < n; ++j) put(i, j, dot1(q + i * stride, c + j * stride, stride));
}

}  // namespace

bool bf16_maps_supported() {
  static const bool cpu = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16") &&
                          cpu_has_f16c();
  return cpu;
}

bool use_bf16_maps() {
  static const bool use = [] {
    const char* v = std::getenv("VERITY_MAP_PRECISION");
    const std::string mode = v && *v ? v : "fast";
    VERITY_CHECK(mode == "fast" || mode == "exact", ConfigError, "VERITY_MAP_PRECISION='", mode,
                 "': expected 'fast' (bf16 products where the CPU has AVX512-BF16) or 'exact'");
    // bf16 maps are an AVX-512 path: a pinned slower kernel path turns them off too.
    return mode == "fast" && bf16_maps_supported() && best_isa() == Isa::avx512;
  }();
  return use;
}

std::vector<SimilarityMap> similarity_maps_bf16(std::span<const float> query, size_t count,
                                                size_t dim, const RowsView& view) {
  VERITY_CHECK(bf16_maps_supported(), ConfigError,
               "bf16 similarity maps need a CPU with AVX512-BF16 (set VERITY_MAP_PRECISION=exact)");
  VERITY_CHECK(dim > 0, ConfigError, "similarity map: dim must be positive");
  VERITY_CHECK(query.size() % dim == 0, ConfigError, "similarity map: query (", query.size(),
               " floats) is not a multiple of dim=", dim);
  for (float v : query)
    VERITY_CHECK(std::isfinite(v), ConfigError, "similarity map: query has a non-finite value");
  const size_t nq = query.size() / dim, stride = padded(dim);
  std::vector<uint16_t> q(nq * stride);
  std::vector<float> q_inv(nq);
  to_bf16_rows({RowCodes::f32, query.data(), nullptr, nq}, dim, stride, q.data(), q_inv.data(), true);

  std::vector<SimilarityMap> maps(count);
  at::parallel_for(0, int64_t(count), 8, [&](int64_t begin, int64_t end) {
    std::vector<uint16_t> rows;
    std::vector<float> inv;
    for (int64_t ci = begin; ci < end; ++ci) {
      const TokenRows c = view(size_t(ci));
      VERITY_CHECK(c.n == 0 || c.data != nullptr, ConfigError, "similarity map: candidate ", ci,
                   " has ", c.n, " rows but no data");
      VERITY_CHECK(c.codes != RowCodes::i8 || c.n == 0 || c.scales != nullptr, ConfigError,
                   "similarity map: int8 candidate ", ci, " has no scales");
      std::vector<float> values(nq * c.n, 0.0f);
      if (nq > 0 && c.n > 0) {
        rows.resize(c.n * stride);
        inv.resize(c.n);
        to_bf16_rows(c, dim, stride, rows.data(), inv.data(), false);
        dots_bf16(q.data(), nq, rows.data(), inv.data(), c.n, stride, values.data());
      }
      maps[size_t(ci)] = SimilarityMap(nq, c.n, std::move(values));
    }
  });
  return maps;
}

}  // namespace verity::verify
