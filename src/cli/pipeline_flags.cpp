#include "cli/pipeline_flags.hpp"

#include <algorithm>

#include "cli/command.hpp"
#include "core/log.hpp"

namespace verity::cli {

void add_pipeline_flags(CLI::App* cmd, PipelineFlags& f, const std::string& stage1_flag) {
  auto& o = f.options;
  cmd->add_option(stage1_flag, o.stage1,
                  o.stage1 == "auto" ? "Stage 1: bm25 | dense | hybrid | auto (hybrid when the index has a dense part, "
                                       "else bm25)"
                                     : "Stage 1: bm25 | dense | hybrid")
      ->capture_default_str();
  cmd->add_option("--fusion", o.fusion,
                  "Hybrid fusion: rrf (1/(rrf_k+rank) summed) | weighted (min-max normalized scores)")
      ->capture_default_str();
  cmd->add_option("--rrf-k", o.rrf_k, "RRF constant")->capture_default_str();
  cmd->add_option("--dense-weight", o.dense_weight, "Weighted fusion: weight of the dense list")
      ->capture_default_str();
  cmd->add_option("--candidates", o.candidates, "K: stage-1 results verified in stage 2")
      ->capture_default_str();
  cmd->add_option("--verifier", o.verifier,
                  o.verifier == "auto"
                      ? "Stage 2: none | f0 | f1 | f2 | default | f3:PATH | f4:PATH | f5:PATH | ensemble:PATH | auto "
                        "(the default verifier on token vectors of the encoder it was trained on, F1 on another "
                        "encoder's, none without token vectors)"
                      : "Stage 2: none | f0 | f1 | f2 | default | f3:PATH | f4:PATH | f5:PATH | ensemble:PATH")
      ->capture_default_str();
  cmd->add_option("--combine", o.combine,
                  "Final ranking: rerank (by verifier) | weighted | penalty (conditional penalty)")
      ->capture_default_str();
  cmd->add_option("--verifier-weight", o.verifier_weight, "Weighted combine: weight of the verifier")
      ->capture_default_str();
  cmd->add_option("--penalty-beta", o.penalty_beta, "Penalty combine: beta")->capture_default_str();
  cmd->add_option("--penalty-tau", o.penalty_tau, "Penalty combine: tau")->capture_default_str();
  cmd->add_option("--reject-below", f.reject_below,
                  "Verdict threshold: verifier score below it -> near-miss")
      ->each([&f](const std::string&) { f.has_reject_below = true; });
}

void check_pipeline_flags(const CLI::App* cmd, const PipelineFlags& f, const std::string& stage1_flag,
                          bool per_request) {
  // A field's flag: "rrf_k" -> "--rrf-k"; stage 1's is the command's own.
  auto flag = [&](std::string field) {
    if (field == "stage1") return stage1_flag;
    std::replace(field.begin(), field.end(), '_', '-');
    return "--" + field;
  };
  for (const auto& unread : search::unread_options(f.options, per_request)) {
    std::vector<std::string> given;
    for (const char* option : unread.options)
      if (cmd->count(flag(option)) > 0) given.push_back(flag(option));
    if (given.empty()) continue;
    const std::string value = unread.value;
    const std::string scope =
        value.empty() ? cat("a stage 2 (", flag(unread.setting), ")") : cat(flag(unread.setting), " ", value);
    throw ConfigError(flags_refused(given, scope, cmd->get_name() + " --help"));
  }
}

void fit_candidates_to_k(const CLI::App* cmd, PipelineFlags& f, size_t k) {
  auto& K = f.options.candidates;
  if (K >= k) return;
  VERITY_CHECK(cmd->count("--candidates") == 0, ConfigError, "--candidates ", K, " is below --k ", k,
               ": stage 1 would pass only ", K, " results; give --candidates ", k, " or more");
  log("candidates (K) raised from ", K, " to --k ", k);
  K = k;
}

}  // namespace verity::cli
