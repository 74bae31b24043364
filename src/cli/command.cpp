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

std::vector<std::string> given_flags(const CLI::App* cmd, std::initializer_list<const char*> flags) {
  std::vector<std::string> given;
  for (const char* flag : flags)
    if (cmd->count(flag) > 0) given.push_back(flag);
  return given;
}

std::string flags_refused(const std::vector<std::string>& flags, const std::string& scope, const std::string& help) {
  std::string names;
  for (const auto& f : flags) names += (names.empty() ? "" : ", ") + f;
  return cat(names, flags.size() == 1 ? " applies" : " apply", " to ", scope, " only; ",
             flags.size() == 1 ? "it is" : "they are", " not read here (see ", help, ")");
}

int register_command(const std::string& name, CommandSetup setup) {
  registry().emplace(name, std::move(setup));
  return 0;
}

void setup_all_commands(CLI::App& app) {
  for (auto& [name, setup] : registry()) setup(app);
}
}  // namespace verity::cli
