// verity eval: retrieval quality and speed on one or more BEIR datasets.
#include <cstdio>
#include <filesystem>
#include <set>

#include "cli/command.hpp"
#include "cli/pipeline_flags.hpp"
#include "core/log.hpp"
#include "eval/detail/eval_json.hpp"
#include "eval/retrieval_eval.hpp"
#include "eval/trec_run.hpp"

namespace verity::cli {
namespace {

struct EvalArgs {
  CommonFlags common;
  std::vector<std::string> datasets;
  std::string split = "test";
  std::string fields = "title+text";
  std::string run_path;
  std::string metrics = "ndcg@10,acc@1,recall@100,mrr@10,map@100";
  bool ignore_identical_ids = false;
  PipelineFlags pipeline;
  eval::RetrievalEvalOptions options;
};

std::string run_file_for(const std::string& base, const std::string& dataset, bool many) {
  if (!many) return base;
  return base + "." + dataset;  // one run file per dataset of a suite
}

void print_table(const std::vector<std::string>& metric_names,
                 const std::vector<std::pair<std::string, nlohmann::json>>& rows) {
  std::printf("%-16s", "dataset");
  for (const auto& m : metric_names) std::printf(" %10s", m.c_str());
  std::printf(" %8s %10s\n", "queries", "qps");
  for (const auto& [name, j] : rows) {
    std::printf("%-16s", name.c_str());
    for (const auto& m : metric_names) std::printf(" %10.4f", j.value(m, 0.0));
    if (j.contains("queries"))
      std::printf(" %8zu %10.1f\n", j["queries"].get<size_t>(), j["qps"].get<double>());
    else
      std::printf("\n");
  }
}

void run_eval(EvalArgs& a, const CLI::App* cmd) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  check_pipeline_flags(cmd, a.pipeline, "--retriever", false);
  fit_candidates_to_k(cmd, a.pipeline, a.options.k);
  a.options.pipeline = a.pipeline.resolved();
  a.options.metrics.metrics = eval::parse_metrics(a.metrics);
  a.options.metrics.ignore_identical_ids = a.ignore_identical_ids;
  data::LoadOptions load;
  load.fields = data::parse_doc_fields(a.fields);

  std::vector<std::string> metric_names;
  for (const auto& m : a.options.metrics.metrics) metric_names.push_back(m.name());
  std::vector<eval::RetrievalEvalResult> results;
  std::set<std::string> names;
  const bool many = a.datasets.size() > 1;
  for (const auto& dir : a.datasets) {
    auto ds = data::load_beir(dir, a.split, load);
    log(ds.name, ": ", ds.report.summary());
    VERITY_CHECK(names.insert(ds.name).second, ConfigError, "dataset '", ds.name, "' given twice");
    auto r = eval::evaluate_retrieval(ds, a.options);
    if (!a.run_path.empty()) {
      auto path = run_file_for(a.run_path, ds.name, many);
      eval::write_trec_run(path, r.run, "verity-" + a.options.pipeline.stage1);
      log("wrote run file ", path);
    }
    r.run = {};  // written; the report needs only the scores
    results.push_back(std::move(r));
  }

  auto out = eval::detail::report_json(results, a.options, a.split);
  if (a.common.json) {
    print_json(out);
    return;
  }
  std::vector<std::pair<std::string, nlohmann::json>> rows;
  if (many) {
    for (const auto& r : results) rows.emplace_back(r.dataset, out["datasets"][r.dataset]);
    rows.emplace_back("mean", out["mean"]);
  } else {
    rows.emplace_back(results.front().dataset, out);
  }
  print_table(metric_names, rows);
}

void setup_eval(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Evaluate retrieval on BEIR datasets (nDCG@10, Acc@1, ...)");
  cmd->add_option("--dataset", args->datasets,
                  "BEIR dataset directory (corpus.jsonl, queries.jsonl, qrels/); repeat for a suite")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--split", args->split, "qrels split to evaluate")->capture_default_str();
  add_pipeline_flags(cmd, args->pipeline, "--retriever");
  cmd->add_option("--encoder", args->options.encoder,
                  "Encoder for dense retrieval and token vectors: use-lite | glove | kind:DIR | DIR")
      ->capture_default_str();
  cmd->add_option("--dense-index", args->options.dense_index, "flat | hnsw:M=32,efc=200,ef=100")
      ->capture_default_str();
  cmd->add_option("--token-precision", args->options.token_precision, "fp32 | fp16 | int8")
      ->capture_default_str();
  cmd->add_option("--batch-size", args->options.batch_size, "Texts per forward pass when encoding")
      ->capture_default_str();
  cmd->add_option("--cache-dir", args->options.cache_dir,
                  "Index cache directory (default $VERITY_CACHE_DIR or ~/.cache/verity)");
  cmd->add_flag("--no-cache", [args](int64_t) { args->options.use_cache = false; },
                "Build indexes in a temporary directory; neither read nor write the cache");
  cmd->add_option("--k", args->options.k, "Results retrieved per query")->capture_default_str();
  cmd->add_option("--threads", args->options.threads,
                  "Queries searched in parallel; per-query latency is reported when 1")
      ->capture_default_str();
  cmd->add_option("--k1", args->options.k1, "BM25 k1")->capture_default_str();
  cmd->add_option("--b", args->options.b, "BM25 b")->capture_default_str();
  cmd->add_option("--analyzer", args->options.analyzer,
                  "Lexical analyzer spec, e.g. english:stem=porter,stop=english")
      ->capture_default_str();
  cmd->add_option("--fields", args->fields, "Document fields to index: title+text | text")
      ->capture_default_str();
  cmd->add_option("--metrics", args->metrics, "Comma-separated metrics (ndcg@k, acc@k, recall@k, mrr@k, map@k)")
      ->capture_default_str();
  cmd->add_flag("--ignore-identical-ids", args->ignore_identical_ids,
                "Drop results whose document id equals the query id");
  cmd->add_option("--run", args->run_path,
                  "Write a TREC run file (with several datasets: FILE.<dataset>)");
  add_common_flags(cmd, args->common);
  cmd->callback([args, cmd] { run_eval(*args, cmd); });
}

VERITY_REGISTER_COMMAND("eval", setup_eval);
}  // namespace
}  // namespace verity::cli
