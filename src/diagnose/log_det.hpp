#pragma once
// The source score S(D) = log det(I_d + (gamma/n) * sum_k w_k r_k r_k^T) for n
// unit directions r_k (rows of R, n x d) with weights w_k >= 0, in double.
// With A = (gamma/n) R^T W R, Sylvester's determinant identity gives
//   log det(I_d + (gamma/n) R^T W R) = log det(I_n + (gamma/n) W^1/2 R R^T W^1/2),
// so the exact value costs a Cholesky of min(n, d) x min(n, d).
#include <cstddef>
#include <span>

namespace verity::diagnose {

// log det of a symmetric positive definite m x m row-major matrix by Cholesky
// (2 * sum log L_ii). `a` is overwritten. Throws Error if it is not positive definite.
double cholesky_log_det(std::span<double> a, size_t m);

// The d x d ("primal") and n x n ("Gram") forms; both exact, exposed for tests.
double log_det_primal(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                      double gamma);
double log_det_gram(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                    double gamma);
// log det(I + scale * sum_k w_k r_k r_k^T) over m rows, Gram form when m < d.
// Lets a resample merge repeated rows (weight c_k * w_k) and keep scale = gamma/n.
double log_det_scaled(std::span<const double> r, size_t m, size_t d, std::span<const double> w,
                      double scale);
// Picks the Gram form when n < d, else the primal form. n == 0 gives 0.
double source_log_det(std::span<const double> r, size_t n, size_t d, std::span<const double> w,
                      double gamma);

}  // namespace verity::diagnose
