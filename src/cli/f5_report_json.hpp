#pragma once
// The JSON that train-verifier --verifier f5 and calibrate both print for an
// F5 calibration and its per-group dev metrics, so the keys stay the same.
#include <map>
#include <string>
#include <nlohmann/json.hpp>

#include "train/alignment_training.hpp"
#include "verify/alignment_verifier.hpp"

namespace verity::cli {

// --threshold-rule's help, the same for train-verifier and calibrate.
inline constexpr const char* kThresholdRuleHelp =
    "verdict threshold from the mean dev accuracy over the groups: plateau (its best average over t +/- 0.05: "
    "the middle of a flat stretch) | best (its argmax)";

// The calibration with how it was fitted: + pooled_term, pooled_share, threshold_rule, dev_macro_auc.
inline nlohmann::json calibration_fit_json(const train::CalibrationFit& fit) {
  auto j = verify::calibration_json(fit.calibration);
  j.update({{"pooled_term", train::pooled_term_name(fit.term)},
            {"pooled_share", fit.pooled_share},
            {"threshold_rule", train::threshold_rule_name(fit.threshold_rule)},
            {"dev_macro_auc", fit.macro_auc}});
  return j;
}

// {group: {auc, accuracy, best_accuracy, count}}.
inline nlohmann::json dev_metrics_json(const std::map<std::string, train::SourceMetrics>& by_group) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, m] : by_group)
    out[name] = {{"auc", m.auc}, {"accuracy", m.accuracy}, {"best_accuracy", m.best_accuracy}, {"count", m.count}};
  return out;
}

}  // namespace verity::cli
