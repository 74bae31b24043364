#pragma once
// Training and evaluation triples, one JSON object per line (JSONL):
//   {"query": str, "positive": str, "negative": str,
//    "type": str?, "source": str?, "rank": int?, "score": number?}
// query/positive/negative are required, non-empty strings. "type" names a
// near-miss edit (negation, role_swap, ...), "source" the miner that produced
// the negative (bm25, dense, generated, ...); rank/score are the miner's.
// Unknown fields are ignored so other tools' extra keys survive a round trip
// through their own readers.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace verity::data {

struct Triple {
  std::string query, positive, negative;
  std::string type, source;  // empty when absent
  std::optional<int64_t> rank;
  std::optional<double> score;
  size_t line = 0;  // 1-based line in the file it was read from; 0 if built in memory
};

struct TripleReadOptions {
  // false: the first invalid line is a FormatError naming file:line.
  // true: invalid lines (malformed JSON excepted, which is always fatal) are
  // skipped and counted by reason, e.g. for diagnostics that must report them.
  bool skip_invalid = false;
};

struct TripleFile {
  std::string path;
  std::vector<Triple> triples;
  uint64_t content_hash = 0;                 // fnv1a64 of the file bytes
  size_t skipped = 0;                        // lines skipped (skip_invalid only)
  std::map<std::string, size_t> skipped_by_reason;  // e.g. "missing field \"negative\"" -> 3
  std::vector<std::string> skip_examples;    // up to 5 "path:line: reason" strings
};

TripleFile read_triples(const std::string& path, const TripleReadOptions& options = {});

// One JSONL line (no newline) with the fields that are set.
std::string triple_json_line(const Triple& t);
// Writes all triples atomically (temporary file, then rename).
void write_triples(const std::string& path, std::span<const Triple> triples);

}  // namespace verity::data
