#include "eval/pair_metrics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.hpp"

namespace verity::eval {
namespace {

void check_inputs(std::span<const float> scores, std::span<const int> labels) {
  VERITY_CHECK(scores.size() == labels.size(), ConfigError, "pair metrics: ", scores.size(), " scores but ",
               labels.size(), " labels");
  for (size_t i = 0; i < scores.size(); ++i) {
    VERITY_CHECK(std::isfinite(scores[i]), ConfigError, "pair metrics: score ", i, " is not finite");
    VERITY_CHECK(labels[i] == 0 || labels[i] == 1, ConfigError, "pair metrics: label ", i, " is ", labels[i],
                 ", not 0 or 1");
  }
}

// Indices by score descending (ties in input order).
std::vector<size_t> descending(std::span<const float> scores) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  return order;
}

// Calls fn(true_positives, predicted_positives, threshold) after each group of
// tied scores, walking thresholds from the highest score down.
template <class Fn>
void sweep(std::span<const float> scores, std::span<const int> labels, Fn fn) {
  auto order = descending(scores);
  size_t tp = 0;
  for (size_t k = 0; k < order.size();) {
    const float s = scores[order[k]];
    while (k < order.size() && scores[order[k]] == s) tp += size_t(labels[order[k++]]);
    fn(tp, k, double(s));
  }
}

}  // namespace

double roc_auc(std::span<const float> positives, std::span<const float> negatives) {
  for (float v : positives) VERITY_CHECK(std::isfinite(v), ConfigError, "roc_auc: non-finite positive score");
  for (float v : negatives) VERITY_CHECK(std::isfinite(v), ConfigError, "roc_auc: non-finite negative score");
  if (positives.empty() || negatives.empty()) return 0.5;
  std::vector<std::pair<float, bool>> all;
  all.reserve(positives.size() + negatives.size());
  for (float v : positives) all.push_back({v, true});
  for (float v : negatives) all.push_back({v, false});
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum = 0;  // sum of (1-based, tie-averaged) ranks of the positives
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    size_t pos = 0;
    while (j < all.size() && all[j].first == all[i].first) pos += all[j++].second;
    rank_sum += double(pos) * (double(i + 1) + double(j)) / 2.0;
    i = j;
  }
  const double np = double(positives.size()), nn = double(negatives.size());
  return (rank_sum - np * (np + 1) / 2) / (np * nn);
}

double recall_at_precision(std::span<const float> scores, std::span<const int> labels, double min_precision) {
  check_inputs(scores, labels);
  const size_t positives = size_t(std::count(labels.begin(), labels.end(), 1));
  if (positives == 0) return 0;
  double best = 0;
  sweep(scores, labels, [&](size_t tp, size_t predicted, double) {
    if (double(tp) >= min_precision * double(predicted)) best = std::max(best, double(tp) / double(positives));
  });
  return best;
}

BinaryMetrics binary_metrics(std::span<const float> scores, std::span<const int> labels,
                             std::optional<double> threshold) {
  check_inputs(scores, labels);
  BinaryMetrics m;
  m.count = scores.size();
  m.positives = size_t(std::count(labels.begin(), labels.end(), 1));
  std::vector<float> pos, neg;
  for (size_t i = 0; i < scores.size(); ++i) (labels[i] ? pos : neg).push_back(scores[i]);
  m.auc = roc_auc(pos, neg);
  if (m.count == 0) return m;
  const size_t negatives = m.count - m.positives;
  // Best accuracy: threshold "score >= t" at each distinct score, or above all.
  m.best_accuracy = double(negatives) / double(m.count);
  m.best_threshold = scores.empty() ? 0.0 : double(*std::max_element(scores.begin(), scores.end())) + 1e-6;
  double ap = 0, last_recall = 0;
  sweep(scores, labels, [&](size_t tp, size_t predicted, double s) {
    const size_t fp = predicted - tp;
    const double acc = double(tp + (negatives - fp)) / double(m.count);
    if (acc > m.best_accuracy) m.best_accuracy = acc, m.best_threshold = s;
    if (m.positives) {
      const double recall = double(tp) / double(m.positives);
      ap += (recall - last_recall) * double(tp) / double(predicted);
      last_recall = recall;
    }
  });
  m.ap = ap;
  if (threshold) {
    size_t right = 0;
    for (size_t i = 0; i < scores.size(); ++i) right += (double(scores[i]) >= *threshold) == (labels[i] == 1);
    m.accuracy = double(right) / double(m.count);
  }
  // ECE: |mean confidence - observed rate| per bin, weighted by bin size.
  constexpr int kBins = 10;
  std::array<double, kBins> conf{}, hits{};
  std::array<size_t, kBins> n{};
  for (size_t i = 0; i < scores.size(); ++i) {
    const double p = std::clamp(double(scores[i]), 0.0, 1.0);
    const int b = std::min(kBins - 1, int(p * kBins));
    conf[b] += p, hits[b] += labels[i], ++n[b];
  }
  for (int b = 0; b < kBins; ++b)
    if (n[b]) m.ece += std::abs(conf[b] - hits[b]) / double(m.count);
  m.recall_at_precision_90 = recall_at_precision(scores, labels, 0.90);
  m.recall_at_precision_95 = recall_at_precision(scores, labels, 0.95);
  return m;
}

}  // namespace verity::eval
