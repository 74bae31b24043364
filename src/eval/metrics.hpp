#pragma once
// IR metrics with trec_eval / pytrec_eval conventions (definitions: docs/METRICS.md).
//
// Ranking rule: each query's list is sorted by score descending, ties broken by doc id in
// descending byte-wise lexicographic order (trec_eval's rule), so equal scores give the
// same numbers as pytrec_eval whatever order the list came in.
// Relevant means grade >= 1.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "data/beir.hpp"

namespace verity::eval {

using data::Qrels;

struct ScoredDoc {
  std::string doc_id;
  double score = 0;
};
// query id -> retrieved documents in any order (evaluate() ranks them).
using Run = std::map<std::string, std::vector<ScoredDoc>>;

// Sorts by the ranking rule above. Throws FormatError (naming the query and document)
// for a non-finite score or a document listed twice.
void rank_in_place(std::vector<ScoredDoc>& docs, std::string_view query_id);

enum class Metric { kNdcg, kAcc, kRecall, kMrr, kMap };

struct MetricSpec {
  Metric metric;
  int k;
  std::string name() const;  // "ndcg@10", "acc@1", "recall@100", "mrr@10", "map@100"
  bool operator==(const MetricSpec&) const = default;
};
// Parses "ndcg@10" etc.; unknown names or k < 1 are ConfigErrors listing the valid forms.
MetricSpec parse_metric(std::string_view name);
// Parses a comma-separated list, e.g. "ndcg@10,ndcg@100,acc@1".
std::vector<MetricSpec> parse_metrics(std::string_view list);

struct EvalOptions {
  std::vector<MetricSpec> metrics = {{Metric::kNdcg, 10},
                                     {Metric::kAcc, 1},
                                     {Metric::kRecall, 100},
                                     {Metric::kMrr, 10},
                                     {Metric::kMap, 100}};
  // Drop retrieved documents whose id equals the query id (BEIR does this for e.g. ArguAna,
  // Quora, where a query is also a corpus document).
  bool ignore_identical_ids = false;
};

struct EvalCounts {
  size_t queries = 0;              // evaluated: the denominator of every mean
  size_t skipped_no_relevant = 0;  // in qrels, but no document with grade >= 1
  size_t missing_from_run = 0;     // evaluated with all metrics 0 (included in `queries`)
  size_t ignored_not_in_qrels = 0; // in the run only; not evaluated
  size_t identical_ids_dropped = 0;  // results removed by ignore_identical_ids
};

struct Evaluation {
  std::vector<std::string> metric_names;  // in EvalOptions order
  std::map<std::string, double> mean;     // metric name -> mean over evaluated queries
  std::map<std::string, std::map<std::string, double>> per_query;  // qid -> metric -> value
  EvalCounts counts;
};

// Evaluates every query of `qrels` that has a relevant document. Does not modify `run`.
Evaluation evaluate(const Run& run, const Qrels& qrels, const EvalOptions& options = {});

}  // namespace verity::eval
