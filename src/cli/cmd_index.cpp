// verity index: build an index directory (documents + BM25) from a corpus.
#include <chrono>
#include <filesystem>
#include <thread>

#include "cli/command.hpp"
#include "core/log.hpp"
#include "data/beir.hpp"
#include "index/bm25.hpp"
#include "index/doc_store.hpp"
#include "index/index_dir.hpp"
#include "text/analyzer.hpp"

namespace verity::cli {
namespace {

struct IndexArgs {
  CommonFlags common;
  std::string corpus, out, fields = "title+text", analyzer = "english";
  bool bm25 = false;
  float k1 = 0.9f, b = 0.4f;
  int threads = 0;
  std::string command_line;
};

std::string corpus_file(const std::string& path) {
  return std::filesystem::is_directory(path) ? path + "/corpus.jsonl" : path;
}

void run_index(IndexArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  auto t0 = std::chrono::steady_clock::now();
  if (!a.bm25) a.bm25 = true;  // BM25 is the only stage-1 part so far, and the default
  int threads = a.threads > 0 ? a.threads : int(std::max(1u, std::thread::hardware_concurrency()));

  auto corpus = data::load_corpus(corpus_file(a.corpus), data::parse_doc_fields(a.fields));
  log("loaded ", corpus.size(), " documents from ", corpus.path);
  index::IndexDirBuilder builder(a.out);
  index::IndexManifest manifest;
  manifest.corpus_path = corpus.path;
  manifest.corpus_hash = corpus.content_hash;
  manifest.docs = corpus.size();
  manifest.doc_fields = a.fields;
  manifest.created_by = a.command_line;

  index::DocStoreWriter docs;
  for (const auto& d : corpus.docs) docs.add(d.id, d.title, d.text);
  docs.write(builder.part_path("docs.vds"));
  manifest.parts["docs"] = "docs.vds";

  if (a.bm25) {
    std::vector<std::string> ids, texts;
    for (size_t i = 0; i < corpus.size(); ++i) {
      ids.push_back(corpus.docs[i].id);
      texts.push_back(corpus.indexed_text(i));
    }
    auto analyzer = text::Analyzer::from_spec(a.analyzer);
    auto bm25 = index::Bm25Index::build(ids, texts, analyzer, index::Bm25Params{double(a.k1), double(a.b)}, threads);
    bm25.save(builder.part_path("bm25.vbm"));
    manifest.parts["bm25"] = "bm25.vbm";
    manifest.specs["bm25"] = cat("k1=", a.k1, ",b=", a.b, ",analyzer=", analyzer.spec());
  }
  check_interrupt();
  builder.commit(manifest);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log("index written to ", a.out, " in ", secs, " s");
  if (a.common.json) {
    nlohmann::json parts = manifest.parts;
    print_json({{"index", a.out}, {"docs", corpus.size()}, {"parts", parts}, {"seconds", secs}});
  }
}

void setup_index(CLI::App& app) {
  auto args = std::make_shared<IndexArgs>();
  auto* cmd = app.add_subcommand("index", "Build an index directory from a corpus");
  cmd->add_option("--corpus", args->corpus, "BEIR dataset directory or corpus.jsonl")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--out", args->out, "Index directory to create (replaced atomically)")->required();
  cmd->add_flag("--bm25", args->bm25, "Build the BM25 part (default when no part is named)");
  cmd->add_option("--fields", args->fields, "Document fields to index: title+text | text")
      ->capture_default_str();
  cmd->add_option("--analyzer", args->analyzer, "Lexical analyzer spec")->capture_default_str();
  cmd->add_option("--k1", args->k1, "BM25 k1")->capture_default_str();
  cmd->add_option("--b", args->b, "BM25 b")->capture_default_str();
  cmd->add_option("--threads", args->threads, "Build threads (0 = all cores)")->capture_default_str();
  add_common_flags(cmd, args->common);
  cmd->callback([args] {
    args->command_line = invocation();
    run_index(*args);
  });
}

VERITY_REGISTER_COMMAND("index", setup_index);
}  // namespace
}  // namespace verity::cli
