#pragma once
// Dot-product kernels of the diagnostics, in double. GCC/Clang vector
// extensions give SIMD code without -ffast-math or -march flags: each of the
// independent lanes accumulates a fixed subset of the terms, so results are
// deterministic (the same on every run and thread count), but their rounding
// differs from a sequential sum by a few ulps.
#include <cstddef>

namespace verity::diagnose::detail {

// Always inlined: they are compiled into each instruction-set version of their
// callers (log_det.cpp), and an out-of-line copy would pass 32-byte vectors
// with one version's calling convention to the other.
#define VERITY_KERNEL inline __attribute__((always_inline))

typedef double v4d __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));

VERITY_KERNEL v4d load4(const double *p) {
  v4d v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
VERITY_KERNEL v4d load4(const float *p) {
  v4f v;
  __builtin_memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, v4d);
}
VERITY_KERNEL double hsum(v4d v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// sum_i a[i] * b[i] in double; T = float (widened per element) or double.
template <typename T>
VERITY_KERNEL double dot(const T *a, const T *b, size_t n) {
  v4d s0 = {0, 0, 0, 0}, s1 = s0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 += load4(a + i) * load4(b + i);
    s1 += load4(a + i + 4) * load4(b + i + 4);
  }
  for (; i + 4 <= n; i += 4) s0 += load4(a + i) * load4(b + i);
  double s = hsum(s0 + s1);
  for (; i < n; ++i) s += double(a[i]) * double(b[i]);
  return s;
}

// Four dots of rows a0..a3 with one row b in one pass (b is read once).
VERITY_KERNEL void dot4(const double *a0, const double *a1, const double *a2, const double *a3,
                        const double *b, size_t n, double out[4]) {
  v4d s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4d bv = load4(b + i);
    s0 += load4(a0 + i) * bv;
    s1 += load4(a1 + i) * bv;
    s2 += load4(a2 + i) * bv;
    s3 += load4(a3 + i) * bv;
  }
  out[0] = hsum(s0), out[1] = hsum(s1), out[2] = hsum(s2), out[3] = hsum(s3);
  for (; i < n; ++i) {
    out[0] += a0[i] * b[i];
    out[1] += a1[i] * b[i];
    out[2] += a2[i] * b[i];
    out[3] += a3[i] * b[i];
  }
}

// Lower triangle (j <= i) of X Xᵀ for X = rows x cols, row-major, into the
// rows x rows row-major `out` (upper triangle untouched).
VERITY_KERNEL void gram_lower(const double *x, size_t rows, size_t cols, double *out) {
  size_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    const double *a0 = x + i * cols, *a1 = a0 + cols, *a2 = a1 + cols, *a3 = a2 + cols;
    double d[4];
    for (size_t j = 0; j < i + 4; ++j) {
      dot4(a0, a1, a2, a3, x + j * cols, cols, d);
      for (size_t r = 0; r < 4; ++r)
        if (j <= i + r) out[(i + r) * rows + j] = d[r];
    }
  }
  for (; i < rows; ++i)
    for (size_t j = 0; j <= i; ++j) out[i * rows + j] = dot(x + i * cols, x + j * cols, cols);
}

}  // namespace verity::diagnose::detail
