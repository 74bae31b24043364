#pragma once
// Retrieval triples from a BEIR split: (query, a relevant document, a BM25
// hard negative). Mixed into verifier training so a verifier trained for
// near-miss identity also stays a sane reranker (docs/TRAINING.md).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/beir.hpp"
#include "data/triples.hpp"

namespace verity::train {

struct RetrievalTripleOptions {
  size_t top = 20;                  // negatives are drawn from the BM25 top-`top`
  uint64_t seed = 0;                // which non-relevant document is drawn
  std::string analyzer = "english";
  int threads = 1;
};

struct RetrievalTriples {
  std::vector<data::Triple> triples;  // type "retrieval", source "bm25", rank = BM25 rank (1-based)
  size_t queries = 0;                 // queries with at least one relevant document
  size_t no_negative = 0;             // queries whose top-`top` held only relevant documents
};

// One triple per (query, relevant document): positive = the document's indexed
// text, negative = a document drawn uniformly from the query's BM25 top-`top`
// that is not relevant (grade <= 0 or unjudged). Deterministic in seed.
RetrievalTriples bm25_retrieval_triples(const data::BeirDataset& dataset,
                                        const RetrievalTripleOptions& options);

// Whether query id `id` goes to the held-out (dev) part: fnv1a64(id) decides,
// so the split does not depend on order or seed.
bool held_out_query(const std::string& id, double fraction);

}  // namespace verity::train
