#pragma once
// Train/dev/test assignment with no sentence shared across splits.
//
// Every candidate triple carries a group key (its original sentence, or its
// StepGame story). Groups are visited in a seeded order; a group's split is a
// seeded hash of its key mapped onto the ratios, so all triples of one group
// land in one split. A triple whose query, positive or negative text
// (normalize_sentence) was already claimed by another split is dropped and
// counted (dropped_cross_split): a sentence is never in two splits.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/triples.hpp"

namespace verity::nearmiss {

enum SplitIndex : size_t { kTrain = 0, kDev = 1, kTest = 2 };
inline constexpr std::array<const char*, 3> kSplitNames = {"train", "dev", "test"};

struct SplitRatios {
  double train = 0.8, dev = 0.1, test = 0.1;  // must be >= 0 and sum to 1 (+-1e-6)
};

struct GroupedTriple {
  data::Triple triple;
  std::string group;
};

struct SplitAssignment {
  std::array<std::vector<data::Triple>, 3> splits;
  size_t dropped_cross_split = 0;
  std::map<std::string, size_t> dropped_cross_split_by_source;
};

SplitAssignment assign_splits(std::vector<GroupedTriple> triples, const SplitRatios& ratios,
                              uint64_t seed);

// Throws verity::Error naming the sentence and both splits when a normalized
// query/positive/negative text occurs in two splits.
void check_disjoint(const std::array<std::vector<data::Triple>, 3>& splits);

// Keeps at most `cap` triples per type in `split` (0 = no cap), chosen
// round-robin over sources in a seeded order so one source does not dominate
// a type. The kept triples are shuffled (seeded). Returns how many were dropped.
size_t cap_per_type(std::vector<data::Triple>& split, size_t cap, uint64_t seed);

// Stable 64-bit hash of (seed, text): the builder's only source of randomness
// besides perturb::Rng.
uint64_t seeded_hash(uint64_t seed, std::string_view text);

}  // namespace verity::nearmiss
