#pragma once
// Training triples for encoder training from real data (docs/TRAINING.md,
// "Encoder training"), and the mixer of standard and structural triples.
//   title-body  (title, body text) pairs of a corpus; negative = the body of
//               another document drawn uniformly (source "random")
//   crop        Contriever-style independent cropping: two spans drawn
//               independently from one chunk of plain text; negative = a
//               span of another chunk (source "random")
// BEIR train qrels give (query, relevant document, BM25 negative) through
// bm25_retrieval_triples (retrieval_triples.hpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "data/beir.hpp"
#include "data/triples.hpp"

namespace verity::train {

// One triple per document with a non-empty title and text (type "title_body").
// max_pairs > 0 keeps a seeded sample of that many.
std::vector<data::Triple> title_body_triples(const data::Corpus& corpus, uint64_t seed, size_t max_pairs = 0);

struct CropOptions {
  size_t chunk_words = 256;  // documents are cut into chunks of this many words
  size_t min_chunk_words = 32;  // shorter chunks (file ends) are dropped
  double min_ratio = 0.1, max_ratio = 0.5;  // span length as a share of the chunk, uniform
  uint64_t seed = 0;
  size_t max_pairs = 0;  // 0 = one pair per chunk
};
// Texts -> one triple per chunk (type "crop"), words split on whitespace.
std::vector<data::Triple> cropping_triples(std::span<const std::string> documents, const CropOptions& options);
// Every regular file under dir (recursive), sorted by path, as UTF-8 text.
std::vector<std::string> read_text_files(const std::string& dir);

// Triples per type ("untyped" when empty).
std::map<std::string, size_t> type_counts(std::span<const data::Triple> triples);

struct MixOptions {
  double ratio = 0;   // share of the budget taken from the structural triples, in [0, 1]
  size_t total = 0;   // budget; 0 = the number of standard triples
  uint64_t seed = 0;
};
struct MixResult {
  std::vector<data::Triple> triples;        // shuffled
  size_t standard = 0, structural = 0;
  std::map<std::string, size_t> by_type;    // type ("untyped" when empty) -> count
};
// Model A = ratio 0 (standard only); Model B = round(ratio * total) structural
// and the rest standard, both drawn without replacement (seeded). Asking for
// more than a file holds is a ConfigError naming the counts.
MixResult mix_triples(std::span<const data::Triple> standard, std::span<const data::Triple> structural,
                      const MixOptions& options);

}  // namespace verity::train
