#pragma once
// Runs the two-stage pipeline over a BEIR dataset and scores the run (the
// engine behind `verity eval`). The index directory it needs is built on
// first use and cached, keyed by the corpus content hash, the encoder (and its
// weights) and the index settings; a stale or corrupt cache entry is rebuilt.
#include <string>
#include <vector>

#include "data/beir.hpp"
#include "eval/metrics.hpp"
#include "search/index_builder.hpp"
#include "search/pipeline.hpp"

namespace verity::eval {

struct RetrievalEvalOptions {
  search::PipelineOptions pipeline;  // stage1 = the --retriever
  size_t k = 100;                    // results per query
  int threads = 1;                   // queries in parallel; per-query latency when 1
  double k1 = 0.9, b = 0.4;          // BM25
  std::string analyzer = "english";
  std::string encoder = "use-lite";  // dense and token vectors
  std::string dense_index = "flat";
  std::string token_precision = "fp16";
  size_t batch_size = 32;
  std::string cache_dir;             // "" = default_cache_dir()
  bool use_cache = true;             // false: build into a temporary directory
  EvalOptions metrics;
};

struct LatencyStats {
  double p50_ms = 0, p95_ms = 0, mean_ms = 0;
};

struct RetrievalEvalResult {
  std::string dataset;
  std::string pipeline;  // Pipeline::describe()
  std::string index_dir;
  Evaluation evaluation;
  Run run;
  size_t docs = 0;
  double index_seconds = 0;   // building the index (0 when it came from the cache)
  bool index_from_cache = false;
  double search_seconds = 0;  // wall time of all queries (query encoding included)
  double qps = 0;
  // Per query, measured when threads == 1: whole query, and each stage.
  LatencyStats latency, encode_latency, stage1_latency, stage2_latency;
};

RetrievalEvalResult evaluate_retrieval(const data::BeirDataset& dataset,
                                       const RetrievalEvalOptions& options);

// $VERITY_CACHE_DIR, else $XDG_CACHE_HOME/verity, else $HOME/.cache/verity.
std::string default_cache_dir();
// Directory name of a cache entry under the cache root: the dataset name, the corpus
// content hash and a hash of everything that changes the index's contents. Shared
// with `verity mine`, so a corpus encoded for evaluation is reused there.
std::string index_cache_key(const data::BeirDataset& ds, const search::IndexBuildOptions& build);

// Percentiles by linear interpolation between closest ranks (numpy's default).
double percentile(std::vector<double> values, double p);
LatencyStats latency_stats(const std::vector<double>& ms);

}  // namespace verity::eval
