#pragma once
// The two training experiments (docs/EXPERIMENTS.md):
//   tradeoff  Model A (standard triples) vs Model B (standard + structural
//             triples at a ratio), per backbone and seed, same budget.
//   transfer  one encoder per hard-negative source, same budget; the observed
//             zero-shot transfer is compared with `verity diagnose`'s
//             statistics of the sources (agreement, matched samples).
// Both are resumable through RunStore (<out_dir>/runs/<key>.json) and return
// their summary as one JSON text (also written to <out_dir>/summary.json).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/triples.hpp"
#include "experiment/config.hpp"
#include "experiment/run_store.hpp"

namespace verity::experiment {

std::string run_tradeoff(const TradeoffConfig &config, PlanStats *stats = nullptr);
std::string run_transfer(const TransferConfig &config, PlanStats *stats = nullptr);

// Model B's data: of `total` triples, round(ratio * total) drawn from
// `structural`, the rest from `standard` (each without replacement, seeded),
// then shuffled; a pool too small for its share is a ConfigError. ratio 0 =
// Model A's data. (Its own seeded draw, not train::mix_triples', so the runs
// recorded in docs/RESULTS.md reproduce.)
std::vector<data::Triple> mix_triples(const std::vector<data::Triple> &standard,
                                      const std::vector<data::Triple> &structural, double ratio, size_t total,
                                      uint64_t seed);

// Mean and population std over seeds, and the paired relative change
// (b_s - a_s) / a_s over seeds present in both.
struct MeanStd {
  double mean = 0, std = 0;
  size_t n = 0;
};
MeanStd mean_std(const std::vector<double> &values);
MeanStd relative_change(const std::vector<double> &a, const std::vector<double> &b);

}  // namespace verity::experiment
