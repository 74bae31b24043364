#pragma once
// Small statistics used by the diagnostics: summaries, rank correlations.
#include <cstddef>
#include <span>
#include <vector>

namespace verity::diagnose {

// mean, population standard deviation (divide by n), and quantiles by linear
// interpolation between order statistics (position p*(n-1), numpy's default).
// All zero for an empty input.
struct Summary {
  double mean = 0, std = 0, q10 = 0, q50 = 0, q90 = 0;
};
Summary summarize(std::span<const double> values);
double quantile(std::vector<double> values, double p);  // p in [0,1]
double mean(std::span<const double> values);

// 1-based ranks; tied values share the average of the ranks they span.
std::vector<double> average_ranks(std::span<const double> values);

// Kendall tau-b: (C - D) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1/n2 the
// tied pairs in x/y. Returns NaN when either side is constant (undefined).
double kendall_tau_b(std::span<const double> x, std::span<const double> y);
// Spearman rho: Pearson correlation of the average ranks. NaN if a side is constant.
double spearman_rho(std::span<const double> x, std::span<const double> y);

}  // namespace verity::diagnose
