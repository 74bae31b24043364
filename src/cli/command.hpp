#pragma once
// Subcommands register themselves here so each lives in its own file.
#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace verity::cli {

// Flags every subcommand has.
struct CommonFlags {
  bool json = false;
  bool quiet = false;
};
void add_common_flags(CLI::App* cmd, CommonFlags& flags);
// Applies --quiet (and implies it for nothing else: --json keeps stderr logs).
void apply_common_flags(const CommonFlags& flags);

// The command line as typed (for provenance in outputs and manifests).
void set_invocation(int argc, char** argv);
const std::string& invocation();

// Prints exactly one JSON object on stdout.
void print_json(const nlohmann::json& j);

// Those of `flags` the command line gave (a flag left at its default is not given).
std::vector<std::string> given_flags(const CLI::App* cmd, std::initializer_list<const char*> flags);
// "--a applies" / "--a, --b apply" to what `scope` names "only; ... not read here (see `help`)".
std::string flags_refused(const std::vector<std::string>& flags, const std::string& scope, const std::string& help);

// A subcommand adds itself to the app; its callback does the work and may throw
// verity::Error (mapped to exit 1) or verity::ConfigError (exit 2).
using CommandSetup = std::function<void(CLI::App& app)>;
int register_command(const std::string& name, CommandSetup setup);
void setup_all_commands(CLI::App& app);

}  // namespace verity::cli

#define VERITY_CONCAT_INNER(a, b) a##b
#define VERITY_CONCAT(a, b) VERITY_CONCAT_INNER(a, b)
// Use once per subcommand file: VERITY_REGISTER_COMMAND("index", setup_index_command);
#define VERITY_REGISTER_COMMAND(name, fn) \
  static const int VERITY_CONCAT(verity_command_, __LINE__) = ::verity::cli::register_command(name, fn)
