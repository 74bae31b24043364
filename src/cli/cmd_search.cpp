// verity search: query an index directory.
#include <chrono>

#include "cli/command.hpp"
#include "core/log.hpp"
#include "index/bm25.hpp"
#include "index/doc_store.hpp"
#include "index/index_dir.hpp"

namespace verity::cli {
namespace {

struct SearchArgs {
  CommonFlags common;
  std::string index, query;
  size_t k = 10;
};

void run_search(SearchArgs& a) {
  apply_common_flags(a.common);
  VERITY_CHECK(a.k > 0, ConfigError, "--k must be positive");
  auto manifest = index::read_index_manifest(a.index);
  index::DocStore docs(index::index_part_path(a.index, manifest, "docs"));
  auto bm25 = index::Bm25Index::load(index::index_part_path(a.index, manifest, "bm25"));
  VERITY_CHECK(bm25.num_docs() == docs.size(), FormatError, a.index, ": bm25 part has ",
               bm25.num_docs(), " documents but the document store has ", docs.size());
  auto t0 = std::chrono::steady_clock::now();
  auto hits = bm25.search(a.query, a.k);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  if (a.common.json) {
    nlohmann::json results = nlohmann::json::array();
    for (size_t r = 0; r < hits.size(); ++r) {
      results.push_back({{"rank", r + 1},
                         {"id", std::string(docs.id(hits[r].doc))},
                         {"score", hits[r].score},
                         {"title", std::string(docs.title(hits[r].doc))},
                         {"text", std::string(docs.text(hits[r].doc))}});
    }
    print_json({{"query", a.query}, {"stage1", "bm25"}, {"results", results}, {"latency_ms", ms}});
    return;
  }
  for (size_t r = 0; r < hits.size(); ++r) {
    std::string title(docs.title(hits[r].doc));
    if (title.empty()) title = std::string(docs.text(hits[r].doc).substr(0, 80));
    std::printf("%3zu  %-12s %8.4f  %s\n", r + 1, std::string(docs.id(hits[r].doc)).c_str(),
                hits[r].score, title.c_str());
  }
  if (hits.empty()) std::printf("no results\n");
  log(hits.size(), " results in ", ms, " ms");
}

void setup_search(CLI::App& app) {
  auto args = std::make_shared<SearchArgs>();
  auto* cmd = app.add_subcommand("search", "Search an index directory");
  cmd->add_option("--index", args->index, "Index directory built by 'verity index'")->required();
  cmd->add_option("--query", args->query, "Query text")->required();
  cmd->add_option("--k", args->k, "Number of results")->capture_default_str();
  add_common_flags(cmd, args->common);
  cmd->callback([args] { run_search(*args); });
}

VERITY_REGISTER_COMMAND("search", setup_search);
}  // namespace
}  // namespace verity::cli
