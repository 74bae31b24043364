#pragma once
// Semantic-cache evaluation on labelled pairs (docs/CACHE.md, "Evaluation").
//
// Protocols:
//   pairs   each pair alone in its own namespace: put a, look up b.
//   stream  every a of the file in one namespace, then every b looked up
//           (the other a's are distractors, as in GPTCache's QQP benchmark).
// A hit is correct only when the pair is labelled same-meaning and the entry
// served is a's. Every scorer is judged on the same lookups of the same run:
// "cosine" is the pooled-cosine-threshold rule (top-1 nearest, no floor);
// any other name is a verifier spec run through the cache's decision rule
// (cosine floor, best verifier score among the candidates). An exact-text
// match is a hit for every scorer at every threshold.
//
// For each scorer, over the threshold sweep: precision = correct hits / hits,
// hit ratio = hits / lookups.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "data/pairs.hpp"

namespace verity::eval {

struct CacheEvalOptions {
  std::string protocol = "stream";                            // pairs | stream
  std::vector<std::string> scorers = {"cosine", "f1", "default"};
  cache::CacheOptions cache;     // the cache under test (its verifier decides lookup())
  std::string work_dir;          // the temporary database goes here
  float cosine_threshold = 0.8f;  // "default" point of the cosine rule (GPTCache's default)
  size_t put_batch = 256;        // puts per commit
  size_t timed_lookups = 0;      // lookup() timed on the first N b's only (0 = all); all are judged
  size_t threads = 1;            // workers judging the lookups that are not timed
  std::vector<double> precision_targets = {0.90, 0.95};
};

struct SweepPoint {
  double threshold = 0, precision = 0, hit_ratio = 0;
  size_t hits = 0, correct = 0;
};

// The figures at one threshold.
struct OperatingPoint {
  double threshold = 0;
  std::string source;  // "verifier" | "fallback" | "cosine-threshold"
  double precision = 0, hit_ratio = 0;
  double false_hit_rate = 0;     // wrong hits / lookups
  double near_miss_served = 0;   // hits on not-same pairs / not-same pairs
  double paraphrase_served = 0;  // correct hits on same pairs / same pairs
  std::map<std::string, double> near_miss_served_by_type;  // pairs with a type (from triples)
};

struct AtPrecision {
  double target = 0;
  std::optional<double> hit_ratio, threshold;  // none: the precision is never reached
};

struct ScorerReport {
  std::string name, spec;
  std::vector<SweepPoint> curve;  // one point per distinct score, highest threshold first
  std::vector<AtPrecision> at_precision;
  OperatingPoint at_default;
};

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, max = 0;
};

struct FileReport {
  std::string path, protocol;
  uint64_t content_hash = 0;
  size_t pairs = 0, same = 0, not_same = 0, exact_hits = 0, distinct_puts = 0;
  // Pairs left out because a text holds no letter, number or symbol, and
  // their lines in the file (pairs made from triples: the triple's line).
  size_t set_aside = 0;
  std::vector<size_t> set_aside_lines;
  std::vector<ScorerReport> scorers;
  // Speed of the cache itself: puts (encoding, commit, index insert) and
  // lookup() of the cache's verifier, one at a time.
  size_t puts = 0;
  double put_seconds = 0, puts_per_s = 0;
  double put_cpu_seconds = 0;  // process CPU time of the puts (all threads)
  Percentiles lookup_ms;
  Percentiles lookup_cpu_ms;   // CPU time of the calling thread per lookup
  size_t timed_lookups = 0;
  std::map<std::string, double> lookup_stage_mean_ms;
};

FileReport evaluate_cache(const std::string& path, const std::vector<data::Pair>& pairs,
                          const CacheEvalOptions& options);

// The curve summarized at each target precision (max hit ratio with precision >= target).
std::vector<AtPrecision> at_precision(const std::vector<SweepPoint>& curve, const std::vector<double>& targets);

// Precision–hit-ratio curves as an SVG, one panel per file, one line per scorer.
void write_cache_plot(const std::vector<FileReport>& files, const std::string& svg_path);

}  // namespace verity::eval
