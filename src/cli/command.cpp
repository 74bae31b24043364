#include "cli/command.hpp"

#include <cstdio>
#include <map>

#include "core/log.hpp"

namespace verity::cli {
namespace {
std::string g_invocation;
std::map<std::string, CommandSetup>& registry() {
  static std::map<std::string, CommandSetup> r;
  return r;
}
}  // namespace

void add_common_flags(CLI::App* cmd, CommonFlags& flags) {
  cmd->add_flag("--json", flags.json, "Print exactly one JSON object on stdout");
  cmd->add_flag("-q,--quiet", flags.quiet, "Silence progress and logs on stderr");
}

void apply_common_flags(const CommonFlags& flags) { set_quiet(flags.quiet); }

void set_invocation(int argc, char** argv) {
  g_invocation.clear();
  for (int i = 0; i < argc; ++i) {
    if (i) g_invocation += ' ';
    g_invocation += argv[i];
  }
}
const std::string& invocation() { return g_invocation; }

void print_json(const nlohmann::json& j) {
  std::string s = j.dump(2);
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

int register_command(const std::string& name, CommandSetup setup) {
  registry().emplace(name, std::move(setup));
  return 0;
}

void setup_all_commands(CLI::App& app) {
  for (auto& [name, setup] : registry()) setup(app);
}
}  // namespace verity::cli
