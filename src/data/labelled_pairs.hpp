#pragma once
// Labelled text pairs ("do these two texts mean the same thing?"), one JSON
// object per line:
//   {"a": str, "b": str, "label": 1|0, "id": any?, "source": str?}
// label 1 = same meaning (paraphrase / duplicate). a and b are required,
// non-empty strings; label is required, 0 or 1 (true/false accepted). Other
// fields (score, entailment, ...) are ignored.
//
// Splits are grouped: pairs that share a text (after whitespace and case
// folding) form one group, and a group goes to one split as a whole, so no
// sentence of a dev or test pair is ever seen in training.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace verity::data {

struct LabelledPair {
  std::string a, b;
  int label = 0;       // 1 = same meaning
  std::string id;      // the file's "id" as text ("" when absent)
  std::string source;  // "source" field, else set by the reader's caller
  size_t line = 0;     // 1-based line in its file; 0 if built in memory
};

struct LabelledPairFile {
  std::string path;
  std::vector<LabelledPair> pairs;
  uint64_t content_hash = 0;  // fnv1a64 of the file bytes
  size_t skipped = 0;         // invalid lines skipped (skip_invalid only)
  std::vector<std::string> skip_examples;  // up to 5 "path:line: reason"
};

// By default the first invalid line is a FormatError naming path:line and the
// field. skip_invalid: lines with a missing, empty or mistyped field are
// skipped and counted instead (malformed JSON and bad UTF-8 stay fatal).
LabelledPairFile read_labelled_pairs(const std::string& path, bool skip_invalid = false);
// One JSONL line (no newline): a, b, label, and id/source when set.
std::string labelled_pair_json_line(const LabelledPair& p);
void write_labelled_pairs(const std::string& path, std::span<const LabelledPair> pairs);

// Text key used for grouping: lower-cased, whitespace runs collapsed, trimmed.
std::string pair_group_key(const std::string& text);

struct PairSplit {
  std::array<std::vector<LabelledPair>, 3> parts;  // train, dev, test
  std::array<size_t, 3> groups{};                 // connected groups per part
};
// Assigns whole groups to train/dev/test so that each part's share of pairs
// is close to ratios (sum 1, each >= 0), in a seeded random group order.
// Deterministic in (pairs, ratios, seed).
PairSplit split_grouped(std::span<const LabelledPair> pairs, std::array<double, 3> ratios, uint64_t seed);

}  // namespace verity::data
