// verity experiment tradeoff|transfer --config FILE: the resumable training
// experiments of docs/EXPERIMENTS.md.
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "core/log.hpp"
#include "experiment/config.hpp"
#include "experiment/experiments.hpp"

namespace verity::cli {
namespace {

struct ExperimentArgs {
  CommonFlags common;
  std::string config;
};

void report(const std::string &summary_text, const experiment::PlanStats &stats, const std::string &out_dir,
            const CommonFlags &common) {
  auto summary = nlohmann::json::parse(summary_text);
  summary["executed_runs"] = stats.executed;
  summary["skipped_runs"] = stats.skipped;
  summary["summary_path"] = out_dir + "/summary.json";
  summary["invocation"] = invocation();
  log("experiment: ", stats.executed, " runs executed, ", stats.skipped,
      " skipped (finished earlier); summary in ", out_dir, "/summary.json");
  if (common.json) print_json(summary);
}

// One subcommand: parse the config with `parse`, run it with `run`.
template <typename Parse, typename Run>
void add_experiment(CLI::App *parent, const std::string &name, const std::string &help, Parse parse,
                    Run run) {
  auto args = std::make_shared<ExperimentArgs>();
  auto *cmd = parent->add_subcommand(name, help);
  cmd->add_option("--config", args->config, "Experiment JSON (docs/EXPERIMENTS.md)")
      ->required()
      ->check(CLI::ExistingFile);
  add_common_flags(cmd, args->common);
  cmd->callback([args, parse, run] {
    apply_common_flags(args->common);
    install_interrupt_handler();
    auto c = parse(args->config);
    experiment::PlanStats stats;
    auto summary = run(c, &stats);
    report(summary, stats, c.out_dir, args->common);
  });
}

void setup_experiment(CLI::App &app) {
  auto *cmd = app.add_subcommand("experiment", "Resumable training experiments (docs/EXPERIMENTS.md)");
  cmd->require_subcommand(1);
  add_experiment(cmd, "tradeoff",
                 "Model A (standard) vs Model B (standard + structural), per backbone and "
                 "seed",
                 experiment::parse_tradeoff_config, experiment::run_tradeoff);
  add_experiment(cmd, "transfer", "One encoder per hard-negative source; diagnostics vs observed transfer",
                 experiment::parse_transfer_config, experiment::run_transfer);
}

VERITY_REGISTER_COMMAND("experiment", setup_experiment);

}  // namespace
}  // namespace verity::cli
