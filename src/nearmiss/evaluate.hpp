#pragma once
// nearmiss-eval: scores every triple's (query, positive) and (query, negative)
// pair with a stage-2 verifier on token similarity maps, or with the
// encoder's pooled cosine ("none", the single-vector baseline), and reports
// pairwise accuracy and ROC-AUC overall, per type and per source.
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/triples.hpp"
#include "encode/encoder.hpp"
#include "verify/verifier.hpp"

namespace verity::nearmiss {

struct PairScores {
  std::vector<float> positive;  // score(query_i, positive_i)
  std::vector<float> negative;  // score(query_i, negative_i)
};

// verifier == nullptr: cosine of the pooled vectors. Otherwise maps
// M = SimilarityMap::compute(query tokens, candidate tokens) scored with
// verifier->score_batch. Triples are processed in chunks of `batch_size`
// (texts of a chunk encoded once, in encoder batches of batch_size) so
// memory stays bounded.
PairScores score_triples(const std::vector<data::Triple>& triples, const encode::Encoder& encoder,
                         const verify::Verifier* verifier, size_t batch_size = 64);

struct Metrics {
  double pairwise_acc = 0, auc = 0.5;
  size_t count = 0;
};

struct Report {
  Metrics overall;
  std::map<std::string, Metrics> by_type, by_source;  // "" type/source reported as "unknown"
};

// Sizes must match (ConfigError).
Report summarize(const std::vector<data::Triple>& triples, const PairScores& scores);

// "none" -> nullptr (pooled cosine). A spec make_verifier accepts is passed
// through; a bare path to an existing file is loaded as a learned verifier
// (F3 or F4, detected from the file).
std::unique_ptr<verify::Verifier> make_eval_verifier(const std::string& spec);

}  // namespace verity::nearmiss
