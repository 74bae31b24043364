#pragma once
// Options shared by `search`, `eval` and `serve`: how the two stages run.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

#include "search/pipeline.hpp"

namespace verity::cli {

struct PipelineFlags {
  search::PipelineOptions options;
  double reject_below = 0;
  bool has_reject_below = false;
  // Copies the parsed --reject-below into options.
  search::PipelineOptions resolved() const {
    auto o = options;
    if (has_reject_below) o.reject_below = reject_below;
    return o;
  }
};

// `stage1_flag` is "--stage1" for search/serve and "--retriever" for eval.
void add_pipeline_flags(CLI::App* cmd, PipelineFlags& f, const std::string& stage1_flag);

// Refuses a flag the chosen modes never read (--rrf-k under weighted fusion, --penalty-beta
// under weighted combine, --fusion without a hybrid stage 1, ...) rather than ignore it.
// With `per_request` (serve), a request may pick stage 1 and the verifier, so only the fusion
// and combine modes, which no request can change, decide.
void check_pipeline_flags(const CLI::App* cmd, const PipelineFlags& f, const std::string& stage1_flag,
                          bool per_request);

// `--candidates` (K) below the `k` results asked for: refused when given, else raised to k
// (stage 1 would otherwise return only K results).
void fit_candidates_to_k(const CLI::App* cmd, PipelineFlags& f, size_t k);


}  // namespace verity::cli
