// verity perturb: structural near-misses (and meaning-preserving rewrites) of JSONL/plain sentences.
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "perturb/perturber.hpp"

namespace verity::cli {
namespace {

struct PerturbArgs {
  CommonFlags common;
  std::string type, input, output;
  bool plain = false;
  uint64_t seed = 0;
};

std::vector<std::string> read_sentences(const std::string& path, bool plain) {
  std::vector<std::string> texts;
  for_each_line(path, [&](std::string_view line, size_t line_no) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    if (plain) {
      texts.emplace_back(line);
      return;
    }
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(cat(path, ":", line_no, ": invalid JSON: ", e.what()));
    }
    VERITY_CHECK(j.is_object() && j.contains("text") && j["text"].is_string(), FormatError, path, ":",
                 line_no, ": expected an object with a string field \"text\"");
    texts.push_back(j["text"].get<std::string>());
  });
  return texts;
}

void run_perturb(PerturbArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  auto perturber = perturb::make_perturber(a.type);
  auto texts = read_sentences(a.input, a.plain);
  log("perturbing ", texts.size(), " sentences with ", perturber->spec(), " (seed ", a.seed, ")");
  AtomicFileWriter out(a.output);
  Progress progress("perturbing", texts.size());
  std::map<std::string, size_t> skipped;
  size_t emitted = 0, reparsed = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    check_interrupt();
    // One rng per sentence, derived from (seed, line): outputs do not depend on
    // which earlier sentences were skipped.
    perturb::Rng rng(a.seed * 0x9e3779b97f4a7c15ULL + i);
    auto p = perturber->apply(texts[i], rng);
    progress.add();
    if (!p) {
      ++skipped[perturb::Perturber::skip_reason()];
      continue;
    }
    ++emitted;
    bool parses = perturb::reparses(p->text);
    reparsed += parses;
    nlohmann::json line = {{"text", texts[i]},
                           {"perturbed", p->text},
                           {"type", p->type},
                           {"span", {p->span_begin, p->span_end}},
                           {"original_span", p->original_span},
                           {"new_span", p->new_span},
                           {"reparses", parses}};
    out.write(line.dump() + "\n");
  }
  out.commit();
  progress.finish();
  size_t total_skipped = 0;
  std::string summary;
  for (const auto& [why, n] : skipped) {
    total_skipped += n;
    summary += cat(" ", why, "=", n);
  }
  double rate = emitted ? static_cast<double>(reparsed) / static_cast<double>(emitted) : 0.0;
  log("emitted ", emitted, ", skipped ", total_skipped, summary.empty() ? "" : ":", summary,
      "; reparse_rate ", rate);
  if (a.common.json)
    print_json({{"type", perturber->spec()},
                {"input", a.input},
                {"output", a.output},
                {"seed", a.seed},
                {"argv", invocation()},
                {"sentences", texts.size()},
                {"emitted", emitted},
                {"skipped", total_skipped},
                {"skip_reasons", skipped},
                {"reparsed", reparsed},
                {"reparse_rate", rate}});
}

void setup_perturb(CLI::App& app) {
  auto args = std::make_shared<PerturbArgs>();
  auto* cmd = app.add_subcommand("perturb", "Make near-miss (or paraphrase) variants of sentences");
  cmd->add_option("--type", args->type,
                  "negation[:mode=not|antonym|mixed] | role_swap | spatial | numeric | passive | synonym")
      ->required();
  cmd->add_option("--input", args->input, "Input JSONL ({\"text\": ...} per line)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--output", args->output, "Output JSONL (written atomically)")->required();
  cmd->add_flag("--plain", args->plain, "Input is one plain-text sentence per line");
  cmd->add_option("--seed", args->seed, "Seed for the choice among candidate edits")->capture_default_str();
  add_common_flags(cmd, args->common);
  cmd->callback([args] { run_perturb(*args); });
}

VERITY_REGISTER_COMMAND("perturb", setup_perturb);
}  // namespace
}  // namespace verity::cli
