#pragma once
// Builds an index directory (see index/index_dir.hpp) from a corpus: the
// document store always; BM25, dense vectors and token vectors on request.
// Dense and token parts come from one encoding pass over the corpus.
#include <string>

#include "data/beir.hpp"

namespace verity::search {

struct IndexBuildOptions {
  bool bm25 = true;
  bool dense = false;
  bool tokens = false;
  std::string analyzer = "english";
  double k1 = 0.9, b = 0.4;
  std::string encoder = "use-lite";      // spec, see encode/registry.hpp
  std::string dense_index = "flat";      // "flat" | "hnsw:M=..,efc=..,ef=.."
  std::string token_precision = "fp16";  // "fp32" | "fp16" | "int8"
  size_t batch_size = 32;
  int threads = 0;                       // 0 = all cores
  std::string created_by;                // command line, for provenance
};

struct IndexBuildReport {
  double seconds = 0, encode_seconds = 0;
  size_t docs = 0, token_vectors = 0;
};

IndexBuildReport build_index(const data::Corpus& corpus, const std::string& out_dir,
                             const IndexBuildOptions& options);

// Manifest spec entries that identify the encoder and its exact weights, so a
// cached index built with other weights is detected as stale.
std::string encoder_fingerprint(const std::string& encoder_spec);

}  // namespace verity::search
