#pragma once
// Runs a retriever over a BEIR dataset and scores the run (the engine behind
// `verity eval`). The CLI stays thin; everything measurable happens here.
#include <string>
#include <vector>

#include "data/beir.hpp"
#include "eval/metrics.hpp"

namespace verity::eval {

struct RetrievalEvalOptions {
  std::string retriever = "bm25";  // "bm25" | "dense"
  size_t k = 100;                  // results retrieved per query
  int threads = 1;                 // search threads (qps is measured at this count)
  float k1 = 0.9f, b = 0.4f;       // BM25
  std::string analyzer = "english";
  std::string encoder = "use-lite";  // dense: encoder spec (see encode/registry.hpp)
  size_t batch_size = 32;            // dense: texts per forward pass when encoding the corpus
  std::string cache_dir;             // dense: embedding cache; "" = default_cache_dir()
  bool use_cache = true;
  EvalOptions metrics;
};

struct LatencyStats {
  double p50_ms = 0, p95_ms = 0, mean_ms = 0;
};

struct RetrievalEvalResult {
  std::string dataset;
  std::string retriever_spec;  // e.g. "bm25:k1=0.9,b=0.4" or "dense:use-lite:/path"
  Evaluation evaluation;
  Run run;
  size_t docs = 0;
  double index_seconds = 0;   // building (or loading from cache) the stage-1 index
  bool index_from_cache = false;
  double search_seconds = 0;  // wall time of all queries (query encoding included)
  double qps = 0;
  LatencyStats latency;       // per query, measured when threads == 1
};

RetrievalEvalResult evaluate_retrieval(const data::BeirDataset& dataset,
                                       const RetrievalEvalOptions& options);

// $VERITY_CACHE_DIR, else $XDG_CACHE_HOME/verity, else $HOME/.cache/verity.
std::string default_cache_dir();

// Percentiles by linear interpolation between closest ranks (numpy's default).
double percentile(std::vector<double> values, double p);

}  // namespace verity::eval
