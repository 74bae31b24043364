// verity diagnose: hard-negative source diagnostics (docs/DIAGNOSTICS.md).
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "data/beir.hpp"
#include "diagnose/diagnose.hpp"
#include "diagnose/sources.hpp"
#include "encode/registry.hpp"
#include "eval/retrieval_eval.hpp"
#include "index/bm25.hpp"

namespace verity::cli {
namespace {
using nlohmann::json;
using namespace verity::diagnose;

struct DiagnoseArgs {
  CommonFlags common;
  std::vector<std::string> triples;
  std::string encoder = "use-lite", idf_corpus, analyzer = "english";
  std::string dataset, split = "train", make_sources, transfer, cache_dir;
  bool controls = false, no_cache = false;
  size_t bm25_depth = 100, bootstrap = 1000, matched_reps = 100;
  std::vector<size_t> matched_bins = {5, 10, 20};
  DiagnoseOptions options;
};

json finite_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json summary_json(const Summary& s) {
  return {{"mean", s.mean}, {"std", s.std}, {"q10", s.q10}, {"q50", s.q50}, {"q90", s.q90}};
}

json source_json(const SourceReport& r) {
  const auto& s = r.stats;
  return {{"lexical_residuality", summary_json(s.lexical_residuality)},
          {"noncoverage", summary_json(s.noncoverage)},
          {"cos_qp", summary_json(s.cos_qp)},
          {"cos_qn", summary_json(s.cos_qn)},
          {"cos_pn", summary_json(s.cos_pn)},
          {"margin", summary_json(s.margin)},
          {"ambiguity_rate", s.ambiguity_rate},
          {"mnrl_loss", s.mnrl_loss},
          {"rho", summary_json(s.rho)},
          {"eta", summary_json(s.eta)},
          {"w", summary_json(s.w)},
          {"eci_sem", s.eci_sem},
          {"eci_sem_linear", s.eci_sem_linear},
          {"eci_sem_gap", s.eci_sem_linear - s.eci_sem},
          {"eci_sem_relative_gap", s.eci_sem_linear > 0 ? (s.eci_sem_linear - s.eci_sem) / s.eci_sem_linear : 0.0},
          {"count", s.count},
          {"skipped", r.skipped},
          {"skipped_by_reason", r.skipped_by_reason},
          {"empty_query_terms", r.empty_query_terms},
          {"degenerate_directions", r.degenerate_directions}};
}

json interval_json(const Interval& iv) {
  return {{"value", finite_or_null(iv.value)}, {"ci_low", finite_or_null(iv.low)},
          {"ci_high", finite_or_null(iv.high)}, {"undefined_replicates", iv.undefined}};
}

// Documents of --idf-corpus: a BEIR directory (its corpus.jsonl) or a corpus.jsonl file.
data::Corpus load_idf_corpus(const std::string& path) {
  return data::load_corpus(data::corpus_file(path));
}

json write_sources(const DiagnoseArgs& a, const data::BeirDataset& ds, LexicalScorer& lexical) {
  make_directories(a.make_sources);
  std::vector<std::string> ids, texts;
  for (size_t i = 0; i < ds.corpus.size(); ++i) {
    ids.push_back(ds.corpus.docs[i].id);
    texts.push_back(ds.corpus.indexed_text(i));
  }
  log("building BM25 over ", ds.corpus.size(), " documents");
  auto bm25 = index::Bm25Index::build(ids, texts, text::Analyzer::from_spec(a.analyzer), {}, 2);
  json out = json::object();
  auto emit = [&](const std::string& name, const BuiltSource& s) {
    std::string path = a.make_sources + "/" + name + ".jsonl";
    data::write_triples(path, s.triples);
    out[name] = {{"path", path}, {"triples", s.triples.size()}, {"pairs", s.pairs}, {"dropped", s.dropped}};
    log(name, ": ", s.triples.size(), " triples (", s.dropped, " of ", s.pairs, " pairs had no negative) -> ", path);
  };
  emit("bm25", make_bm25_source(ds, bm25, a.bm25_depth));
  emit("unrelated", make_unrelated_source(ds, a.options.seed));
  emit("false-negative", make_false_negative_source(ds, lexical, a.options.seed));
  return {{"sources", out}, {"dataset", ds.dir}, {"split", ds.split}, {"seed", a.options.seed}};
}

void print_table(const std::vector<SourceReport>& reports, double s0) {
  std::ostringstream os;
  os << "s0 (mean cos(q, random doc)) = " << s0 << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %6s %6s %6s %7s %7s %7s %6s %7s %6s %6s %7s %8s %8s\n", "source",
                "count", "psi", "noncov", "cos_qn", "cos_pn", "margin", "ambig", "mnrl", "rho", "eta", "w",
                "S(D)", "lin");
  os << line;
  for (const auto& r : reports) {
    const auto& s = r.stats;
    std::snprintf(line, sizeof line,
                  "%-20s %6zu %6.3f %6.3f %7.3f %7.3f %7.3f %6.3f %7.3f %6.3f %6.3f %7.4f %8.5f %8.5f\n",
                  r.name.c_str(), s.count, s.lexical_residuality.mean, s.noncoverage.mean, s.cos_qn.mean,
                  s.cos_pn.mean, s.margin.mean, s.ambiguity_rate, s.mnrl_loss, s.rho.mean, s.eta.mean,
                  s.w.mean, s.eci_sem, s.eci_sem_linear);
    os << line;
  }
  std::fputs(os.str().c_str(), stdout);
}

void run_diagnose(DiagnoseArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  VERITY_CHECK(!a.controls || !a.dataset.empty(), ConfigError, "--controls needs --dataset");
  VERITY_CHECK(a.make_sources.empty() || !a.dataset.empty(), ConfigError, "--make-sources needs --dataset");
  std::optional<data::BeirDataset> ds;
  if (!a.dataset.empty()) ds = data::load_beir(a.dataset, a.split);
  std::string idf_path = !a.idf_corpus.empty() ? a.idf_corpus : a.dataset;
  VERITY_CHECK(!idf_path.empty(), ConfigError, "--idf-corpus is required (or --dataset, whose corpus is used)");
  auto analyzer = text::Analyzer::from_spec(a.analyzer);
  auto idf_corpus = (ds && idf_path == a.dataset) ? ds->corpus : load_idf_corpus(idf_path);
  std::vector<std::string> corpus_texts;
  for (size_t i = 0; i < idf_corpus.size(); ++i) corpus_texts.push_back(idf_corpus.indexed_text(i));
  // One analysis of the corpus serves the IDF table and every negative that is
  // a corpus document (the lexical step then analyzes only the other texts).
  auto idf_t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<std::string>> doc_terms;
  auto idf = IdfTable::build(corpus_texts, analyzer, a.options.threads, &doc_terms);
  LexicalScorer lexical(idf, analyzer);
  lexical.add_known_texts(corpus_texts, std::move(doc_terms));
  const double idf_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - idf_t0).count();

  if (!a.make_sources.empty()) {
    auto out = write_sources(a, *ds, lexical);
    if (a.common.json) print_json(out);
    return;
  }

  std::vector<data::TripleFile> files;
  for (const auto& path : a.triples) files.push_back(data::read_triples(path, {.skip_invalid = true}));
  auto sources = group_sources(files);
  if (a.controls) {
    auto add = [&](const std::string& name, BuiltSource built) {
      for (const auto& s : sources)
        VERITY_CHECK(s.name != name, ConfigError, "source \"", name, "\" from --triples clashes with the control");
      log("control ", name, ": ", built.triples.size(), " triples (", built.dropped, " of ", built.pairs,
          " pairs dropped)");
      sources.push_back(SourceInput{name, std::move(built.triples), 0, {}});
    };
    add("unrelated", make_unrelated_source(*ds, a.options.seed));
    add("false-negative", make_false_negative_source(*ds, lexical, a.options.seed));
  }
  VERITY_CHECK(!sources.empty(), ConfigError, "no triples: give --triples FILE (and/or --controls --dataset DIR)");

  auto encoder = encode::make_encoder(a.encoder);
  std::string cache_dir = a.no_cache ? "" : (a.cache_dir.empty() ? eval::default_cache_dir() : a.cache_dir);
  EmbeddingCache cache(*encoder, cache_dir);
  Diagnoser diagnoser(a.options);
  diagnoser.run(std::move(sources), lexical, cache, corpus_texts);

  std::optional<AgreementReport> agreement;
  std::optional<MatchedReport> matched;
  if (!a.transfer.empty()) {
    auto transfer = read_transfer_csv(a.transfer);
    log("bootstrap: ", a.bootstrap, " resamples");
    agreement = diagnoser.agreement(transfer, a.bootstrap);
    if (a.matched_reps > 0) {
      log("matched samples: ", a.matched_reps, " repetitions per resolution");
      matched = diagnoser.matched(transfer, a.matched_bins, a.matched_reps);
    }
  }

  size_t total = 0;
  for (const auto& r : diagnoser.reports()) total += r.stats.count;
  const auto& t = diagnoser.timings();
  double non_encode = t.lexical_s + t.semantic_s;
  if (!a.common.json) {
    print_table(diagnoser.reports(), diagnoser.s0());
    if (agreement) {
      std::printf("\nagreement with %s over %zu sources (bootstrap %zu, 95%% CI)\n", a.transfer.c_str(),
                  agreement->sources.size(), agreement->bootstrap);
      for (const auto& row : agreement->rows)
        std::printf("%-20s tau_b %6.3f [%6.3f, %6.3f]  spearman %6.3f [%6.3f, %6.3f]\n", row.diagnostic.c_str(),
                    row.kendall.value, row.kendall.low, row.kendall.high, row.spearman.value, row.spearman.low,
                    row.spearman.high);
    }
    if (matched)
      for (const auto& res : matched->resolutions) {
        std::printf("\nmatched on psi, %zu bins (%zu triples per source):\n", res.bins,
                    size_t(res.mean_matched_count.empty() ? 0 : res.mean_matched_count[0]));
        for (const auto& row : res.rows)
          std::printf("%-20s mean tau_b %6.3f  recovered %5.2f  reversed %5.2f\n", row.diagnostic.c_str(),
                      row.mean_kendall, row.concordant_rate, row.reversed_rate);
      }
    return;
  }
  json out;
  out["sources"] = json::object();
  for (const auto& r : diagnoser.reports()) out["sources"][r.name] = source_json(r);
  out["s0"] = diagnoser.s0();
  json jfiles = json::array();
  for (const auto& f : files)
    jfiles.push_back({{"path", f.path}, {"triples", f.triples.size()}, {"skipped", f.skipped},
                      {"skipped_by_reason", f.skipped_by_reason}, {"skip_examples", f.skip_examples},
                      {"content_hash", cat(std::hex, f.content_hash)}});
  out["files"] = jfiles;
  out["options"] = {{"encoder", spec_for_report(encoder->spec())},
                    {"encoder_fingerprint", cat(std::hex, cache.fingerprint())},
                    {"idf_corpus", idf_path},
                    {"idf_docs", idf.num_docs()},
                    {"analyzer", analyzer.spec()},
                    {"tau", a.options.tau},
                    {"gamma", a.options.gamma},
                    {"mnrl_batch", a.options.mnrl_batch},
                    {"mnrl_scale", a.options.mnrl_scale},
                    {"s0_docs", a.options.s0_docs},
                    {"seed", a.options.seed}};
  if (agreement) {
    json rows = json::object();
    for (const auto& row : agreement->rows)
      rows[row.diagnostic] = {{"kendall_tau_b", interval_json(row.kendall)},
                              {"spearman_rho", interval_json(row.spearman)}};
    out["agreement"] = {{"transfer", a.transfer}, {"sources", agreement->sources},
                        {"unmatched", agreement->unmatched}, {"bootstrap", agreement->bootstrap},
                        {"diagnostics", rows}};
  }
  if (matched) {
    json res = json::array();
    for (const auto& r : matched->resolutions) {
      json rows = json::object();
      for (const auto& row : r.rows)
        rows[row.diagnostic] = {{"mean_kendall_tau_b", finite_or_null(row.mean_kendall)},
                                {"recovered_rate", row.concordant_rate},
                                {"reversed_rate", row.reversed_rate},
                                {"undefined_repetitions", row.undefined}};
      res.push_back({{"bins", r.bins}, {"matched_per_source", r.mean_matched_count.empty() ? 0.0 : r.mean_matched_count[0]},
                     {"empty_repetitions", r.empty_repetitions}, {"diagnostics", rows}});
    }
    out["matched"] = {{"sources", matched->sources}, {"repetitions", matched->repetitions}, {"resolutions", res}};
  }
  out["timings"] = {{"idf_pass_s", idf_s},
                    {"lexical_s", t.lexical_s},
                    {"encode_s", t.encode_s},
                    {"semantic_s", t.semantic_s},
                    {"bootstrap_s", t.bootstrap_s},
                    {"matched_s", t.matched_s},
                    {"triples", total},
                    {"triples_per_s_excluding_encoding", non_encode > 0 ? double(total) / non_encode : 0.0},
                    {"cache_hits", cache.hits()},
                    {"encoded_texts", cache.encoded()}};
  out["invocation"] = invocation();
  print_json(out);
}

void setup_diagnose(CLI::App& app) {
  auto a = std::make_shared<DiagnoseArgs>();
  auto* cmd = app.add_subcommand("diagnose", "Hard-negative source diagnostics (docs/DIAGNOSTICS.md)");
  cmd->add_option("--triples", a->triples, "Triple JSONL file (repeatable); sources by \"source\" field or file name")
      ->check(CLI::ExistingFile);
  cmd->add_option("--encoder", a->encoder, "Frozen encoder: use-lite | glove | kind:DIR | DIR")
      ->capture_default_str()->envname("VERITY_ENCODER");
  cmd->add_option("--idf-corpus", a->idf_corpus, "BEIR directory or corpus.jsonl for IDF and s0 (default: --dataset)");
  cmd->add_option("--analyzer", a->analyzer, "Analyzer spec (the BM25 analyzer)")->capture_default_str();
  cmd->add_option("--tau", a->options.tau, "Gate temperature")->capture_default_str();
  cmd->add_option("--gamma", a->options.gamma, "Log-det scale gamma")->capture_default_str();
  cmd->add_option("--mnrl-batch", a->options.mnrl_batch, "In-batch MNRL batch size")->capture_default_str();
  cmd->add_option("--s0-docs", a->options.s0_docs, "Random corpus documents for s0")->capture_default_str();
  cmd->add_option("--seed", a->options.seed, "Seed (s0 sample, batches, controls, bootstrap, matching)")
      ->capture_default_str();
  cmd->add_option("--threads", a->options.threads, "Bootstrap/matching threads")->capture_default_str();
  cmd->add_option("--dataset", a->dataset, "BEIR dataset directory for --controls / --make-sources");
  cmd->add_option("--split", a->split, "Qrels split of --dataset")->capture_default_str();
  cmd->add_flag("--controls", a->controls, "Add the constructed sources \"unrelated\" and \"false-negative\"");
  cmd->add_option("--make-sources", a->make_sources,
                  "Write bm25/unrelated/false-negative JSONL triples from --dataset into DIR and exit");
  cmd->add_option("--bm25-depth", a->bm25_depth, "BM25 hits searched for a non-relevant negative")
      ->capture_default_str();
  cmd->add_option("--transfer", a->transfer, "CSV \"source,metric\" of observed transfer per source")
      ->check(CLI::ExistingFile);
  cmd->add_option("--bootstrap", a->bootstrap, "Bootstrap resamples for the agreement CIs")->capture_default_str();
  cmd->add_option("--matched-bins", a->matched_bins, "Matched-sample histogram resolutions")
      ->capture_default_str()->delimiter(',');
  cmd->add_option("--matched-reps", a->matched_reps, "Matched-sample repetitions per resolution (0 = skip)")
      ->capture_default_str();
  cmd->add_option("--cache-dir", a->cache_dir, "Embedding cache directory (default $VERITY_CACHE_DIR or ~/.cache/verity)");
  cmd->add_flag("--no-cache", a->no_cache, "Do not read or write the on-disk embedding cache");
  add_common_flags(cmd, a->common);
  cmd->callback([a] { run_diagnose(*a); });
}

VERITY_REGISTER_COMMAND("diagnose", setup_diagnose);
}  // namespace
}  // namespace verity::cli
