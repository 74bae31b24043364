#pragma once
// How the commands that read labelled pair files (train-verifier, calibrate)
// name a file's source and draw their seeded caps, so the same flags pick the
// same pairs in both.
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "data/labelled_pairs.hpp"

namespace verity::cli {

// Source name of a pair file: its "source" field, else its directory's name
// (data/pairs/qqp/train.jsonl -> qqp).
inline std::string pair_source_name(const data::LabelledPairFile& f) {
  if (!f.pairs.empty() && !f.pairs.front().source.empty()) return f.pairs.front().source;
  auto name = std::filesystem::path(f.path).parent_path().filename().string();
  return name.empty() ? std::filesystem::path(f.path).stem().string() : name;
}

// `count` of `items` in a seeded order (all of them, shuffled, when count is 0 or larger).
template <class T>
std::vector<T> seeded_sample(std::vector<T> items, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x2545f4914f6cdd1dULL + 7);
  std::shuffle(items.begin(), items.end(), rng);
  if (count && count < items.size()) items.resize(count);
  return items;
}

}  // namespace verity::cli
