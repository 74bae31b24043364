// verity cache-eval: the semantic cache on labelled pairs — precision and hit
// ratio of every scorer over a threshold sweep, in one run (docs/CACHE.md).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cache_flags.hpp"
#include "cli/command.hpp"
#include "core/cpu_features.hpp"
#include "core/crc32c.hpp"
#include "core/log.hpp"
#include "data/pairs.hpp"
#include "data/triples.hpp"
#include "eval/cache_eval.hpp"
#include "verify/bf16_maps.hpp"

namespace verity::cli {
namespace {
using json = nlohmann::json;

struct CacheEvalArgs {
  CommonFlags common;
  eval::CacheEvalOptions options;
  std::vector<std::string> pairs, triples;
  size_t limit = 0;
  std::string plot;
};

json number_or_null(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? json(*v) : json(nullptr);
}

json operating_json(const eval::OperatingPoint& p) {
  return {{"threshold", p.threshold},
          {"threshold_source", p.source},
          {"precision", p.precision},
          {"hit_ratio", p.hit_ratio},
          {"false_hit_rate", p.false_hit_rate},
          {"near_miss_served", p.near_miss_served},
          {"paraphrase_served", p.paraphrase_served},
          {"near_miss_served_by_type", p.near_miss_served_by_type}};
}

// About 100 points of the curve, evenly spaced in hit ratio, for the JSON.
json curve_json(const std::vector<eval::SweepPoint>& curve) {
  json out = json::array();
  double next = 0;
  for (size_t i = 0; i < curve.size(); ++i) {
    const auto& p = curve[i];
    if (p.hit_ratio < next && i + 1 < curve.size()) continue;
    next = p.hit_ratio + 0.01;
    out.push_back({number_or_null(p.threshold), p.precision, p.hit_ratio});
  }
  return out;
}

json file_json(const eval::FileReport& f) {
  json scorers = json::array();
  std::optional<double> cosine_at_first;
  for (const auto& s : f.scorers)
    if (s.name == "cosine" && !s.at_precision.empty()) cosine_at_first = s.at_precision[0].hit_ratio.value_or(0.0);
  for (const auto& s : f.scorers) {
    json at = json::object();
    for (const auto& a : s.at_precision)
      at[cat(a.target)] = {{"hit_ratio", a.hit_ratio ? json(*a.hit_ratio) : json(0.0)},
                           {"threshold", number_or_null(a.threshold)},
                           {"reached", a.hit_ratio.has_value()}};
    json j = {{"name", s.name},
              {"spec", s.spec},
              {"at_precision", at},
              {"at_default_threshold", operating_json(s.at_default)},
              {"curve", curve_json(s.curve)}};
    if (cosine_at_first && s.name != "cosine" && !s.at_precision.empty()) {
      double mine = s.at_precision[0].hit_ratio.value_or(0.0);
      j["hits_vs_cosine"] = *cosine_at_first > 0 ? json(mine / *cosine_at_first) : json(nullptr);
    }
    scorers.push_back(std::move(j));
  }
  return {{"path", f.path},
          {"fnv1a64", hex64(f.content_hash)},
          {"protocol", f.protocol},
          {"pairs", f.pairs},
          {"set_aside", f.set_aside},
          {"set_aside_lines", f.set_aside_lines},
          {"same", f.same},
          {"not_same", f.not_same},
          {"distinct_puts", f.distinct_puts},
          {"exact_hits", f.exact_hits},
          {"scorers", scorers},
          {"speed",
           {{"puts", f.puts},
            {"put_seconds", f.put_seconds},
            {"puts_per_s", f.puts_per_s},
            {"put_cpu_seconds", f.put_cpu_seconds},
            {"puts_per_cpu_s", f.put_cpu_seconds > 0 ? double(f.puts) / f.put_cpu_seconds : 0.0},
            {"lookup_cpu_ms",
             {{"p50", f.lookup_cpu_ms.p50}, {"p90", f.lookup_cpu_ms.p90}, {"p99", f.lookup_cpu_ms.p99},
              {"mean", f.lookup_cpu_ms.mean}, {"max", f.lookup_cpu_ms.max}}},
            {"timed_lookups", f.timed_lookups},
            {"lookup_ms",
             {{"p50", f.lookup_ms.p50}, {"p90", f.lookup_ms.p90}, {"p99", f.lookup_ms.p99},
              {"mean", f.lookup_ms.mean}, {"max", f.lookup_ms.max}}},
            {"lookup_stage_mean_ms", f.lookup_stage_mean_ms}}}};
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::vector<double> loadavg() {
  std::ifstream in("/proc/loadavg");
  std::vector<double> v(3, -1.0);
  in >> v[0] >> v[1] >> v[2];
  return v;
}

void run_cache_eval(CacheEvalArgs& a, const CLI::App* cmd) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  // The verifier that decides lookup() is reported too, not only timed.
  auto& scorers = a.options.scorers;
  if (cmd->count("--verifier") > 0 && std::find(scorers.begin(), scorers.end(), a.options.cache.verifier) == scorers.end()) {
    log("cache-eval: --verifier ", a.options.cache.verifier, " is scored too (added to --scorer)");
    scorers.push_back(a.options.cache.verifier);
  }
  const auto load_at_start = loadavg();
  VERITY_CHECK(!a.pairs.empty() || !a.triples.empty(), ConfigError, "cache-eval: give --pairs or --triples");
  struct Input {
    std::string path;
    uint64_t hash;
    std::vector<data::Pair> pairs;
  };
  std::vector<Input> inputs;
  for (const auto& p : a.pairs) {
    auto f = data::read_pairs(p);
    inputs.push_back({p, f.content_hash, std::move(f.pairs)});
  }
  for (const auto& p : a.triples) {
    auto f = data::read_triples(p);
    inputs.push_back({p, f.content_hash, data::pairs_from_triples(f.triples)});
  }
  std::vector<eval::FileReport> reports;
  json files = json::array();
  for (auto& in : inputs) {
    if (a.limit && in.pairs.size() > a.limit) in.pairs.resize(a.limit);
    log("cache-eval: ", in.path, ": ", in.pairs.size(), " pairs, protocol ", a.options.protocol);
    auto r = eval::evaluate_cache(in.path, in.pairs, a.options);
    r.content_hash = in.hash;
    log("cache-eval: ", in.path, ": puts/s ", r.puts_per_s, ", lookup p50 ", r.lookup_ms.p50, " ms, p99 ",
        r.lookup_ms.p99, " ms");
    for (const auto& s : r.scorers) {
      std::string at;
      for (const auto& p : s.at_precision)
        at += cat(" hit ratio@P", p.target, " = ", p.hit_ratio ? cat(*p.hit_ratio) : std::string("unreached"), ";");
      log("  ", s.name, ":", at, " at threshold ", s.at_default.threshold, " (", s.at_default.source,
          "): precision ", s.at_default.precision, ", hit ratio ", s.at_default.hit_ratio, ", near-misses served ",
          s.at_default.near_miss_served, ", paraphrases served ", s.at_default.paraphrase_served);
    }
    files.push_back(file_json(r));
    reports.push_back(std::move(r));
  }
  if (!a.plot.empty()) {
    eval::write_cache_plot(reports, a.plot);
    log("cache-eval: wrote ", a.plot);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double peak_rss_mb = double(usage.ru_maxrss) / 1024.0;
  log("cache-eval: peak RSS ", peak_rss_mb, " MB");
  const auto& c = a.options.cache;
  json out = {{"files", files},
              {"protocol", a.options.protocol},
              {"scorers", a.options.scorers},
              {"cache",
               {{"encoder", c.encoder.empty() ? "use-lite" : c.encoder},
                {"verifier", c.verifier},
                {"candidates", c.candidates},
                {"cosine_floor", c.cosine_floor},
                {"fallback_threshold", c.fallback_threshold},
                {"durability", c.durability},
                {"encoder_threads", c.encoder_threads},
                {"put_threads", c.put_threads},
                {"ann", {{"exact_limit", c.ann.exact_limit}, {"M", c.ann.M}, {"ef_construction", c.ann.ef_construction},
                         {"ef_search", c.ann.ef_search}}}}},
              {"cosine_threshold", a.options.cosine_threshold},
              {"limit", a.limit},
              {"peak_rss_mb", peak_rss_mb},
              {"hardware", {{"cpu", cpu_model()}, {"cores", sysconf(_SC_NPROCESSORS_ONLN)}, {"kernel_isa", std::string(isa_name(best_isa()))},
                            {"bf16_maps", verify::use_bf16_maps()},
                            {"bf16_products", verify::use_bf16_maps() ? json(std::string(verify::bf16_products_name(verify::best_bf16_products()))) : json(nullptr)}, {"loadavg_start", load_at_start}, {"loadavg_end", loadavg()}}},
              {"argv", invocation()}};
  if (a.common.json) print_json(out);
}

void setup_cache_eval(CLI::App& app) {
  auto args = std::make_shared<CacheEvalArgs>();
  auto& o = args->options;
  auto* cmd = app.add_subcommand("cache-eval",
                                 "Semantic-cache precision vs hit ratio on labelled pairs, every scorer in one run");
  cmd->add_option("--pairs", args->pairs, "Pair JSONL {a, b, label} (repeatable; each file evaluated alone)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--triples", args->triples,
                  "Near-miss triple JSONL, turned into pairs (query, positive, same) and (query, negative, not)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--scorer", o.scorers, "cosine | f1 | default | any verifier spec (repeatable)")
      ->capture_default_str();
  cmd->add_option("--protocol", o.protocol, "pairs: each pair alone; stream: every a cached, then every b looked up")
      ->check(CLI::IsMember({"pairs", "stream"}))
      ->capture_default_str();
  cmd->add_option("--limit", args->limit, "First N pairs of each file (0 = all)")->capture_default_str();
  cmd->add_option("--work-dir", o.work_dir, "Directory for the temporary cache database (default: the temp dir)");
  cmd->add_option("--cosine-threshold", o.cosine_threshold,
                  "Threshold at which the cosine rule's 'default' figures are reported")
      ->capture_default_str();
  cmd->add_option("--put-batch", o.put_batch, "Puts per commit")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--timed-lookups", o.timed_lookups,
                  "Time lookup() on the first N lookups only (0 = all); every lookup is still judged")
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "Workers judging the lookups that are not timed")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--plot", args->plot, "Write the precision–hit-ratio curves as an SVG");
  add_cache_flags(cmd, o.cache, "");
  add_common_flags(cmd, args->common);
  cmd->callback([args, cmd] { run_cache_eval(*args, cmd); });
}

VERITY_REGISTER_COMMAND("cache-eval", setup_cache_eval);
}  // namespace
}  // namespace verity::cli
