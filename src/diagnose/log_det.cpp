#include "diagnose/log_det.hpp"

#include <cmath>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "diagnose/detail/kernels.hpp"

namespace verity::diagnose {
namespace {

using detail::dot;

// Returns false with *bad = the pivot (and its value) that was not positive.
VERITY_KERNEL bool cholesky_body(double* a, size_t m, double* log_det, size_t* bad, double* bad_value) {
  // Row-major lower factor in place: L_ij = (A_ij - <L_i, L_j>_{<j}) / L_jj.
  *log_det = 0;
  for (size_t j = 0; j < m; ++j) {
    double* lj = &a[j * m];
    double diag = lj[j] - dot(lj, lj, j);
    if (!(diag > 0 && std::isfinite(diag))) {
      *bad = j;
      *bad_value = diag;
      return false;
    }
    double ljj = std::sqrt(diag);
    lj[j] = ljj;
    *log_det += 2 * std::log(ljj);
    for (size_t i = j + 1; i < m; ++i) {
      double* li = &a[i * m];
      li[j] = (li[j] - dot(li, lj, j)) / ljj;
    }
  }
  return true;
}

// The kernels are compiled twice, for AVX2 and for the baseline, and picked at
// run time (core/cpu_features.hpp). No FMA: both versions round alike. Not
// GCC's target_clones: its ifunc resolver runs while the program is loaded,
// before a sanitizer's runtime is up, and the TSan build crashed in it.
#define VERITY_AVX2_CLONE __attribute__((target("avx2")))

VERITY_AVX2_CLONE void gram_lower_avx2(const double* x, size_t rows, size_t cols, double* out) {
  detail::gram_lower(x, rows, cols, out);
}
void gram_lower_portable(const double* x, size_t rows, size_t cols, double* out) {
  detail::gram_lower(x, rows, cols, out);
}
VERITY_AVX2_CLONE bool cholesky_avx2(double* a, size_t m, double* log_det, size_t* bad, double* bad_value) {
  return cholesky_body(a, m, log_det, bad, bad_value);
}
bool cholesky_portable(double* a, size_t m, double* log_det, size_t* bad, double* bad_value) {
  return cholesky_body(a, m, log_det, bad, bad_value);
}

bool use_avx2() { return best_isa() != Isa::portable; }

void gram_lower(const double* x, size_t rows, size_t cols, double* out) {
  (use_avx2() ? gram_lower_avx2 : gram_lower_portable)(x, rows, cols, out);
}

bool cholesky_in_place(double* a, size_t m, double* log_det, size_t* bad, double* bad_value) {
  return (use_avx2() ? cholesky_avx2 : cholesky_portable)(a, m, log_det, bad, bad_value);
}

void check_shapes(std::span<const double> r, size_t n, size_t d, std::span<const double> w) {
  VERITY_CHECK(r.size() == n * d, ConfigError, "log det: R has ", r.size(), " values, expected n*d = ",
               n * d);
  VERITY_CHECK(w.size() == n, ConfigError, "log det: ", w.size(), " weights for ", n, " directions");
  for (size_t k = 0; k < n; ++k)
    VERITY_CHECK(w[k] >= 0 && std::isfinite(w[k]), ConfigError, "log det: weight ", k, " is ", w[k],
                 " (must be finite and >= 0)");
}
}  // namespace

double cholesky_log_det(std::span<double> a, size_t m) {
  VERITY_CHECK(a.size() == m * m, ConfigError, "cholesky: ", a.size(), " values for ", m, "x", m);
  double log_det = 0, bad_value = 0;
  size_t bad = 0;
  VERITY_CHECK(cholesky_in_place(a.data(), m, &log_det, &bad, &bad_value), Error,
               "cholesky: matrix is not positive definite (pivot ", bad, " = ", bad_value, ")");
  return log_det;
}

// log det(I + X Xᵀ) where the rows of X are sqrt(scale w_k) r_k (Gram form,
// n x n) or, transposed, its columns (primal form, d x d): the lower triangle
// by the blocked dot kernel, then Cholesky.
static double log_det_of_scaled_rows(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                                     double scale, bool primal) {
  check_shapes(r, n, d, w);
  if (n == 0) return 0;
  const size_t m = primal ? d : n;  // order of the matrix
  std::vector<double> x(n * d), a(m * m, 0.0);
  for (size_t k = 0; k < n; ++k) {
    double c = std::sqrt(scale * w[k]);
    for (size_t i = 0; i < d; ++i) x[primal ? i * n + k : k * d + i] = c * r[k * d + i];
  }
  gram_lower(x.data(), m, primal ? n : d, a.data());
  for (size_t i = 0; i < m; ++i) a[i * m + i] += 1.0;
  return cholesky_log_det(a, m);
}

static double log_det_primal_scaled(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                                    double scale) {
  return log_det_of_scaled_rows(r, n, d, w, scale, true);
}

static double log_det_gram_scaled(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                                  double scale) {
  return log_det_of_scaled_rows(r, n, d, w, scale, false);
}

double log_det_scaled(std::span<const double> r, size_t m, size_t d, std::span<const double> w,
                      double scale) {
  return m < d ? log_det_gram_scaled(r, m, d, w, scale) : log_det_primal_scaled(r, m, d, w, scale);
}

double log_det_primal(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                      double gamma) {
  return log_det_primal_scaled(r, n, d, w, n == 0 ? 0 : gamma / double(n));
}

double log_det_gram(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                    double gamma) {
  return log_det_gram_scaled(r, n, d, w, n == 0 ? 0 : gamma / double(n));
}

double source_log_det(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                      double gamma) {
  return log_det_scaled(r, n, d, w, n == 0 ? 0 : gamma / double(n));
}

}  // namespace verity::diagnose
