#include "nearmiss/metrics.hpp"

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

}  // namespace verity::nearmiss
