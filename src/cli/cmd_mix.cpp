// verity mix: standard + structural triples at a ratio on one budget ("Model
// A" = ratio 0, "Model B" = ratio R). verity pairs: training triples from real
// data (BEIR qrels with BM25 negatives, title->body, independent cropping).
// Details: docs/TRAINING.md ("Encoder training").
#include <algorithm>
#include <random>

#include "cli/command.hpp"
#include "core/log.hpp"
#include "data/beir.hpp"
#include "data/triples.hpp"
#include "train/retrieval_triples.hpp"
#include "train/training_pairs.hpp"

namespace verity::cli {
namespace {

struct MixArgs {
  CommonFlags common;
  std::string standard, structural, out;
  train::MixOptions options;
};

void run_mix(MixArgs& a) {
  apply_common_flags(a.common);
  const auto standard = data::read_triples(a.standard);
  std::vector<data::Triple> structural;
  if (!a.structural.empty()) structural = data::read_triples(a.structural).triples;
  VERITY_CHECK(a.options.ratio == 0 || !a.structural.empty(), ConfigError,
               "--ratio ", a.options.ratio, " needs --structural");
  const auto r = train::mix_triples(standard.triples, structural, a.options);
  data::write_triples(a.out, r.triples);
  log("mix: ", r.standard, " standard + ", r.structural, " structural triples -> ", a.out);
  for (const auto& [type, n] : r.by_type) log("  ", type, ": ", n);
  if (a.common.json)
    print_json({{"command", invocation()}, {"out", a.out}, {"ratio", a.options.ratio},
                {"seed", a.options.seed}, {"total", r.triples.size()}, {"standard", r.standard},
                {"structural", r.structural}, {"by_type", r.by_type},
                {"standard_available", standard.triples.size()}, {"structural_available", structural.size()}});
}

struct PairsArgs {
  CommonFlags common;
  std::string source, dataset, split = "train", text, out;
  uint64_t seed = 0;
  size_t max_pairs = 0, top = 20;
  train::CropOptions crop;
};

void run_pairs(PairsArgs& a) {
  apply_common_flags(a.common);
  std::vector<data::Triple> triples;
  nlohmann::json extra = nlohmann::json::object();
  if (a.source == "qrels" || a.source == "title-body") {
    VERITY_CHECK(!a.dataset.empty(), ConfigError, "--source ", a.source, " needs --dataset");
    if (a.source == "qrels") {
      const auto ds = data::load_beir(a.dataset, a.split);
      train::RetrievalTripleOptions ro;
      ro.top = a.top;
      ro.seed = a.seed;
      auto mined = train::bm25_retrieval_triples(ds, ro);
      triples = std::move(mined.triples);
      if (a.max_pairs && triples.size() > a.max_pairs) {  // a seeded sample, not the first queries
        std::mt19937_64 rng(a.seed * 0x9e3779b97f4a7c15ULL + 19);
        std::shuffle(triples.begin(), triples.end(), rng);
        triples.resize(a.max_pairs);
      }
      extra = {{"queries", mined.queries}, {"queries_without_negative", mined.no_negative}, {"split", a.split}};
    } else {
      const auto corpus = data::load_corpus(a.dataset + "/corpus.jsonl");
      triples = train::title_body_triples(corpus, a.seed, a.max_pairs);
      extra = {{"documents", corpus.size()}};
    }
  } else if (a.source == "crop") {
    VERITY_CHECK(!a.text.empty(), ConfigError, "--source crop needs --text DIR");
    const auto docs = train::read_text_files(a.text);
    a.crop.seed = a.seed;
    a.crop.max_pairs = a.max_pairs;
    triples = train::cropping_triples(docs, a.crop);
    extra = {{"files", docs.size()}};
  } else {
    throw ConfigError(cat("--source ", a.source, " is unknown (valid: qrels, title-body, crop)"));
  }
  data::write_triples(a.out, triples);
  log("pairs: ", triples.size(), " ", a.source, " triples -> ", a.out);
  if (a.common.json)
    print_json({{"command", invocation()}, {"source", a.source}, {"out", a.out}, {"triples", triples.size()},
                {"seed", a.seed}, {"by_type", train::type_counts(triples)}, {"details", extra}});
}

void setup_mix(CLI::App& app) {
  auto a = std::make_shared<MixArgs>();
  auto* cmd = app.add_subcommand("mix", "Mix standard and structural triples at a ratio on one budget");
  cmd->add_option("--standard", a->standard, "Standard triples (JSONL)")->required();
  cmd->add_option("--structural", a->structural, "Structural (near-miss) triples (JSONL)");
  cmd->add_option("--ratio", a->options.ratio, "Share of the budget from --structural (0 = Model A)")
      ->capture_default_str();
  cmd->add_option("--total", a->options.total, "Budget in triples (0: the standard file's count)")
      ->capture_default_str();
  cmd->add_option("--seed", a->options.seed, "Sampling and shuffling")->capture_default_str();
  cmd->add_option("--out", a->out, "Output triples (JSONL, atomic)")->required();
  add_common_flags(cmd, a->common);
  cmd->callback([a] { run_mix(*a); });
}

void setup_pairs(CLI::App& app) {
  auto a = std::make_shared<PairsArgs>();
  auto* cmd = app.add_subcommand("pairs", "Write encoder-training triples from real data");
  cmd->add_option("--source", a->source, "qrels (BEIR split, BM25 negative) | title-body | crop")->required();
  cmd->add_option("--dataset", a->dataset, "BEIR dataset dir (qrels, title-body)");
  cmd->add_option("--split", a->split, "qrels split")->capture_default_str();
  cmd->add_option("--top", a->top, "qrels: negatives drawn from the BM25 top N")->capture_default_str();
  cmd->add_option("--text", a->text, "crop: directory of plain-text files");
  cmd->add_option("--chunk-words", a->crop.chunk_words, "crop: words per chunk")->capture_default_str();
  cmd->add_option("--min-ratio", a->crop.min_ratio, "crop: shortest span / chunk")->capture_default_str();
  cmd->add_option("--max-ratio", a->crop.max_ratio, "crop: longest span / chunk")->capture_default_str();
  cmd->add_option("--max-pairs", a->max_pairs, "At most N triples (0: all)")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Sampling")->capture_default_str();
  cmd->add_option("--out", a->out, "Output triples (JSONL, atomic)")->required();
  add_common_flags(cmd, a->common);
  cmd->callback([a] { run_pairs(*a); });
}

VERITY_REGISTER_COMMAND("mix", setup_mix);
VERITY_REGISTER_COMMAND("pairs", setup_pairs);
}  // namespace
}  // namespace verity::cli
