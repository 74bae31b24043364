// verity index: build an index directory (documents + BM25 / dense / token vectors).

#include "cli/command.hpp"
#include "core/log.hpp"
#include "search/detail/index_report_json.hpp"
#include "search/index_builder.hpp"

namespace verity::cli {
namespace {

struct IndexArgs {
  CommonFlags common;
  std::string corpus, out, fields = "title+text";
  bool bm25 = false, dense = false, tokens = false;
  search::IndexBuildOptions options;
};

void run_index(IndexArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  if (!a.bm25 && !a.dense && !a.tokens) a.bm25 = true;  // BM25 alone by default
  a.options.bm25 = a.bm25;
  a.options.dense = a.dense;
  a.options.tokens = a.tokens;
  a.options.created_by = invocation();
  auto corpus = data::load_corpus(data::corpus_file(a.corpus), data::parse_doc_fields(a.fields));
  log("loaded ", corpus.size(), " documents from ", corpus.path);
  auto report = search::build_index(corpus, a.out, a.options);
  log("index written to ", a.out, " in ", report.seconds, " s");
  if (a.common.json) print_json(search::detail::index_report_json(a.out, a.options, report));
}

void setup_index(CLI::App& app) {
  auto args = std::make_shared<IndexArgs>();
  auto& o = args->options;
  auto* cmd = app.add_subcommand("index", "Build an index directory from a corpus");
  cmd->add_option("--corpus", args->corpus, "BEIR dataset directory or corpus.jsonl")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--out", args->out, "Index directory to create (replaced atomically)")->required();
  cmd->add_flag("--bm25", args->bm25, "Build the BM25 part (the default when no part is named)");
  cmd->add_flag("--dense", args->dense, "Build the dense-vector part (pooled embeddings)");
  cmd->add_flag("--tokens", args->tokens, "Build the token-vector part (for stage-2 verification)");
  cmd->add_option("--encoder", o.encoder, "Encoder: use-lite | glove | kind:DIR | DIR")
      ->capture_default_str();
  cmd->add_option("--dense-index", o.dense_index, "flat | hnsw:M=32,efc=200,ef=100")
      ->capture_default_str();
  cmd->add_option("--token-precision", o.token_precision, "fp32 | fp16 | int8")->capture_default_str();
  cmd->add_option("--batch-size", o.batch_size, "Texts per forward pass")->capture_default_str();
  cmd->add_option("--fields", args->fields, "Document fields to index: title+text | text")
      ->capture_default_str();
  cmd->add_option("--analyzer", o.analyzer, "Lexical analyzer spec")->capture_default_str();
  cmd->add_option("--k1", o.k1, "BM25 k1")->capture_default_str();
  cmd->add_option("--b", o.b, "BM25 b")->capture_default_str();
  cmd->add_option("--threads", o.threads, "Threads (0 = all cores)")->capture_default_str();
  add_common_flags(cmd, args->common);
  cmd->callback([args] { run_index(*args); });
}

VERITY_REGISTER_COMMAND("index", setup_index);
}  // namespace
}  // namespace verity::cli
