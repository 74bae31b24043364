// verity: one binary, subcommands registered from src/cli/cmd_*.cpp.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <unistd.h>

#include "cli/command.hpp"
#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace {
// CLI11 answers an unknown command with "A subcommand is required"; this names
// it and lists the commands of that level instead. nullopt when the words
// before the first option are all known commands (or reach a leaf command).
std::optional<std::string> unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-' || at->get_require_subcommand_min() == 0) return std::nullopt;
    CLI::App* next = nullptr;
    std::string known;
    for (CLI::App* sub : at->get_subcommands({})) {
      if (sub->check_name(word)) next = sub;
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!next) {
      const std::string where = at == &app ? "verity" : "verity " + at->get_name();
      return "unknown command '" + word + "' for " + where + " (commands: " + known + ")";
    }
    at = next;
  }
  return std::nullopt;
}

// CLI11 reads "-1" into an unsigned option as 2^64 - 1; every such option
// refuses a negative value instead (exit 2, naming the option).
void refuse_negative_unsigned(CLI::App& app) {
  static const CLI::Validator not_negative(
      [](std::string& text) { return text.starts_with('-') ? "must not be negative, got " + text : std::string(); },
      "", "not negative");
  for (CLI::Option* opt : app.get_options())
    if (opt->get_type_name() == "UINT") opt->check(not_negative);
  for (CLI::App* sub : app.get_subcommands({})) refuse_negative_unsigned(*sub);
}
}  // namespace

int main(int argc, char** argv) {
  // libgomp spin-waits ~8 ms per parallel region on this class of machine,
  // and reads its environment before main() runs: so set the policy and
  // re-execute once (unless the user chose a policy).
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: carry on spinning
  }
  CLI::App app{"verity: two-stage dense retrieval that retrieves fast and verifies identity"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "verity 0.1.0");
  verity::cli::set_invocation(argc, argv);
  verity::cli::setup_all_commands(app);
  refuse_negative_unsigned(app);
  if (auto message = unknown_command(app, argc, argv)) {
    std::fprintf(stderr, "verity: error: %s\n", message->c_str());
    return 2;
  }
  try {
    verity::best_isa();  // a bad VERITY_KERNEL_ISA is refused before any work starts
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const verity::ConfigError& e) {
    std::fprintf(stderr, "verity: error: %s\n", e.what());
    return 2;
  } catch (const verity::Interrupted& e) {
    std::fprintf(stderr, "verity: %s\n", e.what());
    return 130;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "verity: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
