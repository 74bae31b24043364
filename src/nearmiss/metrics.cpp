#include "nearmiss/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace verity::nearmiss {

double pairwise_accuracy(std::span<const float> pos, std::span<const float> neg) {
  VERITY_CHECK(pos.size() == neg.size(), ConfigError, "pairwise_accuracy: ", pos.size(),
               " positive scores but ", neg.size(), " negative scores");
  if (pos.empty()) return 0.0;
  size_t wins = 0;
  for (size_t i = 0; i < pos.size(); ++i) wins += pos[i] > neg[i];
  return static_cast<double>(wins) / static_cast<double>(pos.size());
}

double roc_auc(std::span<const float> positives, std::span<const float> negatives) {
  if (positives.empty() || negatives.empty()) return 0.5;
  std::vector<std::pair<float, bool>> all;  // (score, is_positive)
  all.reserve(positives.size() + negatives.size());
  for (float s : positives) {
    VERITY_CHECK(std::isfinite(s), ConfigError, "roc_auc: non-finite positive score");
    all.emplace_back(s, true);
  }
  for (float s : negatives) {
    VERITY_CHECK(std::isfinite(s), ConfigError, "roc_auc: non-finite negative score");
    all.emplace_back(s, false);
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // Sum of the positives' 1-based ranks, ties sharing their average rank.
  double positive_rank_sum = 0.0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    size_t pos_in_tie = 0;
    while (j < all.size() && all[j].first == all[i].first) pos_in_tie += all[j++].second;
    double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    positive_rank_sum += average_rank * static_cast<double>(pos_in_tie);
    i = j;
  }
  const double n_pos = static_cast<double>(positives.size());
  const double n_neg = static_cast<double>(negatives.size());
  const double u = positive_rank_sum - n_pos * (n_pos + 1.0) / 2.0;
  return u / (n_pos * n_neg);
}

}  // namespace verity::nearmiss
