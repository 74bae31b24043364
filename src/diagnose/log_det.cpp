#include "diagnose/log_det.hpp"

#include <cmath>
#include <vector>

#include "core/error.hpp"

namespace verity::diagnose {
namespace {

// Four partial sums so the compiler can keep the loop in registers without
// reassociating (no -ffast-math needed).
double dot(const double* a, const double* b, size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
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
  // Row-major lower factor in place: L_ij = (A_ij - <L_i, L_j>_{<j}) / L_jj.
  double log_det = 0;
  for (size_t j = 0; j < m; ++j) {
    double* lj = &a[j * m];
    double diag = lj[j] - dot(lj, lj, j);
    VERITY_CHECK(diag > 0 && std::isfinite(diag), Error, "cholesky: matrix is not positive definite (pivot ",
                 j, " = ", diag, ")");
    double ljj = std::sqrt(diag);
    lj[j] = ljj;
    log_det += 2 * std::log(ljj);
    for (size_t i = j + 1; i < m; ++i) {
      double* li = &a[i * m];
      li[j] = (li[j] - dot(li, lj, j)) / ljj;
    }
  }
  return log_det;
}

static double log_det_primal_scaled(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                                    double scale) {
  check_shapes(r, n, d, w);
  if (n == 0) return 0;
  std::vector<double> a(d * d, 0.0);
  for (size_t k = 0; k < n; ++k) {
    if (w[k] == 0) continue;
    const double* rk = &r[k * d];
    double c = scale * w[k];
    for (size_t i = 0; i < d; ++i) {  // lower triangle only; the factorization reads nothing else
      double ci = c * rk[i];
      double* row = &a[i * d];
      for (size_t j = 0; j <= i; ++j) row[j] += ci * rk[j];
    }
  }
  for (size_t i = 0; i < d; ++i) a[i * d + i] += 1.0;
  return cholesky_log_det(a, d);
}

static double log_det_gram_scaled(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                                  double scale) {
  check_shapes(r, n, d, w);
  if (n == 0) return 0;
  std::vector<double> a(n * n, 0.0), sw(n);
  for (size_t k = 0; k < n; ++k) sw[k] = std::sqrt(w[k]);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j <= i; ++j)
      a[i * n + j] = scale * sw[i] * sw[j] * dot(&r[i * d], &r[j * d], d) + (i == j ? 1.0 : 0.0);
  return cholesky_log_det(a, n);
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
