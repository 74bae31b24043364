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

}  // namespace verity::cli
