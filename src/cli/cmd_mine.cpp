// verity mine: hard-negative mining into triple JSONL (docs/MINING.md).
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "cli/command.hpp"
#include "core/log.hpp"
#include "data/beir.hpp"
#include "data/triples.hpp"
#include "mine/miner.hpp"

namespace verity::cli {
namespace {
namespace fs = std::filesystem;

struct MineArgs {
  CommonFlags common;
  mine::MineOptions options;
  std::string dataset, split = "train", corpus, queries, qrels, out;
  double absolute_margin = 0, relative_margin = 0, max_score = 0;
};

// --dataset DIR --split S, with --corpus/--queries/--qrels overriding its files
// (or replacing it entirely when all three are given).
data::BeirDataset load_inputs(const MineArgs& a) {
  const bool all_files = !a.corpus.empty() && !a.queries.empty() && !a.qrels.empty();
  VERITY_CHECK(!a.dataset.empty() || all_files, ConfigError,
               "give --dataset DIR, or all of --corpus, --queries and --qrels");
  if (!a.dataset.empty() && a.corpus.empty() && a.queries.empty() && a.qrels.empty())
    return data::load_beir(a.dataset, a.split);
  auto pick = [&](const std::string& given, const std::string& in_dataset) {
    return given.empty() ? a.dataset + "/" + in_dataset : given;
  };
  data::BeirDataset ds;
  ds.split = a.split;
  ds.dir = a.dataset.empty() ? fs::path(a.corpus).parent_path().string() : a.dataset;
  ds.name = fs::path(ds.dir).filename().string();
  if (ds.name.empty()) ds.name = "corpus";
  ds.corpus = data::load_corpus(pick(a.corpus, "corpus.jsonl"));
  ds.queries = data::load_queries(pick(a.queries, "queries.jsonl"));
  const std::string qrels_path = pick(a.qrels, "qrels/" + a.split + ".tsv");
  ds.qrels = data::load_qrels(qrels_path, &ds.report.qrels_rows);
  // Rows naming unknown queries or documents are dropped, counted and logged.
  std::unordered_set<std::string> query_ids;
  for (const auto& q : ds.queries) query_ids.insert(q.id);
  for (auto it = ds.qrels.begin(); it != ds.qrels.end();) {
    if (!query_ids.count(it->first)) {
      ds.report.qrels_unknown_query += it->second.size();
      it = ds.qrels.erase(it);
      continue;
    }
    std::erase_if(it->second, [&](const auto& row) {
      bool unknown = !ds.corpus.find(row.first);
      ds.report.qrels_unknown_doc += unknown;
      return unknown;
    });
    ++it;
  }
  if (ds.report.qrels_unknown_query || ds.report.qrels_unknown_doc)
    log("mine: ", qrels_path, ": dropped ", ds.report.qrels_unknown_query, " rows with unknown queries and ",
        ds.report.qrels_unknown_doc, " rows with unknown documents");
  return ds;
}

nlohmann::json summary_json(const mine::ScoreSummary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"std", s.std}, {"min", s.min}, {"q50", s.q50}, {"max", s.max}};
}

std::string summary_row(const char* label, const mine::ScoreSummary& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-10s %8zu %9.4f %9.4f %9.4f %9.4f %9.4f", label, s.count, s.mean, s.std,
                s.min, s.q50, s.max);
  return buf;
}

void run_mine(MineArgs& a, CLI::App* cmd) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  auto& o = a.options;
  if (cmd->count("--absolute-margin")) o.absolute_margin = a.absolute_margin;
  if (cmd->count("--relative-margin")) o.relative_margin = a.relative_margin;
  if (cmd->count("--max-score")) o.max_score = a.max_score;
  mine::validate(o);
  auto ds = load_inputs(a);
  log("mine: ", ds.name, " (", ds.corpus.size(), " docs, ", ds.queries.size(), " queries), source ", o.source);
  auto result = mine::mine(ds, o);
  data::write_triples(a.out, result.triples);

  auto pos = mine::summarize_scores(result.positive_scores);
  auto neg = mine::summarize_scores(result.negative_scores);
  const auto& r = result.removed;
  log("mine: ", result.triples.size(), " triples from ", result.pairs, " (query, positive) pairs of ",
      result.queries, " queries -> ", a.out);
  log("scores: ", result.scorer);
  log("           ", "   count      mean       std       min       q50       max");
  log(summary_row("positive", pos));
  log(summary_row("negative", neg));
  log("removed: labelled_positive ", r.labelled_positive, ", range ", r.range, ", absolute_margin ",
      r.absolute_margin, ", relative_margin ", r.relative_margin, ", max_score ", r.max_score,
      ", false_negative_filter ", r.false_negative_filter, "; unsampled ", result.unsampled,
      "; pairs without negative ", result.pairs_without_negative);
  for (const auto& [reason, n] : result.generator_skips) log("  generator skip: ", reason, ": ", n);
  auto fpos = mine::summarize_scores(result.filter_positive_scores);
  auto fcand = mine::summarize_scores(result.filter_candidate_scores);
  if (!o.filter_verifier.empty()) {
    log("false-negative filter scores (", o.filter_verifier, ", drop >= ", o.filter_threshold, "):");
    log(summary_row("positive", fpos));
    log(summary_row("examined", fcand));
  }

  if (!a.common.json) return;
  nlohmann::json skips = nlohmann::json::object();
  for (const auto& [reason, n] : result.generator_skips) skips[reason] = n;
  nlohmann::json opts = {{"range_min", o.range_min},
                         {"range_max", o.range_max},
                         {"num_negatives", o.num_negatives},
                         {"sampling", o.sampling},
                         {"seed", o.seed},
                         {"absolute_margin", o.absolute_margin ? nlohmann::json(*o.absolute_margin) : nullptr},
                         {"relative_margin", o.relative_margin ? nlohmann::json(*o.relative_margin) : nullptr},
                         {"max_score", o.max_score ? nlohmann::json(*o.max_score) : nullptr},
                         {"filter_verifier", o.filter_verifier.empty() ? nullptr : nlohmann::json(o.filter_verifier)},
                         {"filter_threshold", o.filter_threshold}};
  print_json({{"triples", result.triples.size()},
              {"queries", result.queries},
              {"pairs", result.pairs},
              {"pairs_without_negative", result.pairs_without_negative},
              {"unsampled", result.unsampled},
              {"removed",
               {{"labelled_positive", r.labelled_positive},
                {"range", r.range},
                {"absolute_margin", r.absolute_margin},
                {"relative_margin", r.relative_margin},
                {"max_score", r.max_score},
                {"false_negative_filter", r.false_negative_filter}}},
              {"scores", {{"positive", summary_json(pos)}, {"negative", summary_json(neg)}}},
              {"scorer", result.scorer},
              {"source", result.source},
              {"generator_skips", skips},
              {"filter_scores", {{"positive", summary_json(fpos)}, {"examined", summary_json(fcand)}}},
              {"dataset", ds.name},
              {"split", ds.split},
              {"index_dir", result.index_dir},
              {"out", a.out},
              {"options", opts},
              {"argv", invocation()}});
}

void setup_mine(CLI::App& app) {
  auto args = std::make_shared<MineArgs>();
  auto& o = args->options;
  auto* cmd = app.add_subcommand("mine", "Mine hard negatives for (query, positive) pairs into triple JSONL");
  cmd->add_option("--dataset", args->dataset, "BEIR directory (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--split", args->split, "Qrels split")->capture_default_str();
  cmd->add_option("--corpus", args->corpus, "corpus.jsonl (overrides the dataset's)")->check(CLI::ExistingFile);
  cmd->add_option("--queries", args->queries, "queries.jsonl (overrides the dataset's)")->check(CLI::ExistingFile);
  cmd->add_option("--qrels", args->qrels, "qrels TSV (overrides the dataset's)")->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "Output triple JSONL (written atomically)")->required();
  cmd->add_option("--source", o.source, "bm25 | dense | hybrid | generated | file:PATH")->capture_default_str();
  cmd->add_option("--range-min", o.range_min, "Best rank kept (1-based, inclusive)")->capture_default_str();
  cmd->add_option("--range-max", o.range_max, "Worst rank kept (inclusive); also the retrieval depth")
      ->capture_default_str();
  cmd->add_option("--num-negatives", o.num_negatives, "Negatives per (query, positive)")->capture_default_str();
  cmd->add_option("--sampling", o.sampling, "top | random (seeded)")->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed for random sampling and generators")->capture_default_str();
  cmd->add_option("--absolute-margin", args->absolute_margin, "Keep iff score_neg <= score_pos - M");
  cmd->add_option("--relative-margin", args->relative_margin, "Keep iff score_neg <= score_pos * (1 - M)");
  cmd->add_option("--max-score", args->max_score, "Keep iff score_neg <= M");
  cmd->add_option("--fusion", o.fusion, "hybrid: weighted | rrf")->capture_default_str();
  cmd->add_option("--dense-weight", o.dense_weight, "hybrid weighted fusion: weight of the dense list")
      ->capture_default_str();
  cmd->add_option("--rrf-k", o.rrf_k, "hybrid rrf fusion constant")->capture_default_str();
  cmd->add_option("--encoder", o.encoder, "Encoder spec (dense/hybrid, false-negative filter)")
      ->capture_default_str();
  cmd->add_option("--analyzer", o.analyzer, "BM25 analyzer spec")->capture_default_str();
  cmd->add_option("--k1", o.k1, "BM25 k1")->capture_default_str();
  cmd->add_option("--b", o.b, "BM25 b")->capture_default_str();
  cmd->add_option("--cache-dir", o.cache_dir, "Index cache (default $VERITY_CACHE_DIR or ~/.cache/verity)");
  cmd->add_option("--batch-size", o.batch_size, "Encoder batch size")->capture_default_str();
  cmd->add_option("--generators", o.generators, "generated: perturber specs")->delimiter(',')->capture_default_str();
  cmd->add_option("--max-sentence-tries", o.max_sentence_tries, "generated: sentences tried per generator")
      ->capture_default_str();
  cmd->add_option("--filter-verifier", o.filter_verifier,
                  "False-negative filter: f0 | f1 | f2 | f3:PATH | f4:PATH | default | PATH");
  cmd->add_option("--filter-threshold", o.filter_threshold, "Drop candidates whose verifier score is >= T")
      ->capture_default_str();
  add_common_flags(cmd, args->common);
  cmd->callback([args, cmd] { run_mine(*args, cmd); });
}

VERITY_REGISTER_COMMAND("mine", setup_mine);

}  // namespace
}  // namespace verity::cli
