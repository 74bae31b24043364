#pragma once
// Hard-negative mining (`verity mine`, docs/MINING.md), after
// sentence-transformers' mine_hard_negatives: for every (query, relevant
// document) pair of a BEIR split, candidates come from a source, pass a chain
// of filters, and num_negatives of the survivors become triples.
//
// Sources:
//   bm25 | dense | hybrid  exhaustive ranking of the corpus by that scorer
//   generated              structural near-misses of the positive (one
//                          sentence of it edited by a perturb:: generator)
//   file:PATH              negatives made elsewhere (JSONL, see read_negative_file)
// Filters, in order (each counted per (query, positive) pair):
//   labelled_positive  candidate is a document labelled relevant for the query
//   range              rank outside [range_min, range_max] (ranked sources)
//   absolute_margin    keep iff score_neg <= score_pos - absolute_margin
//   relative_margin    keep iff score_neg <= score_pos * (1 - relative_margin)
//   max_score          keep iff score_neg <= max_score
//   false_negative     keep iff verifier(query, candidate) < filter_threshold
//                      (checked lazily in sampling order, see mine())
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/beir.hpp"
#include "data/triples.hpp"

namespace verity::index {
class Bm25Index;
}

namespace verity::mine {

struct MineOptions {
  std::string source = "bm25";  // bm25 | dense | hybrid | generated | file:PATH
  size_t range_min = 1;         // 1-based ranks, both ends inclusive
  size_t range_max = 100;
  size_t num_negatives = 3;     // per (query, positive)
  std::string sampling = "top";  // top | random
  uint64_t seed = 0;
  std::optional<double> absolute_margin, relative_margin, max_score;
  // hybrid: the pipeline's fusion over the top-range_max list of each scorer.
  std::string fusion = "weighted";  // weighted | rrf
  double dense_weight = 0.2;
  double rrf_k = 60;
  // Index (built once, cached like `verity eval`'s under cache_dir).
  std::string encoder = "use-lite";
  std::string analyzer = "english";
  double k1 = 0.9, b = 0.4;
  std::string cache_dir;  // "" = eval::default_cache_dir()
  size_t batch_size = 32;
  // generated
  std::vector<std::string> generators = {"negation", "role_swap", "spatial", "numeric"};
  size_t max_sentence_tries = 4;  // sentences of the positive tried per generator
  // False-negative filter; "" = off. Spec as nearmiss-eval's --verifier
  // (f0 | f1 | f2 | f3:PATH | f4:PATH | default | PATH to weights).
  std::string filter_verifier;
  double filter_threshold = 0.5;
};

// Throws ConfigError naming the option for invalid values.
void validate(const MineOptions& options);

struct RemovalCounts {
  size_t labelled_positive = 0, range = 0, absolute_margin = 0, relative_margin = 0, max_score = 0,
         false_negative_filter = 0;
};

struct ScoreSummary {
  size_t count = 0;
  double mean = 0, std = 0, min = 0, q50 = 0, max = 0;  // std: population (divide by n)
};
// Percentile 50 by linear interpolation; all zeros for an empty input.
ScoreSummary summarize_scores(std::vector<double> values);

struct MineResult {
  std::vector<data::Triple> triples;  // source, rank (ranked sources), score, type (generated)
  std::string source;                 // as given, e.g. "bm25" or "file:x.jsonl"
  std::string scorer;                 // the scorer behind score/margins, e.g. "bm25(k1=0.9,b=0.4)"
  size_t queries = 0;                 // queries with at least one relevant document
  size_t pairs = 0;                   // (query, positive) pairs processed
  size_t pairs_without_negative = 0;  // pairs whose every candidate was filtered out
  size_t unsampled = 0;               // survivors beyond num_negatives (not a filter)
  RemovalCounts removed;
  std::vector<double> positive_scores;  // one per pair
  std::vector<double> negative_scores;  // one per triple
  std::map<std::string, size_t> generator_skips;  // generated: reason -> count
  // False-negative filter on: verifier scores of each pair's positive and of
  // every candidate it examined (for choosing filter_threshold).
  std::vector<double> filter_positive_scores, filter_candidate_scores;
  std::string index_dir;
};

MineResult mine(const data::BeirDataset& dataset, const MineOptions& options);

// ---- pieces exposed for tests ----

// One candidate negative for a (query, positive) pair.
struct Candidate {
  int64_t doc = -1;         // corpus index; -1 for text not in the corpus
  std::string text;         // only when doc == -1
  std::optional<int64_t> rank;  // 1-based rank in the source's ranking
  double score = 0;
  std::string type;
};

// Applies labelled_positive .. max_score (not the false-negative filter) to
// `candidates` (kept in order) and adds to `removed`. `relevant_texts` catches
// text candidates equal to a relevant document's indexed text.
std::vector<Candidate> filter_candidates(std::vector<Candidate> candidates,
                                         const std::vector<int64_t>& relevant_docs,
                                         const std::vector<std::string>& relevant_texts,
                                         double positive_score, const MineOptions& options,
                                         RemovalCounts& removed);

// The order in which survivors are taken: 0..n-1 for "top"; a permutation
// seeded by (seed, key) for "random", so it does not depend on pair order.
std::vector<size_t> sampling_order(size_t n, const std::string& sampling, uint64_t seed,
                                   const std::string& key);

// Lucene BM25 of an arbitrary text as if it were a document of the index
// (corpus statistics N, df, avgdl unchanged): equals the index score for a
// text already in the corpus.
double bm25_text_score(const index::Bm25Index& index, const std::vector<std::string>& query_terms,
                       std::string_view text);

// A file of negatives made elsewhere, one JSON object per line:
//   {"query": id or text, "negative": str, "positive"?: str, "type"?: str,
//    "rank"?: int, "score"?: number}
// "query" is resolved as a query id of the dataset first, then as a query
// text. Without "positive" the negative is paired with every relevant
// document of the query (then the query must be in the dataset). Errors name
// path:line and the field.
struct FileNegative {
  std::string query_id;    // "" when the query is not in the dataset
  std::string query_text;
  std::string positive;    // "" = pair with the query's relevant documents
  std::string negative, type;
  std::optional<int64_t> rank;
  size_t line = 0;
};
std::vector<FileNegative> read_negative_file(const std::string& path, const data::BeirDataset& dataset);

}  // namespace verity::mine
