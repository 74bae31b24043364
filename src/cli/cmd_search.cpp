// verity search: query an index directory through the two-stage pipeline.
#include "cli/command.hpp"
#include "cli/pipeline_flags.hpp"
#include "index/index_dir.hpp"
#include "core/log.hpp"
#include "index/doc_store.hpp"

namespace verity::cli {
namespace {

struct SearchArgs {
  CommonFlags common;
  PipelineFlags pipeline;
  std::string index, query;
  size_t k = 10;
};

void run_search(SearchArgs& a, const CLI::App* cmd) {
  apply_common_flags(a.common);
  VERITY_CHECK(a.k > 0, ConfigError, "--k must be positive");
  search::check_query(a.query);
  a.pipeline.options = search::resolve_auto_parts(index::read_index_manifest(a.index), a.pipeline.options);
  check_pipeline_flags(cmd, a.pipeline, "--stage1", false);
  fit_candidates_to_k(cmd, a.pipeline, a.k);
  search::Pipeline pipeline(a.index, a.pipeline.resolved());
  search::StageTimings t;
  auto hits = pipeline.search(a.query, a.k, &t);
  const auto& docs = pipeline.docs();
  if (a.common.json) {
    nlohmann::json results = nlohmann::json::array();
    for (size_t r = 0; r < hits.size(); ++r) {
      const auto& h = hits[r];
      nlohmann::json j = {{"rank", r + 1},
                          {"id", h.id},
                          {"score", h.score},
                          {"stage1_score", h.stage1_score},
                          {"title", std::string(docs.title(h.doc))},
                          {"text", std::string(docs.text(h.doc))}};
      if (h.verifier_score) j["verifier_score"] = *h.verifier_score;
      if (!h.verdict.empty()) j["verdict"] = h.verdict;
      results.push_back(std::move(j));
    }
    print_json({{"query", a.query},
                {"pipeline", pipeline.describe()},
                {"results", results},
                {"latency_ms", t.total_ms},
                {"encode_ms", t.encode_ms},
                {"stage1_ms", t.stage1_ms},
                {"stage2_ms", t.stage2_ms}});
    return;
  }
  for (size_t r = 0; r < hits.size(); ++r) {
    const auto& h = hits[r];
    std::string title(docs.title(h.doc));
    if (title.empty()) title = std::string(docs.text(h.doc).substr(0, 80));
    std::printf("%3zu  %-12s %9.4f", r + 1, h.id.c_str(), h.score);
    if (h.verifier_score) std::printf("  stage1 %9.4f  verifier %7.4f", h.stage1_score, *h.verifier_score);
    if (!h.verdict.empty()) std::printf("  %-9s", h.verdict.c_str());
    std::printf("  %s\n", title.c_str());
  }
  if (hits.empty()) std::printf("no results\n");
  log(hits.size(), " results in ", t.total_ms, " ms (", pipeline.describe(), ")");
}

void setup_search(CLI::App& app) {
  auto args = std::make_shared<SearchArgs>();
  auto* cmd = app.add_subcommand("search", "Search an index directory (stage 1, then optional verification)");
  cmd->add_option("--index", args->index, "Index directory built by 'verity index'")->required();
  cmd->add_option("--query", args->query, "Query text")->required();
  cmd->add_option("--k", args->k, "Number of results")->capture_default_str();
  args->pipeline.options.stage1 = args->pipeline.options.verifier = "auto";  // the two-stage default
  add_pipeline_flags(cmd, args->pipeline, "--stage1");
  cmd->add_option("--encoder", args->pipeline.options.encoder,
                  "Override the encoder recorded in the index");
  add_common_flags(cmd, args->common);
  cmd->callback([args, cmd] { run_search(*args, cmd); });
}

VERITY_REGISTER_COMMAND("search", setup_search);
}  // namespace
}  // namespace verity::cli
