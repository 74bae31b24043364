#pragma once
// How the commands that read labelled pair files (train-verifier, calibrate)
// name a file's source and draw their seeded caps, so the same flags pick the
// same pairs in both.
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/crc32c.hpp"
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

// FNV-1a 64 of the pairs drawn, in order (a, b, label): two runs that report
// the same hash trained or calibrated on the same pairs.
inline uint64_t pairs_sample_hash(const std::vector<data::LabelledPair>& pairs) {
  uint64_t h = fnv1a64("", 0);
  for (const auto& p : pairs) {
    h = fnv1a64(p.a.data(), p.a.size(), h);
    h = fnv1a64("\x1f", 1, h);
    h = fnv1a64(p.b.data(), p.b.size(), h);
    const char label = p.label ? '1' : '0';
    h = fnv1a64(&label, 1, h);
    h = fnv1a64("\x1e", 1, h);
  }
  return h;
}

}  // namespace verity::cli
