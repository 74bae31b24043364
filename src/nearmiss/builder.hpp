#pragma once
// verity nearmiss-build: near-miss triples {query, positive, negative, type,
// source} from the real data under data_root (../shared/data layout), split
// into train/dev/test with no sentence shared across splits. Design, rules
// and counts: docs/NEARMISS.md.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nearmiss/splits.hpp"

namespace verity::nearmiss {

struct BuildOptions {
  std::string data_root;     // holds beir/scifact, nearmiss/{cannot,stepgame}, text/{sotu,moby-dick}
  std::string out_dir;       // receives train/dev/test.jsonl and manifest.json
  uint64_t seed = 1;
  SplitRatios ratios;
  // Per type and split: train keeps at most max_per_type triples per type,
  // dev and test max_per_type * ratio/train_ratio (rounded), 0 = no cap.
  size_t max_per_type = 4000;
  // Input caps (0 = all), sampled by a seeded hash so the sample spreads over
  // the whole source; they bound the Link Grammar time (~15 ms per parse).
  size_t max_scifact = 0;         // SciFact claims (1,109 in total)
  size_t max_cannot = 2500;       // CANNOT sentence->negation pairs
  size_t max_text = 2000;         // sentences per text corpus (sotu, moby-dick)
  size_t max_stepgame = 4000;     // StepGame stories
  // Targeted pass: per text corpus, up to this many further sentences (the
  // next ones in the same seeded order, after the first max_text) are tried
  // with the role_swap and numeric generators only; a positive is made only
  // for a sentence one of them applies to. Raises the yield of the two rare
  // types at about one parse per sentence. 0 = off.
  size_t max_targeted = 0;
  size_t min_words = 5, max_words = 40;  // prose sentences from the text corpora
  std::vector<std::string> sources = {"scifact", "cannot", "stepgame", "sotu", "moby-dick"};
  // Triple files whose sentences are reserved: a candidate that shares a
  // sentence (normalized) with any of them is dropped. Grows a training set
  // from more inputs while an earlier build's dev/test stay held out.
  std::vector<std::string> exclude;
  std::string command_line;       // recorded in the manifest
};

struct BuildResult {
  std::array<size_t, 3> counts{};  // triples in train, dev, test
  std::string manifest_json;       // the manifest.json text that was written
};

// Reads the sources, generates and splits the triples, checks that no
// sentence is in two splits (verity::Error otherwise) and writes the output
// files atomically (manifest last). Honors check_interrupt(): an interrupt
// before the write leaves no output files.
BuildResult build_nearmiss(const BuildOptions& options);

std::vector<std::string> nearmiss_sources();

}  // namespace verity::nearmiss
