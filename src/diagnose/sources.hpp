#pragma once
// Triple sources built from a BEIR dataset split (docs/DIAGNOSTICS.md):
//   unrelated       random corpus documents as negatives (no labelled relevant one)
//   false-negative  a known relevant passage of the same query when it has
//                   another one; otherwise a labelled positive of the other
//                   query with the largest idf-weighted term overlap with q
//   bm25            the highest-ranked BM25 document not labelled relevant
// One triple per (query, relevant document) pair of the split, in qrels order.
// All seeded; the same inputs and seed give the same triples.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/beir.hpp"
#include "data/triples.hpp"
#include "diagnose/lexical.hpp"

namespace verity::index {
class Bm25Index;
}

namespace verity::diagnose {

struct BuiltSource {
  std::vector<data::Triple> triples;
  size_t pairs = 0;    // (query, relevant document) pairs considered
  size_t dropped = 0;  // pairs with no usable negative
};

BuiltSource make_unrelated_source(const data::BeirDataset& ds, uint64_t seed);
BuiltSource make_false_negative_source(const data::BeirDataset& ds, LexicalScorer& lexical, uint64_t seed);
// depth: how many BM25 hits are searched for a non-relevant one.
BuiltSource make_bm25_source(const data::BeirDataset& ds, const index::Bm25Index& bm25, size_t depth = 100);

}  // namespace verity::diagnose
