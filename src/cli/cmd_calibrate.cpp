// verity calibrate: refits a trained F5's calibration (P(same) and its verdict
// threshold) on labelled pairs, e.g. a user's own domain, without retraining
// the network. Details: docs/TRAINING.md ("Recalibrating a verifier").
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/f5_report_json.hpp"
#include "cli/labelled_inputs.hpp"
#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "data/labelled_pairs.hpp"
#include "data/triples.hpp"
#include "encode/registry.hpp"
#include "train/alignment_training.hpp"
#include "verify/alignment_verifier.hpp"

namespace verity::cli {
namespace {

using WordPairs = std::vector<std::pair<std::string, std::string>>;

// The word lists --add-antonyms names, by name.
const std::map<std::string, WordPairs (*)()> kAntonymLists = {{"relations", verify::relation_antonyms},
                                                              {"directions", verify::direction_antonyms},
                                                              {"spatial", verify::spatial_relation_changes},
                                                              {"time", verify::time_relation_changes}};

// "relations+directions" as {"relations", "directions"}.
std::vector<std::string> split_lists(const std::string& joined) {
  std::vector<std::string> lists;
  for (size_t start = 0; start <= joined.size();) {
    const size_t plus = std::min(joined.find('+', start), joined.size());
    lists.push_back(joined.substr(start, plus - start));
    start = plus + 1;
  }
  return lists;
}

struct CalibrateArgs {
  CommonFlags common;
  std::string verifier, out, encoder = "use-lite", dev_triples, pooled_term = "none",
              threshold_rule = "plateau", gate = "refit", add_antonyms = "none";
  bool spell_lexicon = false, flip_cap = false, surface_floor = false, name_cap = false, transposition_cap = false,
       number_cap = false, keep_calibration = false, whole_words = false;
  std::vector<std::string> dev_pairs;
  size_t max_pairs_per_source = 0, chunk = 64;
  uint64_t seed = 1;
  double gate_band = 0;
};

void run_calibrate(CalibrateArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  const auto term = train::parse_pooled_term(a.pooled_term);
  const auto rule = train::parse_threshold_rule(a.threshold_rule);
  const auto gate = train::parse_gate_source(a.gate);
  VERITY_CHECK(a.gate_band == 0 || term == train::PooledTerm::gated, ConfigError,
               "calibrate: --gate-band needs --pooled-term gated, not '", a.pooled_term, "'");
  VERITY_CHECK(!a.dev_pairs.empty() || !a.dev_triples.empty(), ConfigError,
               "calibrate: give labelled pairs (--dev-pairs) or near-miss triples (--dev-triples)");
  VERITY_CHECK(verify::is_alignment_verifier_file(a.verifier), ConfigError, "--verifier ", a.verifier,
               ": not an F5 file (calibrate refits F5's calibration; F0-F2 and F3/F4 have none)");
  auto verifier = verify::AlignmentVerifier::load(a.verifier);
  VERITY_CHECK(verifier->is_trained(), ConfigError, "--verifier ", a.verifier, ": untrained weights");
  size_t added_antonyms = 0;
  if (a.add_antonyms != "none") {
    WordPairs pairs;
    for (const auto& list : split_lists(a.add_antonyms)) verify::merge_antonyms(pairs, kAntonymLists.at(list)());
    try {
      added_antonyms = verifier->add_antonyms(pairs);
    } catch (const ConfigError& e) {
      throw ConfigError(cat("--add-antonyms ", a.add_antonyms, ": ", e.what()));
    }
    log("calibrate: ", added_antonyms, " opposites (", a.add_antonyms, ") added to the lexicon");
  }

  nlohmann::json inputs = nlohmann::json::array();
  std::map<std::string, std::vector<data::LabelledPair>> by_source;
  for (const auto& path : a.dev_pairs) {
    auto f = data::read_labelled_pairs(path, true);
    if (f.skipped) log("warning: ", path, ": skipped ", f.skipped, " invalid line(s), e.g. ", f.skip_examples.front());
    const auto name = pair_source_name(f);
    inputs.push_back({{"path", std::filesystem::path(path).filename().string()},
                      {"fnv1a64", hex64(f.content_hash)},
                      {"pairs", f.pairs.size()},
                      {"source", name}});
    auto& dest = by_source[name];
    dest.insert(dest.end(), f.pairs.begin(), f.pairs.end());
  }
  std::vector<train::LabelledGroup> groups, whole;
  const bool whole_files = a.surface_floor || a.name_cap || a.transposition_cap || a.number_cap;
  if (whole_files)  // every dev pair, not the sample: surface matches, swaps and changed numbers are few
    for (const auto& [name, pairs] : by_source) whole.push_back({name, pairs});
  nlohmann::json samples = nlohmann::json::object();
  for (auto& [name, pairs] : by_source) {  // the sample train-verifier --sample-seed S draws for its dev pairs
    groups.push_back({name, seeded_sample(std::move(pairs), a.max_pairs_per_source, a.seed + 1)});
    samples[name] = {{"pairs", groups.back().pairs.size()},
                     {"fnv1a64", hex64(pairs_sample_hash(groups.back().pairs))}};
  }
  if (!a.dev_triples.empty()) {
    auto f = data::read_triples(a.dev_triples);
    inputs.push_back({{"path", std::filesystem::path(a.dev_triples).filename().string()},
                      {"fnv1a64", hex64(f.content_hash)},
                      {"triples", f.triples.size()},
                      {"source", "nearmiss"}});
    train::LabelledGroup g{"nearmiss", {}};
    for (const auto& t : f.triples) {
      g.pairs.push_back({t.query, t.positive, 1, "", "nearmiss"});
      g.pairs.push_back({t.query, t.negative, 0, "", "nearmiss"});
    }
    groups.push_back(std::move(g));
  }
  auto encoder = encode::make_encoder(a.encoder);
  if (a.whole_words) {
    try {
      verifier->set_whole_words(true);
    } catch (const ConfigError& e) {
      throw ConfigError(cat("--whole-words: ", e.what()));
    }
  }
  size_t spelled_forms = 0;
  if (a.spell_lexicon) {
    try {
      spelled_forms = train::spell_lexicon(*verifier, *encoder);
    } catch (const ConfigError& e) {
      throw ConfigError(cat("--spell-lexicon: ", e.what()));
    }
    log("calibrate: ", spelled_forms, " antonym forms and number words that ", a.encoder,
        " splits into pieces spelled in the lexicon");
  }
  train::RecalibrateOptions options;
  options.term = term, options.rule = rule, options.chunk = a.chunk, options.gate_source = gate;
  options.gate_band = a.gate_band, options.fit_flip_cap = a.flip_cap, options.keep_calibration = a.keep_calibration;
  if (whole_files)
    for (const auto& g : groups)
      if (g.name == "nearmiss") whole.push_back(g);
  options.fit_surface_floor = a.surface_floor, options.fit_name_cap = a.name_cap;
  options.fit_transposition_cap = a.transposition_cap, options.fit_number_cap = a.number_cap;
  options.rule_groups = std::move(whole);
  auto report = train::recalibrate(*verifier, *encoder, groups, options);
  // A rule's counts, per group and in all, and what they give (`key`: the cap or the floor); null when not fitted.
  const auto rule_json = [](const auto& fit, const char* key, auto share) {
    if (!fit) return nlohmann::json(nullptr);
    nlohmann::json out = {{"pairs", fit->pairs}, {"same", fit->same}, {key, share(*fit)}};
    for (const auto& [name, counts] : fit->by_group)
      out["by_group"][name] = {{"pairs", counts.first}, {"same", counts.second}};
    return out;
  };
  const auto cap = [](const train::PairRuleCapFit& fit) { return fit.cap; };
  const nlohmann::json flips = rule_json(report.flips, "cap", cap), names = rule_json(report.names, "cap", cap),
                       transpositions = rule_json(report.transpositions, "cap", cap),
                       numbers = rule_json(report.numbers, "cap", cap),
                       surface = rule_json(report.surface, "floor",
                                           [](const train::SurfaceFloorFit& fit) { return fit.floor; });

  // The file keeps how its network was trained and adds how it was recalibrated.
  nlohmann::json trained;
  try {
    trained = nlohmann::json::parse(verifier->provenance());
  } catch (const nlohmann::json::exception&) {
    trained = verifier->provenance();
  }
  nlohmann::json recalibration = {{"argv", invocation()},
                                  {"inputs", inputs},
                                  {"samples", samples},
                                  {"pooled_term", train::pooled_term_name(term)},
                                  {"threshold_rule", train::threshold_rule_name(rule)},
                                  {"gate", term == train::PooledTerm::gated ? train::gate_source_name(gate) : "none"},
                                  {"max_pairs_per_source", a.max_pairs_per_source},
                                  {"seed", a.seed}};
  if (a.add_antonyms != "none")  // absent otherwise, as before
    recalibration["added_antonyms"] = {{"source", a.add_antonyms}, {"pairs", added_antonyms}};
  if (a.spell_lexicon) recalibration["spelled_forms"] = spelled_forms;
  if (a.whole_words) recalibration["whole_words"] = true;
  if (a.gate_band > 0) recalibration["gate_band"] = a.gate_band;
  if (report.flips) recalibration["flip_cap"] = flips;
  if (report.surface) recalibration["surface_floor"] = surface;
  if (report.names) recalibration["name_cap"] = names;
  if (report.transpositions) recalibration["transposition_cap"] = transpositions;
  if (report.numbers) recalibration["number_cap"] = numbers;
  if (a.keep_calibration) recalibration["kept_calibration"] = true;
  verifier->mark_trained(nlohmann::json{{"recalibrated", recalibration}, {"trained", trained}}.dump());
  verifier->save(a.out);

  const auto& fit = report.fit;
  auto calibration = calibration_fit_json(fit);
  calibration.update({{"network_macro_auc", fit.network_macro_auc}, {"mean_accuracy", fit.mean_accuracy}});
  if (a.keep_calibration) {  // nothing was chosen: the fit's choices are the file's, unknown here
    for (const char* key : {"pooled_term", "pooled_share", "threshold_rule"}) calibration.erase(key);
    calibration["kept"] = true;
  }
  log("calibrate: ", report.pairs, " pairs in ", groups.size(), " groups; threshold ", fit.calibration.threshold,
      ", pooled weight ", fit.calibration.pooled_weight, ", dev macro AUC ", fit.macro_auc, " (network alone ",
      fit.network_macro_auc, "); wrote ", a.out);
  if (!a.common.json) return;
  nlohmann::json summary = {{"verifier", std::filesystem::path(a.verifier).filename().string()},
                            {"out", a.out},
                            {"encoder", verifier->encoder()},
                            {"pairs", report.pairs},
                            {"inputs", inputs},
                            {"samples", samples},
                            {"calibration", calibration},
                            {"previous_calibration",
                             report.previous ? verify::calibration_json(*report.previous) : nlohmann::json(nullptr)},
                            {"dev", dev_metrics_json(report.dev)},
                            {"previous_dev", dev_metrics_json(report.previous_dev)},
                            {"seconds", report.seconds}};
  if (recalibration.contains("added_antonyms")) summary["added_antonyms"] = recalibration.at("added_antonyms");
  if (a.spell_lexicon) summary["spelled_forms"] = spelled_forms;
  if (a.whole_words) summary["whole_words"] = true;
  if (report.flips) summary["flip_cap"] = flips;
  if (report.surface) summary["surface_floor"] = surface;
  if (report.names) summary["name_cap"] = names;
  if (report.transpositions) summary["transposition_cap"] = transpositions;
  if (report.numbers) summary["number_cap"] = numbers;
  print_json(summary);
}

void setup_calibrate(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate", "Refit a trained F5 verifier's calibration (P(same), verdict threshold) on labelled pairs");
  cmd->add_option("--verifier", a->verifier, "Trained F5 file (.valn) to recalibrate")->required();
  cmd->add_option("--out", a->out, "Recalibrated F5 file to write (atomically; may be --verifier itself)")
      ->required();
  cmd->add_option("--dev-pairs", a->dev_pairs,
                  "Labelled pair JSONL {a, b, label} (repeatable; one group per source, each weighing the same)");
  cmd->add_option("--dev-triples", a->dev_triples,
                  "Near-miss triples JSONL: (query, positive) same, (query, negative) not, as one more group");
  cmd->add_option("--encoder", a->encoder, "Encoder the verifier was trained on (its file records it)")
      ->capture_default_str();
  cmd->add_option("--pooled-term", a->pooled_term,
                  "none | penalty (a low pooled cosine lowers P; the network's threshold) | refit | gated (a high "
                  "cosine raises P too, but never over the network's own threshold where it rejects)")
      ->capture_default_str();
  cmd->add_option("--threshold-rule", a->threshold_rule, kThresholdRuleHelp)->capture_default_str();
  cmd->add_option("--gate", a->gate,
                  "With --pooled-term gated: refit (the gate is the network's calibration refitted on these pairs) | "
                  "file (the gate is the file's own calibration, so every verdict stays the file's)")
      ->capture_default_str();
  cmd->add_option("--gate-band", a->gate_band,
                  "With --pooled-term gated: within this distance of the threshold, on a pair no identity rule fires "
                  "on (no unmatched number, antonym, extra negator or reordering), the pooled cosine may turn the "
                  "network's verdict (0: never)")
      ->check(CLI::Range(0.0, 0.49))
      ->capture_default_str();
  cmd->add_flag("--flip-cap", a->flip_cap,
                "Cap P of a pair that differs only by a polarity flip (an antonym or an extra negator; every other "
                "token matched exactly, stop words aside: \"increase volume\" / \"decrease volume\") at the share "
                "of same-meaning pairs among such dev pairs, (same + 1) / (pairs + 2)");
  cmd->add_flag("--surface-floor", a->surface_floor,
                "Raise P of a pair whose texts are the same but for case, spacing, apostrophes and sentence "
                "punctuation (\"What is machine learning ?\" / \"What is Machine Learning?\"), or for a number "
                "written another way (\"ten\" / \"10\"), to at least the "
                "share of same-meaning pairs among such dev pairs, (same + 1) / (pairs + 2), counted over every "
                "--dev-pairs pair (not only the capped sample) and the --dev-triples");
  cmd->add_flag("--name-cap", a->name_cap,
                "Cap P of a pair whose texts are the same but for one word inside written as a name (a capital first, "
                "or after a small first letter: \"iPhone\"), swapped for another "
                "(\"install Python on Windows\" / \"install Java on Windows\"; near spellings such as \"Willi\" / "
                "\"Willy\" aside) at the share of same-meaning pairs among such dev pairs, (same + 1) / (pairs + 2), "
                "counted over every --dev-pairs pair (not only the capped sample) and the --dev-triples");
  cmd->add_flag("--transposition-cap", a->transposition_cap,
                "Cap P of a pair whose texts are the same but for two words that trade places (\"flights from "
                "Boston to Denver\" / \"flights from Denver to Boston\"; two neighbours, two stop words, and a "
                "coordination read the other way round such as \"Python or Java\", aside) at the share of same-meaning pairs among "
                "such dev pairs, (same + 1) / (pairs + 2), counted over every --dev-pairs pair (not only the capped "
                "sample) and the --dev-triples");
  cmd->add_flag("--number-cap", a->number_cap,
                "Cap P of a pair whose texts are the same but for quantities changed in value or unit, read from "
                "digits, number words, numbers of several words and ordinals, with a sign or unit glued on or "
                "written after them (\"lasted thirteen minutes\" / \"lasted 30 minutes\", \"port 6379\" / "
                "\"port 6380\", \"16gb\" / \"8gb\" or \"16tb\", \"10 kg\" / \"10 lb\", \"first\" / \"third\"; "
                "\"ten\" / \"10\", \"twenty five\" / \"25\" and \"1,000\" / \"1000\" aside) at the share of "
                "same-meaning pairs among such "
                "dev pairs, (same + 1) / (pairs + 2), counted over every --dev-pairs pair (not only the capped "
                "sample) and the --dev-triples");
  cmd->add_flag("--keep-calibration", a->keep_calibration,
                "Keep the file's calibration as it is and fit only --flip-cap, --surface-floor, --name-cap, "
                "--transposition-cap and --number-cap on top, so no other score moves (--pooled-term, --threshold-rule, --gate and "
                "--gate-band are then unused)");
  cmd->add_option("--max-pairs-per-source", a->max_pairs_per_source,
                  "Seeded cap on the pairs of each --dev-pairs source (0: all); with --seed S, the sample "
                  "train-verifier's --max-dev-pairs-per-source draws with --sample-seed S. The --dev-triples are "
                  "all read, as train-verifier reads its near-miss dev triples")
      ->capture_default_str();
  cmd->add_option("--add-antonyms", a->add_antonyms,
                  "Before the fit, add to the verifier's lexicon: none | relations (opposites of spatial, time and "
                  "permission words WordNet lacks: under/on, behind/front, before/after, ...) | directions (opposite "
                  "directions of a change or a choice: increase/reduce, rose/fell, enable/disable, add/remove, ...) | "
                  "spatial (spatial relations that differ without being opposites: above/beside, left/front, "
                  "behind/between, ...) | time (times of one kind that differ without being opposites: "
                  "monthly/yearly, morning/afternoon, weekdays/weekends, ...) | several joined by '+' (relations+directions+spatial); the "
                  "network is unchanged")
      ->check(CLI::Validator(
          [](const std::string& value) {
            if (value == "none") return std::string();
            for (const auto& list : split_lists(value))
              if (!kAntonymLists.contains(list))
                return cat("'", list, "' is none of relations, directions, spatial, time (or none alone)");
            return std::string();
          },
          "LISTS", "antonym lists"))
      ->capture_default_str();
  cmd->add_flag("--spell-lexicon", a->spell_lexicon,
               "Before the fit (after --add-antonyms), spell the lexicon's antonym forms and number words with "
               "the encoder's tokenizer and keep those it splits into pieces (\"disable\" as \"\u2581dis able\", "
               "\"sixty\" as \"\u2581six ty\"), so their swaps are seen too; the network is unchanged");
  cmd->add_flag("--whole-words", a->whole_words,
               "Before the fit, read the lexicon in whole words only: a word of it that the tokenizer leaves "
               "inside a longer word (\"\u2581under min ing\" of \"undermining\", \"\u2581not able\" of "
               "\"notable\") is none, an inflection after it (\"\u2581cold er\") aside; the network is unchanged");
  cmd->add_option("--seed", a->seed, "Seed of the capped sample")->capture_default_str();
  cmd->add_option("--chunk", a->chunk, "Pairs encoded per batch")->capture_default_str();
  add_common_flags(cmd, a->common);
  cmd->callback([a] { run_calibrate(*a); });
}

}  // namespace

VERITY_REGISTER_COMMAND("calibrate", setup_calibrate);

}  // namespace verity::cli
