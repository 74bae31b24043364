#pragma once
// The JSON object `verity eval --json` prints, built once for the CLI and the
// Python module's verity.evaluate (a detail header: nlohmann/json stays out
// of public ones).
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "eval/retrieval_eval.hpp"

namespace verity::eval::detail {

// One dataset's entry: every metric, query counts, speed and provenance.
nlohmann::json result_json(const RetrievalEvalResult& result, const RetrievalEvalOptions& options);

// The whole report: one dataset -> its entry plus "dataset"; several ->
// {"datasets": {name: entry}, "mean": {metric: mean}}; then "retriever",
// "verifier", "split" and "k". `results` must not be empty.
nlohmann::json report_json(std::span<const RetrievalEvalResult> results,
                           const RetrievalEvalOptions& options, const std::string& split);

}  // namespace verity::eval::detail
