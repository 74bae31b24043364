#include "search/index_builder.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "core/crc32c.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "encode/registry.hpp"
#include "index/bm25.hpp"
#include "index/dense_index.hpp"
#include "index/doc_store.hpp"
#include "index/index_dir.hpp"
#include "index/token_store.hpp"
#include "text/analyzer.hpp"
#include "verify/verifier.hpp"

namespace verity::search {
namespace fs = std::filesystem;
namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
constexpr size_t kEncodeChunk = 256;  // documents per encode call
}  // namespace

std::string encoder_fingerprint(const std::string& spec) {
  uint64_t h = fnv1a64(spec.data(), spec.size());
  auto colon = spec.find(':');
  std::string dir = colon == std::string::npos ? spec : spec.substr(colon + 1);
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    std::vector<std::string> entries;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
      if (!e.is_regular_file()) continue;
      entries.push_back(cat(e.path().filename().string(), "|", e.file_size(), "|",
                            e.last_write_time().time_since_epoch().count()));
    }
    std::sort(entries.begin(), entries.end());
    for (const auto& s : entries) h = fnv1a64(s.data(), s.size(), h);
  }
  return hex64(h);
}

IndexBuildReport build_index(const data::Corpus& corpus, const std::string& out_dir,
                             const IndexBuildOptions& opt) {
  auto t0 = Clock::now();
  int threads = opt.threads > 0 ? opt.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  IndexBuildReport report;
  report.docs = corpus.size();

  index::IndexDirBuilder builder(out_dir);
  index::IndexManifest manifest;
  manifest.corpus_path = path_for_report(corpus.path);
  manifest.corpus_hash = corpus.content_hash;
  manifest.docs = corpus.size();
  manifest.doc_fields = std::string(data::doc_fields_name(corpus.fields));
  manifest.created_by = opt.created_by;

  index::DocStoreWriter docs;
  for (const auto& d : corpus.docs) docs.add(d.id, d.title, d.text);
  docs.write(builder.part_path("docs.vds"));
  manifest.parts["docs"] = "docs.vds";

  std::vector<std::string> texts;
  texts.reserve(corpus.size());
  for (size_t i = 0; i < corpus.size(); ++i) texts.push_back(corpus.indexed_text(i));

  if (opt.bm25) {
    std::vector<std::string> ids;
    ids.reserve(corpus.size());
    for (const auto& d : corpus.docs) ids.push_back(d.id);
    auto analyzer = text::Analyzer::from_spec(opt.analyzer);
    auto bm25 = index::Bm25Index::build(ids, texts, analyzer, index::Bm25Params{opt.k1, opt.b}, threads);
    bm25.save(builder.part_path("bm25.vbm"));
    manifest.parts["bm25"] = "bm25.vbm";
    manifest.specs["bm25"] = cat("k1=", opt.k1, ",b=", opt.b, ",analyzer=", analyzer.spec());
  }

  if (opt.dense || opt.tokens) {
    auto encoder = encode::make_encoder(opt.encoder);
    manifest.specs["encoder"] = encode::portable_spec(*encoder);
    manifest.specs["encoder_identity"] = encode::encoder_identity(*encoder);
    manifest.specs["encoder_fingerprint"] = encoder_fingerprint(encoder->spec());
    encode::EncodeOptions eo;
    eo.batch_size = opt.batch_size;
    eo.with_tokens = opt.tokens;
    eo.threads = threads;
    std::unique_ptr<index::DenseIndex> dense;
    if (opt.dense) dense = index::make_dense_index(opt.dense_index, encoder->dim());
    std::unique_ptr<index::TokenStoreBuilder> tokens;
    if (opt.tokens)
      tokens = std::make_unique<index::TokenStoreBuilder>(
          encoder->dim(), index::parse_token_precision(opt.token_precision));
    auto te = Clock::now();
    Progress progress("encoding corpus", corpus.size());
    for (size_t start = 0; start < corpus.size(); start += kEncodeChunk) {
      check_interrupt();
      size_t n = std::min(kEncodeChunk, corpus.size() - start);
      auto enc = encoder->encode(std::span(texts).subspan(start, n), eo);
      if (dense) {
        std::vector<int64_t> ids(n);
        for (size_t i = 0; i < n; ++i) ids[i] = int64_t(start + i);
        dense->add(enc.pooled, ids);
      }
      if (tokens) {
        for (size_t b = 0; b < n; ++b)
          tokens->add_document(enc.token_block(b), verify::token_identities(enc.token_strings[b]), enc.pooled_row(b));
      }
      progress.add(n);
    }
    progress.finish();
    report.encode_seconds = seconds_since(te);
    if (dense) {
      dense->save(builder.part_path("dense.vdns"));
      manifest.parts["dense"] = "dense.vdns";
      manifest.specs["dense"] = dense->spec();
    }
    if (tokens) {
      report.token_vectors = tokens->num_tokens();
      tokens->save(builder.part_path("tokens.vtok"));
      manifest.parts["tokens"] = "tokens.vtok";
      manifest.specs["tokens"] = opt.token_precision;
    }
  }
  check_interrupt();
  builder.commit(manifest);
  report.seconds = seconds_since(t0);
  return report;
}

}  // namespace verity::search
