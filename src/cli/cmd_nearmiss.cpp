// verity nearmiss-build / nearmiss-eval: the structural near-miss benchmark
// (docs/NEARMISS.md).
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "core/crc32c.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "data/triples.hpp"
#include "encode/registry.hpp"
#include "nearmiss/builder.hpp"
#include "nearmiss/evaluate.hpp"

namespace verity::cli {
namespace {

struct BuildArgs {
  CommonFlags common;
  nearmiss::BuildOptions options;
  std::string ratios = "0.8,0.1,0.1";
};

nearmiss::SplitRatios parse_ratios(const std::string& text) {
  std::vector<double> v;
  size_t b = 0;
  while (b <= text.size()) {
    size_t e = text.find(',', b);
    std::string part = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
    try {
      size_t used = 0;
      v.push_back(std::stod(part, &used));
      VERITY_CHECK(used == part.size(), ConfigError, "--ratios: '", part, "' is not a number");
    } catch (const std::logic_error&) {
      throw ConfigError(cat("--ratios: '", part, "' is not a number (expected TRAIN,DEV,TEST)"));
    }
    if (e == std::string::npos) break;
    b = e + 1;
  }
  VERITY_CHECK(v.size() == 3, ConfigError, "--ratios: expected three numbers TRAIN,DEV,TEST, got '", text, "'");
  return {v[0], v[1], v[2]};
}

void run_build(BuildArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  a.options.ratios = parse_ratios(a.ratios);
  a.options.command_line = invocation();
  auto result = nearmiss::build_nearmiss(a.options);
  log("nearmiss-build: train ", result.counts[0], ", dev ", result.counts[1], ", test ", result.counts[2],
      " triples in ", a.options.out_dir);
  if (a.common.json) print_json(nlohmann::json::parse(result.manifest_json));
}

void setup_build(CLI::App& app) {
  auto args = std::make_shared<BuildArgs>();
  auto& o = args->options;
  auto* cmd = app.add_subcommand("nearmiss-build", "Build near-miss triples (train/dev/test) from the shared data");
  cmd->add_option("--data-root", o.data_root, "Directory with beir/, nearmiss/ and text/ (../shared/data)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", o.out_dir, "Output directory: train/dev/test.jsonl + manifest.json")->required();
  cmd->add_option("--seed", o.seed, "Seed for sampling, generator choices and split assignment")
      ->capture_default_str();
  cmd->add_option("--ratios", args->ratios, "TRAIN,DEV,TEST split ratios (sum 1)")->capture_default_str();
  cmd->add_option("--max-per-type", o.max_per_type,
                  "Train triples per type (dev/test scaled by ratio); 0 = no cap")
      ->capture_default_str();
  cmd->add_option("--max-scifact", o.max_scifact, "SciFact claims to use (0 = all)")->capture_default_str();
  cmd->add_option("--max-cannot", o.max_cannot, "CANNOT pairs to use (0 = all)")->capture_default_str();
  cmd->add_option("--max-text", o.max_text, "Sentences per text corpus (0 = all)")->capture_default_str();
  cmd->add_option("--max-stepgame", o.max_stepgame, "StepGame stories (0 = all)")->capture_default_str();
  cmd->add_option("--max-targeted", o.max_targeted,
                  "Further sentences per text corpus tried with role_swap and numeric only (0 = off)")
      ->capture_default_str();
  cmd->add_option("--min-words", o.min_words, "Shortest text-corpus sentence kept")->capture_default_str();
  cmd->add_option("--max-words", o.max_words, "Longest sentence kept")->capture_default_str();
  cmd->add_option("--exclude", o.exclude,
                  "Triple JSONL whose sentences no output triple may use (repeatable; e.g. an earlier dev/test)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--sources", o.sources, "Subset of scifact cannot stepgame sotu moby-dick")
      ->delimiter(',')
      ->capture_default_str();
  add_common_flags(cmd, args->common);
  cmd->callback([args] { run_build(*args); });
}

VERITY_REGISTER_COMMAND("nearmiss-build", setup_build);

struct EvalArgs {
  CommonFlags common;
  std::vector<std::string> data;
  std::string encoder = "use-lite";
  std::string verifier = "f1";
  size_t batch_size = 64;
  std::string scores_out;
};

nlohmann::json metrics_json(const nearmiss::Metrics& m) {
  return {{"pairwise_acc", m.pairwise_acc}, {"auc", m.auc}, {"count", m.count}};
}

void run_eval(EvalArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  std::vector<data::Triple> triples;
  nlohmann::json data_json = nlohmann::json::array();
  for (const auto& path : a.data) {
    auto file = data::read_triples(path);  // strict: a bad line names path:line
    data_json.push_back({{"path", path}, {"fnv1a64", hex64(file.content_hash)}, {"triples", file.triples.size()}});
    for (auto& t : file.triples) triples.push_back(std::move(t));
  }
  VERITY_CHECK(!triples.empty(), ConfigError, "nearmiss-eval: no triples in --data");
  auto verifier = nearmiss::make_eval_verifier(a.verifier);
  auto encoder = encode::make_encoder(a.encoder);
  const std::string verifier_spec = verifier ? verifier->spec() : "none";
  log("nearmiss-eval: ", triples.size(), " triples, encoder ", encoder->spec(), ", verifier ", verifier_spec);
  auto scores = nearmiss::score_triples(triples, *encoder, verifier.get(), a.batch_size);
  auto report = nearmiss::summarize(triples, scores);
  nlohmann::json by_type = nlohmann::json::object(), by_source = nlohmann::json::object();
  for (const auto& [k, m] : report.by_type) by_type[k] = metrics_json(m);
  for (const auto& [k, m] : report.by_source) by_source[k] = metrics_json(m);
  log("pairwise_acc ", report.overall.pairwise_acc, ", auc ", report.overall.auc, " over ",
      report.overall.count, " triples");
  for (const auto& [k, m] : report.by_type)
    log("  ", k, ": pairwise_acc ", m.pairwise_acc, ", auc ", m.auc, " (", m.count, ")");
  nlohmann::json out = {{"pairwise_acc", report.overall.pairwise_acc},
                        {"auc", report.overall.auc},
                        {"count", report.overall.count},
                        {"by_type", by_type},
                        {"by_source", by_source},
                        {"verifier", spec_for_report(verifier_spec)},
                        {"encoder", spec_for_report(encoder->spec())},
                        {"encoder_identity", encode::encoder_identity(*encoder)},
                        {"data", data_json},
                        {"argv", invocation()}};
  if (!a.scores_out.empty()) {
    // One line per triple, in input order, for error analysis (which triples fail, and by how much).
    std::string lines;
    for (size_t i = 0; i < triples.size(); ++i) {
      const auto& t = triples[i];
      lines += nlohmann::json{{"index", i},
                              {"type", t.type},
                              {"source", t.source},
                              {"query", t.query},
                              {"positive", t.positive},
                              {"negative", t.negative},
                              {"score_positive", scores.positive[i]},
                              {"score_negative", scores.negative[i]},
                              {"correct", scores.positive[i] > scores.negative[i]}}
                   .dump();
      lines += '\n';
    }
    write_file_atomic(a.scores_out, lines);
    log("nearmiss-eval: wrote ", triples.size(), " per-triple scores to ", a.scores_out);
  }
  if (a.common.json) print_json(out);
}

void setup_eval(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("nearmiss-eval",
                                 "Pairwise accuracy and ROC-AUC of a verifier on near-miss triples");
  cmd->add_option("--data", args->data, "Triple JSONL file (repeatable)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--encoder", args->encoder, "Encoder spec (make_encoder)")->capture_default_str();
  cmd->add_option("--verifier", args->verifier,
                  "none (pooled cosine) | f0 | f1 | f2[:...] | f3:PATH | f4:PATH | f5:PATH | ensemble:PATH | default | PATH")
      ->capture_default_str();
  cmd->add_option("--batch-size", args->batch_size, "Triples per encoding/scoring chunk")->capture_default_str();
  cmd->add_option("--scores-out", args->scores_out,
                  "Write one JSON line per triple (texts, both scores, correct) to this file");
  add_common_flags(cmd, args->common);
  cmd->callback([args] { run_eval(*args); });
}

VERITY_REGISTER_COMMAND("nearmiss-eval", setup_eval);

}  // namespace
}  // namespace verity::cli
