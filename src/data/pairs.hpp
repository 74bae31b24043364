#pragma once
// Labelled sentence pairs, one JSON object per line (the format of
// shared/data/pairs, see its README):
//   {"id": str?, "a": str, "b": str, "label": 1|0, ...}
// label 1 = same meaning. a and b are required non-empty strings; other
// fields are ignored. A bad line is a FormatError naming file:line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/triples.hpp"

namespace verity::data {

struct Pair {
  std::string id, a, b;
  bool same = false;
  std::string type;  // near-miss type for pairs made from triples; "" otherwise
  size_t line = 0;
};

struct PairFile {
  std::string path;
  std::vector<Pair> pairs;
  uint64_t content_hash = 0;  // fnv1a64 of the file bytes
};

PairFile read_pairs(const std::string& path);

// Each triple as two pairs, (query, positive, same) and (query, negative,
// not same, type = the triple's type); a pair repeated in the list (same a
// and b, e.g. one positive shared by several triples) is kept once.
std::vector<Pair> pairs_from_triples(const std::vector<Triple>& triples);

}  // namespace verity::data
