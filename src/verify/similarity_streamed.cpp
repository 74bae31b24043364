// Streamed similarity maps: one candidate decoded at a time into a cached
// buffer, dot products by a register-blocked AVX2/FMA kernel when the CPU has
// it (portable loops otherwise).
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/split_work.hpp"
#include "verify/similarity_map.hpp"

namespace verity::verify {
namespace {

// out[i * n + j] = <q_i, c_j> * inv_c[j] for normalized query rows q.
void dots_portable(const float* q, size_t nq, const float* c, const float* inv_c, size_t n,
                   size_t dim, float* out) {
  for (size_t i = 0; i < nq; ++i)
    for (size_t j = 0; j < n; ++j) {
      float s = 0;
      for (size_t k = 0; k < dim; ++k) s += q[i * dim + k] * c[j * dim + k];
      out[i * n + j] = s * inv_c[j];
    }
}

__attribute__((target("avx2,fma"))) inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

// Two candidate rows × four query rows per step: 8 accumulators, 6 loads per
// 8 FMAs. dim must be a multiple of 8.
__attribute__((target("avx2,fma"))) void dots_avx2(const float* q, size_t nq, const float* c,
                                                   const float* inv_c, size_t n, size_t dim,
                                                   float* out) {
  size_t i = 0;
  for (; i + 4 <= nq; i += 4) {
    const float* q0 = q + i * dim;
    size_t j = 0;
    for (; j + 2 <= n; j += 2) {
      const float* c0 = c + j * dim;
      const float* c1 = c0 + dim;
      __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00,
             a30 = a00, a31 = a00;
      for (size_t k = 0; k < dim; k += 8) {
        __m256 x0 = _mm256_loadu_ps(c0 + k), x1 = _mm256_loadu_ps(c1 + k);
        __m256 y = _mm256_loadu_ps(q0 + k);
        a00 = _mm256_fmadd_ps(y, x0, a00), a01 = _mm256_fmadd_ps(y, x1, a01);
        y = _mm256_loadu_ps(q0 + dim + k);
        a10 = _mm256_fmadd_ps(y, x0, a10), a11 = _mm256_fmadd_ps(y, x1, a11);
        y = _mm256_loadu_ps(q0 + 2 * dim + k);
        a20 = _mm256_fmadd_ps(y, x0, a20), a21 = _mm256_fmadd_ps(y, x1, a21);
        y = _mm256_loadu_ps(q0 + 3 * dim + k);
        a30 = _mm256_fmadd_ps(y, x0, a30), a31 = _mm256_fmadd_ps(y, x1, a31);
      }
      const float s0 = inv_c[j], s1 = inv_c[j + 1];
      out[i * n + j] = hsum(a00) * s0, out[i * n + j + 1] = hsum(a01) * s1;
      out[(i + 1) * n + j] = hsum(a10) * s0, out[(i + 1) * n + j + 1] = hsum(a11) * s1;
      out[(i + 2) * n + j] = hsum(a20) * s0, out[(i + 2) * n + j + 1] = hsum(a21) * s1;
      out[(i + 3) * n + j] = hsum(a30) * s0, out[(i + 3) * n + j + 1] = hsum(a31) * s1;
    }
    for (; j < n; ++j)
      for (size_t r = 0; r < 4; ++r) {
        __m256 a = _mm256_setzero_ps();
        for (size_t k = 0; k < dim; k += 8)
          a = _mm256_fmadd_ps(_mm256_loadu_ps(q0 + r * dim + k), _mm256_loadu_ps(c + j * dim + k), a);
        out[(i + r) * n + j] = hsum(a) * inv_c[j];
      }
  }
  for (; i < nq; ++i)
    for (size_t j = 0; j < n; ++j) {
      __m256 a = _mm256_setzero_ps();
      for (size_t k = 0; k < dim; k += 8)
        a = _mm256_fmadd_ps(_mm256_loadu_ps(q + i * dim + k), _mm256_loadu_ps(c + j * dim + k), a);
      out[i * n + j] = hsum(a) * inv_c[j];
    }
}

__attribute__((target("avx2,fma"))) void inverse_norms_avx2(const float* c, size_t n, size_t dim,
                                                            float* inv) {
  for (size_t j = 0; j < n; ++j) {
    __m256 a = _mm256_setzero_ps();
    for (size_t k = 0; k < dim; k += 8) {
      __m256 x = _mm256_loadu_ps(c + j * dim + k);
      a = _mm256_fmadd_ps(x, x, a);
    }
    float s = hsum(a);
    inv[j] = s > 0 ? 1.0f / std::sqrt(s) : 0.0f;
  }
}

void inverse_norms_portable(const float* c, size_t n, size_t dim, float* inv) {
  for (size_t j = 0; j < n; ++j) {
    float s = 0;
    for (size_t k = 0; k < dim; ++k) s += c[j * dim + k] * c[j * dim + k];
    inv[j] = s > 0 ? 1.0f / std::sqrt(s) : 0.0f;
  }
}

bool use_avx2(size_t dim) {
  static const bool cpu = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return cpu && dim % 8 == 0;
}

}  // namespace

std::vector<SimilarityMap> SimilarityMap::compute_streamed(std::span<const float> query, size_t count,
                                                           size_t dim, const CandidateFetch& fetch) {
  VERITY_CHECK(dim > 0, ConfigError, "similarity map: dim must be positive");
  VERITY_CHECK(query.size() % dim == 0, ConfigError, "similarity map: query (", query.size(),
               " floats) is not a multiple of dim=", dim);
  const size_t nq = query.size() / dim;
  const bool avx2 = use_avx2(dim);
  std::vector<float> q(query.begin(), query.end()), q_inv(nq);
  for (float v : q) VERITY_CHECK(std::isfinite(v), ConfigError, "similarity map: query has a non-finite value");
  (avx2 ? inverse_norms_avx2 : inverse_norms_portable)(q.data(), nq, dim, q_inv.data());
  for (size_t i = 0; i < nq; ++i)
    for (size_t k = 0; k < dim; ++k) q[i * dim + k] *= q_inv[i];

  std::vector<SimilarityMap> maps(count);
  // Candidates are independent: split them over the calling thread and the
  // stage-2 helper (core/split_work.hpp), each with its own cached buffers.
  split_work(count, 8, [&](int64_t begin, int64_t end) {
    std::vector<float> rows, inv;
    for (int64_t ci = begin; ci < end; ++ci) {
      const size_t n = fetch(size_t(ci), rows);
      VERITY_CHECK(rows.size() >= n * dim, ConfigError, "similarity map: candidate ", ci, " has ",
                   rows.size(), " floats for ", n, " rows of ", dim);
      SimilarityMap& m = maps[size_t(ci)];
      m.rows_ = nq;
      m.cols_ = n;
      m.values_.assign(nq * n, 0.0f);
      if (nq == 0 || n == 0) continue;
      inv.resize(n);
      if (avx2) {
        inverse_norms_avx2(rows.data(), n, dim, inv.data());
        dots_avx2(q.data(), nq, rows.data(), inv.data(), n, dim, m.values_.data());
      } else {
        inverse_norms_portable(rows.data(), n, dim, inv.data());
        dots_portable(q.data(), nq, rows.data(), inv.data(), n, dim, m.values_.data());
      }
      for (float& v : m.values_) v = std::clamp(v, -1.0f, 1.0f);  // rounding can pass |1|
    }
  });
  return maps;
}

}  // namespace verity::verify
