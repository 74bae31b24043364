#pragma once
// Metrics of a scorer on labelled pairs (label 1 = same meaning), where a
// higher score means "more likely the same". Definitions: docs/METRICS.md
// ("Identity verdicts").
#include <cstddef>
#include <optional>
#include <span>

namespace verity::eval {

struct BinaryMetrics {
  size_t count = 0, positives = 0;
  double auc = 0.5;              // ROC-AUC (ties count half)
  double ap = 0;                 // average precision (step-wise, ties grouped)
  std::optional<double> accuracy;  // of verdicts score >= threshold, when a threshold is given
  double best_accuracy = 0;      // of the best single threshold on these pairs
  double best_threshold = 0;     // a threshold reaching best_accuracy
  double ece = 0;                // expected calibration error, 10 equal-width bins on clamp(score, 0, 1)
  double recall_at_precision_90 = 0, recall_at_precision_95 = 0;  // best recall at precision >= p
};

// ROC-AUC of positive-labelled scores against negative-labelled ones:
// P(s+ > s-) + 0.5 P(s+ = s-), by average ranks in O(n log n). Either class
// empty gives 0.5. Non-finite scores are a ConfigError.
double roc_auc(std::span<const float> positives, std::span<const float> negatives);

// Sizes must match and labels be 0/1 (ConfigError).
BinaryMetrics binary_metrics(std::span<const float> scores, std::span<const int> labels,
                             std::optional<double> threshold = std::nullopt);

// Highest recall over thresholds whose precision is >= min_precision (0 when
// none reaches it); shared with the cache's precision/hit-ratio sweep.
double recall_at_precision(std::span<const float> scores, std::span<const int> labels, double min_precision);

}  // namespace verity::eval
