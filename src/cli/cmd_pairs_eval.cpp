// verity pairs-split / pairs-eval: labelled same-meaning pairs, split without
// shared sentences, and a verifier's identity verdicts measured on them
// (docs/NEARMISS.md, "Identity verdicts on real pairs").
#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "core/crc32c.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "data/labelled_pairs.hpp"
#include "encode/registry.hpp"
#include "eval/pair_eval.hpp"
#include "nearmiss/evaluate.hpp"

namespace verity::cli {
namespace {
namespace fs = std::filesystem;

std::array<double, 3> parse_split_ratios(const std::string& text) {
  std::array<double, 3> r{};
  size_t b = 0;
  for (int k = 0; k < 3; ++k) {
    size_t e = text.find(',', b);
    VERITY_CHECK((k < 2) == (e != std::string::npos), ConfigError, "--ratios: expected TRAIN,DEV,TEST, got '",
                 text, "'");
    std::string part = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
    try {
      size_t used = 0;
      r[k] = std::stod(part, &used);
      VERITY_CHECK(used == part.size(), ConfigError, "--ratios: '", part, "' is not a number");
    } catch (const std::logic_error&) {
      throw ConfigError(cat("--ratios: '", part, "' is not a number (expected TRAIN,DEV,TEST)"));
    }
    b = e + 1;
  }
  return r;
}

struct SplitArgs {
  CommonFlags common;
  std::vector<std::string> data;
  std::string out, ratios = "0.7,0.15,0.15", source;
  uint64_t seed = 1;
  bool skip_invalid = false;
};

// Logs what a lenient read skipped, and returns it for the JSON output.
nlohmann::json report_skips(const data::LabelledPairFile& f) {
  if (f.skipped) {
    log("warning: ", f.path, ": skipped ", f.skipped, " invalid line(s), e.g.");
    for (const auto& e : f.skip_examples) log("  ", e);
  }
  return {{"skipped", f.skipped}, {"skip_examples", f.skip_examples}};
}

void run_split(SplitArgs& a) {
  apply_common_flags(a.common);
  std::vector<data::LabelledPair> all;
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& path : a.data) {
    auto f = data::read_labelled_pairs(path, a.skip_invalid);
    inputs.push_back({{"path", path}, {"fnv1a64", hex64(f.content_hash)}, {"pairs", f.pairs.size()}});
    inputs.back().update(report_skips(f));
    for (auto& p : f.pairs) {
      if (!a.source.empty()) p.source = a.source;
      all.push_back(std::move(p));
    }
  }
  VERITY_CHECK(!all.empty(), ConfigError, "pairs-split: no pairs in --data");
  auto split = data::split_grouped(all, parse_split_ratios(a.ratios), a.seed);
  make_directories(a.out);
  static constexpr const char* kNames[3] = {"train", "dev", "test"};
  nlohmann::json parts = nlohmann::json::object();
  for (int k = 0; k < 3; ++k) {
    const auto& part = split.parts[k];
    size_t same = 0;
    for (const auto& p : part) same += p.label;
    data::write_labelled_pairs(a.out + "/" + kNames[k] + ".jsonl", part);
    parts[kNames[k]] = {{"pairs", part.size()}, {"same", same}, {"groups", split.groups[k]}};
    log("pairs-split: ", kNames[k], " ", part.size(), " pairs (", same, " same) in ", split.groups[k], " groups");
  }
  nlohmann::json manifest = {{"format", "verity-pair-split"}, {"version", 1},  {"inputs", inputs},
                             {"ratios", a.ratios},            {"seed", a.seed}, {"parts", parts},
                             {"argv", invocation()}};
  write_file_atomic(a.out + "/manifest.json", manifest.dump(2) + "\n");
  if (a.common.json) print_json(manifest);
}

void setup_split(CLI::App& app) {
  auto args = std::make_shared<SplitArgs>();
  auto* cmd = app.add_subcommand(
      "pairs-split", "Split labelled pairs into train/dev/test; pairs sharing a sentence stay in one part");
  cmd->add_option("--data", args->data, "Pair JSONL {a, b, label} (repeatable; pooled before splitting)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "Output directory: train/dev/test.jsonl + manifest.json")->required();
  cmd->add_option("--ratios", args->ratios, "TRAIN,DEV,TEST shares of the pairs (sum 1)")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the group order")->capture_default_str();
  cmd->add_option("--source", args->source, "Source name written into every output pair (e.g. qqp)");
  cmd->add_flag("--skip-invalid", args->skip_invalid,
                "Skip (and count) lines with a missing or empty field instead of stopping at the first");
  add_common_flags(cmd, args->common);
  cmd->callback([args] { run_split(*args); });
}
VERITY_REGISTER_COMMAND("pairs-split", setup_split);

struct EvalArgs {
  CommonFlags common;
  std::vector<std::string> data, verifiers{"default"};
  std::string encoder = "use-lite";
  std::optional<double> reject_below;
  size_t batch_size = 64;
  std::string scores_out;
  bool skip_invalid = false;
  size_t max_pairs = 0;
  uint64_t seed = 1;
};

// With one label only, AUC (and, without positives, AP and the recalls) is
// undefined: null, not a number that looks like a result.
bool both_labels(const eval::BinaryMetrics& m) { return m.positives > 0 && m.positives < m.count; }

nlohmann::json metrics_json(const eval::BinaryMetrics& m) {
  const auto defined = [](bool ok, double v) { return ok ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json j = {{"count", m.count},
                      {"positives", m.positives},
                      {"auc", defined(both_labels(m), m.auc)},
                      {"ap", defined(m.positives > 0, m.ap)},
                      {"accuracy", m.accuracy ? nlohmann::json(*m.accuracy) : nlohmann::json()},
                      {"best_accuracy", m.best_accuracy},
                      {"best_threshold", m.best_threshold},
                      {"ece", m.ece},
                      {"recall_at_precision_0.90", defined(m.positives > 0, m.recall_at_precision_90)},
                      {"recall_at_precision_0.95", defined(m.positives > 0, m.recall_at_precision_95)}};
  return j;
}

// "qqp/test" for .../qqp/test.jsonl: short, and unique for the shared layout.
std::string file_key(const std::string& path) {
  fs::path p(path);
  auto parent = p.parent_path().filename().string();
  return (parent.empty() ? "" : parent + "/") + p.stem().string();
}

void run_pairs_eval(EvalArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  struct File {
    std::string key;
    data::LabelledPairFile file;
  };
  std::vector<File> files;
  nlohmann::json data_json = nlohmann::json::array();
  for (const auto& path : a.data) {
    File f{file_key(path), data::read_labelled_pairs(path, a.skip_invalid)};
    VERITY_CHECK(!f.file.pairs.empty(), ConfigError, path, ": no pairs to evaluate");
    if (a.max_pairs && f.file.pairs.size() > a.max_pairs) {  // seeded sample, kept in file order
      std::vector<size_t> order(f.file.pairs.size());
      std::iota(order.begin(), order.end(), size_t(0));
      std::mt19937_64 rng(a.seed);
      std::shuffle(order.begin(), order.end(), rng);
      order.resize(a.max_pairs);
      std::sort(order.begin(), order.end());
      std::vector<data::LabelledPair> kept;
      for (size_t i : order) kept.push_back(std::move(f.file.pairs[i]));
      f.file.pairs = std::move(kept);
    }
    for (const auto& g : files)
      VERITY_CHECK(g.key != f.key, ConfigError, "pairs-eval: two --data files are both named '", f.key, "' (",
                   g.file.path, ", ", path, ")");
    data_json.push_back({{"path", path}, {"name", f.key}, {"fnv1a64", hex64(f.file.content_hash)},
                         {"pairs", f.file.pairs.size()}});
    data_json.back().update(report_skips(f.file));
    files.push_back(std::move(f));
  }
  auto encoder = encode::make_encoder(a.encoder);
  struct Scorer {
    std::unique_ptr<verify::Verifier> verifier;
    std::string name;  // the spec as given (the report's key), e.g. "default"
    std::string spec;  // what it resolved to, with a relative path
    std::optional<double> threshold;
    std::vector<float> all_scores;
    nlohmann::json per_file = nlohmann::json::object();
    double auc_sum = 0;
    size_t auc_files = 0;  // files with both labels: the macro AUC's
  };
  std::vector<Scorer> scorers_run;
  std::vector<const verify::Verifier*> verifiers;
  for (const auto& spec : a.verifiers) {
    for (const auto& other : scorers_run)
      VERITY_CHECK(other.name != spec, ConfigError, "pairs-eval: --verifier ", spec, " is given twice");
    Scorer s;
    s.verifier = spec == "cosine" ? nullptr : nearmiss::make_eval_verifier(spec);
    s.name = spec;
    s.spec = s.verifier ? spec_for_report(s.verifier->spec()) : "cosine";
    s.threshold = a.reject_below;
    if (!s.threshold && s.verifier && s.verifier->default_threshold()) s.threshold = *s.verifier->default_threshold();
    verifiers.push_back(s.verifier.get());
    scorers_run.push_back(std::move(s));
  }
  std::vector<int> all_labels;
  std::string lines;
  for (const auto& f : files) {
    log("pairs-eval: ", f.key, " (", f.file.pairs.size(), " pairs), ", verifiers.size(), " scorer(s)");
    auto scores = eval::score_labelled_pairs(f.file.pairs, *encoder, verifiers, a.batch_size);
    std::vector<int> labels;
    for (const auto& p : f.file.pairs) labels.push_back(p.label);
    all_labels.insert(all_labels.end(), labels.begin(), labels.end());
    const size_t same = size_t(std::count(labels.begin(), labels.end(), 1));
    if (same == 0 || same == labels.size())
      log("pairs-eval: ", f.file.path, ": every pair is labelled ", same ? 1 : 0,
          ": its AUC is undefined (null) and left out of the macro AUC");
    for (size_t v = 0; v < scorers_run.size(); ++v) {
      auto& s = scorers_run[v];
      auto m = eval::binary_metrics(scores[v], labels, s.threshold);
      if (both_labels(m)) s.auc_sum += m.auc, ++s.auc_files;
      s.per_file[f.key] = metrics_json(m);
      log("  ", s.name, ": auc ", m.auc, ", ap ", m.ap, ", best_accuracy ", m.best_accuracy,
          m.accuracy ? cat(", accuracy ", *m.accuracy) : std::string(), ", ece ", m.ece);
      if (!a.scores_out.empty())
        for (size_t i = 0; i < scores[v].size(); ++i)
          lines += nlohmann::json{{"scorer", s.name}, {"file", f.key}, {"line", f.file.pairs[i].line},
                                  {"label", labels[i]}, {"score", scores[v][i]}}
                       .dump() + "\n";
      s.all_scores.insert(s.all_scores.end(), scores[v].begin(), scores[v].end());
    }
  }
  nlohmann::json scorers = nlohmann::json::object();
  for (auto& s : scorers_run) {
    auto overall = eval::binary_metrics(s.all_scores, all_labels, s.threshold);
    scorers[s.name] = {{"spec", s.spec},
                       {"threshold", s.threshold ? nlohmann::json(*s.threshold) : nlohmann::json()},
                       {"calibrated", s.verifier && s.verifier->default_threshold().has_value()},
                       {"encoder_recorded", s.verifier ? s.verifier->encoder() : ""},
                       {"overall", metrics_json(overall)},
                       {"macro_auc", s.auc_files ? nlohmann::json(s.auc_sum / double(s.auc_files)) : nlohmann::json()},
                       {"files", s.per_file}};
  }
  if (!a.scores_out.empty()) write_file_atomic(a.scores_out, lines);
  nlohmann::json out = {{"encoder", spec_for_report(encoder->spec())},
                        {"encoder_identity", encode::encoder_identity(*encoder)},
                        {"data", data_json},
                        {"scorers", scorers},
                        {"argv", invocation()}};
  if (a.verifiers.size() == 1) {  // one scorer: its results at the top level as well
    const auto& only = scorers.begin().value();
    out["verifier"] = scorers.begin().key();
    for (const char* key : {"threshold", "calibrated", "overall", "macro_auc", "files"}) out[key] = only[key];
  }
  if (a.common.json) print_json(out);
}

void setup_pairs_eval(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("pairs-eval",
                                 "Identity verdicts on labelled pairs: AUC, AP, accuracy, ECE, recall at precision");
  cmd->add_option("--data", args->data, "Pair JSONL {a, b, label} (repeatable; reported per file and overall)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--verifier", args->verifiers,
                  "Scorer (repeatable): cosine (pooled) | f0 | f1 | f2[:...] | f3:PATH | f4:PATH | f5:PATH | "
                  "ensemble:PATH | default | PATH")
      ->capture_default_str();
  cmd->add_option("--encoder", args->encoder, "Encoder spec (make_encoder)")->capture_default_str();
  cmd->add_option("--reject-below", args->reject_below,
                  "Verdict threshold for `accuracy` (default: the verifier's calibrated threshold)");
  cmd->add_option("--batch-size", args->batch_size, "Pairs per encoding/scoring chunk")->capture_default_str();
  cmd->add_option("--scores-out", args->scores_out, "Write one JSON line per pair and scorer (label, score)");
  cmd->add_flag("--skip-invalid", args->skip_invalid,
                "Skip (and count) lines with a missing or empty field instead of stopping at the first");
  cmd->add_option("--max-pairs", args->max_pairs, "Score a seeded sample of at most N pairs per file (0: all)");
  cmd->add_option("--seed", args->seed, "Seed of the --max-pairs sample")->capture_default_str();
  add_common_flags(cmd, args->common);
  cmd->callback([args] { run_pairs_eval(*args); });
}
VERITY_REGISTER_COMMAND("pairs-eval", setup_pairs_eval);

}  // namespace
}  // namespace verity::cli
