#include "eval/cache_eval.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <unordered_map>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "core/split_work.hpp"
#include "text/utf8.hpp"
#include "verify/verifier.hpp"

namespace verity::eval {
namespace {
using Clock = std::chrono::steady_clock;
constexpr float kExactScore = std::numeric_limits<float>::infinity();
constexpr size_t kLookupChunk = 256;  // pairs protocol: pairs per put commit and clear
constexpr size_t kPutGroupsPerCall = 32;  // stream protocol: commit groups per put_batch call
constexpr size_t kSetAsideLinesLogged = 10;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU seconds of the process / the calling thread: on a shared machine they
// say what a put or a lookup costs whatever the load (wall time includes waiting).
double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// One lookup as a scorer saw it.
struct Outcome {
  float score = -std::numeric_limits<float>::infinity();  // -inf = no candidate
  bool correct = false;
};

Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {  // nearest rank
    size_t rank = size_t(std::ceil(q * double(v.size())));
    return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
  };
  p.p50 = at(0.50);
  p.p90 = at(0.90);
  p.p99 = at(0.99);
  p.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / double(v.size());
  return p;
}

// The sweep: thresholds at every distinct score, highest first.
std::vector<SweepPoint> sweep(const std::vector<Outcome>& outcomes) {
  std::vector<size_t> order;
  for (size_t i = 0; i < outcomes.size(); ++i)
    if (std::isfinite(outcomes[i].score) || outcomes[i].score == kExactScore) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return outcomes[a].score > outcomes[b].score; });
  std::vector<SweepPoint> curve;
  const double n = double(std::max<size_t>(outcomes.size(), 1));
  size_t hits = 0, correct = 0;
  for (size_t r = 0; r < order.size(); ++r) {
    const auto& o = outcomes[order[r]];
    ++hits;
    correct += o.correct;
    // A threshold at this score admits every lookup scoring at least as much.
    if (r + 1 < order.size() && outcomes[order[r + 1]].score == o.score) continue;
    double t = o.score == kExactScore ? std::numeric_limits<double>::infinity() : double(o.score);
    curve.push_back({t, double(correct) / double(hits), double(hits) / n, hits, correct});
  }
  return curve;
}

OperatingPoint operating_point(const std::vector<data::Pair>& pairs, const std::vector<Outcome>& outcomes,
                               double threshold, std::string source) {
  OperatingPoint p;
  p.threshold = threshold;
  p.source = std::move(source);
  size_t hits = 0, correct = 0, same = 0, not_same = 0, served_not_same = 0, served_same = 0;
  std::map<std::string, std::pair<size_t, size_t>> by_type;  // served, total
  for (size_t i = 0; i < pairs.size(); ++i) {
    const bool hit = outcomes[i].score >= threshold;
    hits += hit;
    correct += hit && outcomes[i].correct;
    if (pairs[i].same) {
      ++same;
      served_same += hit && outcomes[i].correct;
    } else {
      ++not_same;
      served_not_same += hit;
      if (!pairs[i].type.empty()) {
        auto& [s, t] = by_type[pairs[i].type];
        s += hit;
        ++t;
      }
    }
  }
  const double n = double(std::max<size_t>(pairs.size(), 1));
  p.precision = hits ? double(correct) / double(hits) : 0.0;
  p.hit_ratio = double(hits) / n;
  p.false_hit_rate = double(hits - correct) / n;
  p.near_miss_served = not_same ? double(served_not_same) / double(not_same) : 0.0;
  p.paraphrase_served = same ? double(served_same) / double(same) : 0.0;
  for (const auto& [type, st] : by_type) p.near_miss_served_by_type[type] = double(st.first) / double(st.second);
  return p;
}

struct Scorer {
  std::string name;
  std::unique_ptr<verify::Verifier> owned;
  const verify::Verifier* verifier = nullptr;  // nullptr = cosine
};

// Built before the cache, so a bad spec fails before the encoder loads.
std::vector<Scorer> make_scorers(const std::vector<std::string>& names) {
  std::vector<Scorer> out;
  for (const auto& name : names) {
    Scorer s;
    s.name = name;
    if (name != "cosine") {
      s.owned = verify::make_verifier(name);
      s.verifier = s.owned.get();
    }
    out.push_back(std::move(s));
  }
  return out;
}

// A fresh database file for one evaluation, removed afterwards.
class ScratchDb {
 public:
  explicit ScratchDb(const std::string& dir) {
    static std::atomic<int> counter{0};
    std::filesystem::path d = dir.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(dir);
    std::filesystem::create_directories(d);
    path_ = (d / cat("cache-eval.", ::getpid(), ".", counter++, ".sqlite")).string();
    remove_files();
  }
  ~ScratchDb() { remove_files(); }
  const std::string& path() const { return path_; }

 private:
  void remove_files() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path_ + suffix, ec);
  }
  std::string path_;
};
}  // namespace

std::vector<AtPrecision> at_precision(const std::vector<SweepPoint>& curve, const std::vector<double>& targets) {
  std::vector<AtPrecision> out;
  for (double target : targets) {
    AtPrecision a;
    a.target = target;
    for (const auto& p : curve)
      if (p.precision >= target && (!a.hit_ratio || p.hit_ratio > *a.hit_ratio)) {
        a.hit_ratio = p.hit_ratio;
        a.threshold = p.threshold;
      }
    out.push_back(a);
  }
  return out;
}

FileReport evaluate_cache(const std::string& path, const std::vector<data::Pair>& given,
                          const CacheEvalOptions& o) {
  VERITY_CHECK(o.protocol == "pairs" || o.protocol == "stream", ConfigError, "unknown protocol '", o.protocol,
               "' (valid: pairs, stream)");
  VERITY_CHECK(!o.scorers.empty(), ConfigError, "cache-eval: no scorers");
  VERITY_CHECK(!given.empty(), ConfigError, path, ": no pairs");
  // A prompt of punctuation alone ("?" in QQP) is no prompt a cache takes;
  // such a pair is set aside and counted rather than ending the run. The
  // pairs are copied only when some are set aside.
  const auto usable = [](const data::Pair& p) { return text::holds_content(p.a) && text::holds_content(p.b); };
  std::vector<data::Pair> kept;
  std::vector<size_t> set_aside_lines;
  if (!std::all_of(given.begin(), given.end(), usable))
    for (const auto& p : given)
      if (usable(p))
        kept.push_back(p);
      else
        set_aside_lines.push_back(p.line);
  const std::vector<data::Pair>& pairs = set_aside_lines.empty() ? given : kept;
  VERITY_CHECK(!pairs.empty(), ConfigError, path, ": no pair whose two texts hold a letter, number or symbol");
  if (!set_aside_lines.empty()) {
    std::string lines;
    for (size_t k = 0; k < std::min<size_t>(set_aside_lines.size(), kSetAsideLinesLogged); ++k)
      lines += cat(k ? ", " : "", set_aside_lines[k]);
    if (set_aside_lines.size() > kSetAsideLinesLogged) lines += ", ...";
    log("cache-eval: ", path, ": ", set_aside_lines.size(),
        " pairs set aside, a text holding no letter, number or symbol (lines ", lines, ")");
  }
  auto scorers = make_scorers(o.scorers);
  ScratchDb db(o.work_dir);
  cache::Cache cache(db.path(), o.cache);

  FileReport report;
  report.path = path;
  report.protocol = o.protocol;
  report.pairs = pairs.size();
  report.set_aside = set_aside_lines.size();
  report.set_aside_lines = std::move(set_aside_lines);
  for (const auto& p : pairs) (p.same ? report.same : report.not_same)++;

  std::vector<std::vector<Outcome>> outcomes(scorers.size(), std::vector<Outcome>(pairs.size()));
  std::vector<double> lookup_ms;
  lookup_ms.reserve(pairs.size());
  std::map<std::string, double> stage_sums;
  double put_seconds = 0, put_cpu_seconds = 0;
  std::vector<double> lookup_cpu_ms;
  size_t puts = 0;

  // The scorer that is the cache's own verifier takes its choice from the
  // timed lookup() (the same choice probe() makes; tested), so it is not scored twice.
  size_t own = scorers.size();
  for (size_t s = 0; s < scorers.size(); ++s)
    if (scorers[s].name == o.cache.verifier) own = s;
  std::atomic<size_t> exact_hits{0};

  auto record = [&](size_t i, size_t s, std::optional<int64_t> exact, int64_t id, float score, int64_t a_id) {
    auto& out = outcomes[s][i];
    if (exact) id = *exact, score = kExactScore;
    if (id < 0) return;
    out.score = score;
    out.correct = pairs[i].same && id == a_id;
  };
  auto probe_into = [&](size_t i, const std::string& ns, int64_t a_id, const std::vector<size_t>& which) {
    std::vector<const verify::Verifier*> ptrs;
    for (size_t s : which) ptrs.push_back(scorers[s].verifier);
    auto probe = cache.probe(pairs[i].b, ns, ptrs);
    for (size_t k = 0; k < which.size(); ++k)
      record(i, which[k], probe.exact_id, probe.choices[k].id, probe.choices[k].score, a_id);
    return probe.exact_id.has_value();
  };
  std::vector<size_t> all_scorers, other_scorers;
  for (size_t s = 0; s < scorers.size(); ++s) {
    all_scorers.push_back(s);
    if (s != own) other_scorers.push_back(s);
  }
  // Timed: lookup() alone on this thread, then the other scorers' choices.
  auto judge_timed = [&](size_t i, const std::string& ns, int64_t a_id) {
    cache::LookupOptions lo;
    lo.ns = ns;
    const double cpu0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    auto r = cache.lookup(pairs[i].b, lo);
    lookup_cpu_ms.push_back((cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0) * 1e3);
    lookup_ms.push_back(r.timings.total_ms);
    stage_sums["exact"] += r.timings.exact_ms;
    stage_sums["encode"] += r.timings.encode_ms;
    stage_sums["ann"] += r.timings.ann_ms;
    stage_sums["fetch"] += r.timings.fetch_ms;
    stage_sums["verify"] += r.timings.verify_ms;
    const bool exact = r.reason == "exact";
    if (exact) {
      ++exact_hits;
      for (size_t s : all_scorers) record(i, s, r.best->entry.id, -1, 0, a_id);
      return;
    }
    if (own < scorers.size() && r.best && r.best->probability)
      record(i, own, std::nullopt, r.best->entry.id, *r.best->probability, a_id);
    if (!other_scorers.empty()) probe_into(i, ns, a_id, other_scorers);
  };
  auto judge_untimed = [&](size_t i, const std::string& ns, int64_t a_id) {
    if (probe_into(i, ns, a_id, all_scorers)) ++exact_hits;
  };
  // Pairs [b, e): the first ones timed one at a time until timed_lookups are
  // done, the rest probed on `threads` workers.
  auto judge_range = [&](size_t b, size_t e, const std::function<std::string(size_t)>& ns_of,
                         const std::function<int64_t(size_t)>& a_id_of, Progress& progress) {
    size_t i = b;
    for (; i < e && (!o.timed_lookups || lookup_ms.size() < o.timed_lookups); ++i) {
      judge_timed(i, ns_of(i), a_id_of(i));
      progress.add();
      if (i % 64 == 0) check_interrupt();
    }
    for_each_on_threads(e - i, std::max<size_t>(1, o.threads), [&](size_t offset) {
      if (interrupt_requested()) return;
      const size_t k = i + offset;
      judge_untimed(k, ns_of(k), a_id_of(k));
      progress.add();
    });
    check_interrupt();
  };

  Progress progress(cat("cache-eval ", o.protocol), pairs.size());
  if (o.protocol == "stream") {
    const std::string ns = "stream";
    std::vector<cache::PutRequest> requests;
    requests.reserve(pairs.size());
    for (const auto& p : pairs) requests.push_back({p.a, p.id, {ns, "{}", std::nullopt}});
    auto t = Clock::now();
    const double cpu0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    std::vector<int64_t> ids;
    // Many commit groups per call, so put_batch overlaps encoding with commits.
    const size_t call = o.put_batch * kPutGroupsPerCall;
    for (size_t b = 0; b < requests.size(); b += call) {
      auto group = std::span<const cache::PutRequest>(requests).subspan(b, std::min(call, requests.size() - b));
      for (const auto& r : cache.put_batch(group, o.put_batch)) ids.push_back(r.id);
      check_interrupt();
    }
    put_seconds = seconds_since(t);
    put_cpu_seconds = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    puts = requests.size();
    report.distinct_puts = cache.stats().entries;
    log("cache-eval: ", puts, " puts (", report.distinct_puts, " distinct prompts) in ", put_seconds, " s");
    judge_range(0, pairs.size(), [&](size_t) { return ns; }, [&](size_t i) { return ids[i]; }, progress);
  } else {
    for (size_t b = 0; b < pairs.size(); b += kLookupChunk) {
      const size_t e = std::min(pairs.size(), b + kLookupChunk);
      std::vector<cache::PutRequest> requests;
      std::vector<std::string> namespaces;
      for (size_t i = b; i < e; ++i) {
        namespaces.push_back(cat("pair-", i));
        requests.push_back({pairs[i].a, pairs[i].id, {namespaces.back(), "{}", std::nullopt}});
      }
      auto t = Clock::now();
      const double cpu0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
      auto results = cache.put_batch(requests, o.put_batch);
      put_seconds += seconds_since(t);
      put_cpu_seconds += cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
      puts += requests.size();
      report.distinct_puts += requests.size();
      judge_range(b, e, [&](size_t i) { return namespaces[i - b]; }, [&](size_t i) { return results[i - b].id; },
                  progress);
      cache.clear(namespaces);
      check_interrupt();
    }
  }
  progress.finish();
  report.exact_hits = exact_hits;

  report.puts = puts;
  report.put_seconds = put_seconds;
  report.puts_per_s = put_seconds > 0 ? double(puts) / put_seconds : 0.0;
  report.put_cpu_seconds = put_cpu_seconds;
  report.lookup_ms = percentiles(lookup_ms);
  report.lookup_cpu_ms = percentiles(lookup_cpu_ms);
  for (const auto& [stage, sum] : stage_sums) report.lookup_stage_mean_ms[stage] = sum / double(lookup_ms.size());
  report.timed_lookups = lookup_ms.size();

  for (size_t s = 0; s < scorers.size(); ++s) {
    ScorerReport sr;
    sr.name = scorers[s].name;
    sr.spec = scorers[s].verifier ? spec_for_report(scorers[s].verifier->spec()) : "pooled cosine";
    sr.curve = sweep(outcomes[s]);
    sr.at_precision = at_precision(sr.curve, o.precision_targets);
    if (!scorers[s].verifier) {
      sr.at_default = operating_point(pairs, outcomes[s], o.cosine_threshold, "cosine-threshold");
    } else if (auto t = scorers[s].verifier->default_threshold()) {
      sr.at_default = operating_point(pairs, outcomes[s], *t, "verifier");
    } else {
      sr.at_default = operating_point(pairs, outcomes[s], o.cache.fallback_threshold, "fallback");
    }
    report.scorers.push_back(std::move(sr));
  }
  return report;
}

}  // namespace verity::eval
