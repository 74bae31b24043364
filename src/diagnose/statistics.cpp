#include "diagnose/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"

namespace verity::diagnose {

double mean(std::span<const double> values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / double(values.size());
}

double quantile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double pos = p * double(values.size() - 1);
  size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
  return values[lo] + (values[hi] - values[lo]) * (pos - double(lo));
}

Summary summarize(std::span<const double> values) {
  Summary s;
  if (values.empty()) return s;
  s.mean = mean(values);
  double ss = 0;
  for (double v : values) ss += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(ss / double(values.size()));
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double p) {
    double pos = p * double(sorted.size() - 1);
    size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - double(lo));
  };
  s.q10 = at(0.1);
  s.q50 = at(0.5);
  s.q90 = at(0.9);
  return s;
}

std::vector<double> average_ranks(std::span<const double> values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    double rank = (double(i + 1) + double(j + 1)) / 2.0;  // average of ranks i+1..j+1
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

double kendall_tau_b(std::span<const double> x, std::span<const double> y) {
  VERITY_CHECK(x.size() == y.size(), ConfigError, "kendall_tau_b: sizes differ (", x.size(), " vs ",
               y.size(), ")");
  // O(n^2): n is the number of sources, a handful.
  double concordant = 0, discordant = 0, tied_x = 0, tied_y = 0, pairs = 0;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = i + 1; j < x.size(); ++j) {
      ++pairs;
      double dx = x[i] - x[j], dy = y[i] - y[j];
      if (dx == 0) ++tied_x;
      if (dy == 0) ++tied_y;
      if (dx == 0 || dy == 0) continue;
      ((dx > 0) == (dy > 0) ? concordant : discordant) += 1;
    }
  double denom = std::sqrt((pairs - tied_x) * (pairs - tied_y));
  if (denom == 0) return std::numeric_limits<double>::quiet_NaN();
  return (concordant - discordant) / denom;
}

double spearman_rho(std::span<const double> x, std::span<const double> y) {
  VERITY_CHECK(x.size() == y.size(), ConfigError, "spearman_rho: sizes differ (", x.size(), " vs ",
               y.size(), ")");
  auto rx = average_ranks(x), ry = average_ranks(y);
  double mx = mean(rx), my = mean(ry), sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx == 0 || syy == 0) return std::numeric_limits<double>::quiet_NaN();
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace verity::diagnose
