#pragma once
// Near-miss metrics on paired scores: pos[i] = score(query_i, positive_i),
// neg[i] = score(query_i, negative_i).
#include <span>

#include "eval/pair_metrics.hpp"

namespace verity::nearmiss {

// Share of pairs with pos[i] > neg[i] strictly; a tie counts as a failure
// (a verifier that cannot tell the two apart has not ranked them). Sizes must
// match (ConfigError); 0 pairs gives 0.
double pairwise_accuracy(std::span<const float> pos, std::span<const float> neg);

// ROC-AUC of the positives against the negatives, pooled over all triples
// (eval/pair_metrics.hpp: Mann-Whitney U over n+ n-, ties half).
using eval::roc_auc;

}  // namespace verity::nearmiss
