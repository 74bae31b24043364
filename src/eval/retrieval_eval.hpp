#pragma once
// Runs a retriever over a BEIR dataset and scores the run (the engine behind
// `verity eval`). The CLI stays thin; everything measurable happens here.
#include <string>
#include <vector>

#include "data/beir.hpp"
#include "eval/metrics.hpp"

namespace verity::eval {

struct RetrievalEvalOptions {
  std::string retriever = "bm25";  // only "bm25" for now
  size_t k = 100;                  // results retrieved per query
  int threads = 1;                 // search threads (qps is measured at this count)
  float k1 = 0.9f, b = 0.4f;       // BM25
  std::string analyzer = "english";
  EvalOptions metrics;
};

struct LatencyStats {
  double p50_ms = 0, p95_ms = 0, mean_ms = 0;
};

struct RetrievalEvalResult {
  std::string dataset;
  Evaluation evaluation;
  Run run;
  size_t docs = 0;
  double index_seconds = 0;   // building the index
  double search_seconds = 0;  // wall time of all queries
  double qps = 0;
  LatencyStats latency;       // per query, measured when threads == 1
};

RetrievalEvalResult evaluate_retrieval(const data::BeirDataset& dataset,
                                       const RetrievalEvalOptions& options);

// Percentiles by linear interpolation between closest ranks (numpy's default).
double percentile(std::vector<double> values, double p);

}  // namespace verity::eval
