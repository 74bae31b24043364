#pragma once
// Near-miss metrics on paired scores: pos[i] = score(query_i, positive_i),
// neg[i] = score(query_i, negative_i).
#include <span>

namespace verity::nearmiss {

// Share of pairs with pos[i] > neg[i] strictly; a tie counts as a failure
// (a verifier that cannot tell the two apart has not ranked them). Sizes must
// match (ConfigError); 0 pairs gives 0.
double pairwise_accuracy(std::span<const float> pos, std::span<const float> neg);

// ROC-AUC of the positives (label 1) against the negatives (label 0), pooled
// over all triples: P(s+ > s-) + 0.5 P(s+ = s-) over every (positive,
// negative) pair, the Mann-Whitney U statistic divided by n+ n-. Computed with
// average ranks in O(n log n). Empty input gives 0.5. Non-finite scores are a
// ConfigError.
double roc_auc(std::span<const float> positives, std::span<const float> negatives);

}  // namespace verity::nearmiss
