// verity cache put|lookup|remove|clear|stats: the verified semantic cache on a
// database file, without a server (docs/CACHE.md).
#include <cmath>
#include <optional>
#include <nlohmann/json.hpp>

#include "cache/cache.hpp"
#include "cache/detail/cache_json.hpp"
#include "cli/cache_flags.hpp"
#include "cli/command.hpp"
#include "core/log.hpp"
#include "data/lines.hpp"

namespace verity::cli {
namespace {
using json = nlohmann::json;

struct CacheArgs {
  CommonFlags common;
  cache::CacheOptions options;
  std::string db, prompt, ns = cache::kDefaultNamespace, metadata = "{}", jsonl;
  std::optional<std::string> response;  // required by put, as the HTTP API's field
  double ttl_s = 0;
  float min_probability = -1;
  int64_t id = 0;
};

void print_line(const std::string& s) { std::printf("%s\n", s.c_str()); }

// One put request per line: {"prompt", "response", "namespace"?, "metadata"?, "ttl_s"?}; a field a
// line leaves out takes the command line's value (`defaults`).
std::vector<cache::PutRequest> read_put_file(const std::string& path, const cache::PutOptions& defaults) {
  std::vector<cache::PutRequest> out;
  data::for_each_content_line(path, [&](std::string_view line, size_t n) {
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& e) {
      throw FormatError(cat(path, ":", n, ": malformed JSON at byte ", e.byte));
    }
    auto where = [&](const char* field) { return cat(path, ":", n, ": field '", field, "'"); };
    VERITY_CHECK(j.is_object(), FormatError, path, ":", n, ": expected a JSON object");
    cache::PutRequest r;
    r.options = defaults;
    for (const auto& [key, value] : j.items()) {
      if (key == "prompt" || key == "response" || key == "namespace") {
        VERITY_CHECK(value.is_string(), FormatError, where(key.c_str()), " must be a string");
        (key == "prompt" ? r.prompt : key == "response" ? r.response : r.options.ns) = value.get<std::string>();
      } else if (key == "metadata") {
        VERITY_CHECK(value.is_object(), FormatError, where("metadata"), " must be a JSON object");
        r.options.metadata = value.dump();
      } else if (key == "ttl_s") {
        // The HTTP API's range: (0, 3.2e9] seconds.
        const double ttl = value.is_number() ? value.get<double>() : -1;
        VERITY_CHECK(value.is_number() && std::isfinite(ttl) && ttl > 0 && ttl <= 3.2e9, FormatError,
                     where("ttl_s"), " must be a number of seconds in (0, 3.2e9], got ", value.dump());
        r.options.ttl_s = ttl;
      } else {
        throw FormatError(cat(path, ":", n, ": unknown field '", key,
                              "' (valid: prompt, response, namespace, metadata, ttl_s)"));
      }
    }
    VERITY_CHECK(j.contains("prompt") && j.contains("response"), FormatError, path, ":", n,
                 ": needs 'prompt' and 'response'");
    out.push_back(std::move(r));
  });
  return out;
}

void run_put(CacheArgs& a) {
  apply_common_flags(a.common);
  cache::Cache c(a.db, a.options);
  std::vector<cache::PutRequest> requests;
  cache::PutOptions given{a.ns, a.metadata, std::nullopt};
  if (a.ttl_s > 0) given.ttl_s = a.ttl_s;
  if (!a.jsonl.empty()) {
    VERITY_CHECK(a.prompt.empty() && !a.response, ConfigError, "cache put: give --jsonl or --prompt/--response, not both");
    requests = read_put_file(a.jsonl, given);
  } else {
    VERITY_CHECK(!a.prompt.empty(), ConfigError, "cache put: --prompt is required (or --jsonl FILE)");
    VERITY_CHECK(a.response.has_value(), ConfigError, "cache put: --response is required (or --jsonl FILE)");
    requests.push_back({a.prompt, *a.response, given});
  }
  auto results = c.put_batch(requests);
  size_t replaced = 0;
  for (const auto& r : results) replaced += r.replaced;
  log("cache put: ", results.size(), " entries (", replaced, " replaced) in ", a.db);
  if (a.common.json) {
    if (results.size() == 1 && a.jsonl.empty()) return print_json(cache::detail::put_json(results[0]));
    json ids = json::array();
    for (const auto& r : results) ids.push_back(r.id);
    return print_json({{"puts", results.size()}, {"replaced", replaced}, {"ids", ids}});
  }
  if (results.size() == 1) return print_line(cat("id ", results[0].id, results[0].replaced ? " (replaced)" : ""));
  print_line(cat(results.size(), " puts, ", replaced, " replaced, ids ", results.front().id, "..", results.back().id));
}

void run_lookup(CacheArgs& a) {
  apply_common_flags(a.common);
  a.options.create = false;
  cache::Cache c(a.db, a.options);
  cache::LookupOptions o{a.ns, std::nullopt};
  if (a.min_probability >= 0) o.min_probability = a.min_probability;
  auto r = c.lookup(a.prompt, o);
  if (a.common.json) return print_json(cache::detail::lookup_json(r));
  auto p = [](const std::optional<float>& v) { return v ? cat(*v) : std::string("-"); };
  if (r.hit) {
    const auto& b = *r.best;
    print_line(cat("hit (", r.reason, ") id ", b.entry.id, ", probability ", p(b.probability), ", similarity ",
                   b.similarity, ", threshold ", r.threshold, " (", r.threshold_source, ")"));
    print_line("cached prompt: " + b.entry.prompt);
    print_line("response: " + b.entry.response);
  } else {
    print_line(cat("miss (", r.reason, "), threshold ", r.threshold, " (", r.threshold_source, ")"));
    if (r.best)
      print_line(cat("best candidate: id ", r.best->entry.id, ", probability ", p(r.best->probability),
                     ", similarity ", r.best->similarity, ": ", r.best->entry.prompt));
  }
}

void run_remove(CacheArgs& a) {
  apply_common_flags(a.common);
  a.options.create = false;
  cache::Cache c(a.db, a.options);
  bool removed = c.remove(a.id);
  VERITY_CHECK(removed, Error, a.db, ": no cache entry with id ", a.id);
  if (a.common.json) return print_json({{"id", a.id}, {"removed", true}});
  print_line(cat("removed ", a.id));
}

void run_clear(CacheArgs& a) {
  apply_common_flags(a.common);
  a.options.create = false;
  cache::Cache c(a.db, a.options);
  size_t n = c.clear(a.ns);
  if (a.common.json) return print_json({{"namespace", a.ns}, {"removed", n}});
  print_line(cat("removed ", n, " entries from namespace ", a.ns));
}

void run_stats(CacheArgs& a) {
  apply_common_flags(a.common);
  a.options.create = false;
  cache::Cache c(a.db, a.options);
  auto j = cache::detail::stats_json(c.stats());
  if (a.common.json) return print_json(j);
  print_line(cat(a.db, ": ", j["entries"].get<size_t>(), " entries, ", j["bytes"].get<size_t>(), " bytes"));
  for (const auto& [name, n] : j["namespaces"].items())
    print_line(cat("  ", name, ": ", n["entries"].get<size_t>(), " entries, ", n["bytes"].get<size_t>(), " bytes (",
                   n["index"].get<std::string>(), ")"));
  print_line(cat("verifier ", j["verifier"].get<std::string>(), ", threshold ", j["threshold"].get<float>(), " (",
                 j["threshold_source"].get<std::string>(), "), cosine floor ", j["cosine_floor"].get<float>()));
}

CLI::App* sub(CLI::App* parent, const char* name, const char* help, std::shared_ptr<CacheArgs> args,
              void (*run)(CacheArgs&)) {
  auto* cmd = parent->add_subcommand(name, help);
  cmd->add_option("--db", args->db, "Cache database file (SQLite)")->required()->envname("VERITY_CACHE_DB");
  add_cache_flags(cmd, args->options, "");
  add_common_flags(cmd, args->common);
  cmd->callback([args, run] { run(*args); });
  return cmd;
}

void setup_cache(CLI::App& app) {
  auto* cmd = app.add_subcommand("cache", "Verified semantic cache on a database file: put, lookup, remove, clear, stats");
  cmd->require_subcommand(1);
  {
    auto a = std::make_shared<CacheArgs>();
    auto* c = sub(cmd, "put", "Cache a response for a prompt (or every line of --jsonl)", a, run_put);
    c->add_option("--prompt", a->prompt, "Prompt text");
    c->add_option("--response", a->response, "Response to cache");
    c->add_option("--namespace", a->ns, "Namespace")->capture_default_str();
    c->add_option("--metadata", a->metadata, "JSON object stored with the entry")->capture_default_str();
    c->add_option("--ttl", a->ttl_s, "Seconds until the entry expires (0 = never)")->check(CLI::Range(0.0, 3.2e9));
    c->add_option("--jsonl", a->jsonl,
                  "Put every line {prompt, response, namespace?, metadata?, ttl_s?} of this file, in batches (a field a line "
                  "leaves out takes --namespace, --metadata, --ttl)")
        ->check(CLI::ExistingFile);
  }
  {
    auto a = std::make_shared<CacheArgs>();
    auto* c = sub(cmd, "lookup", "Look a prompt up: a verified hit or a miss with the best candidate", a, run_lookup);
    c->add_option("--prompt", a->prompt, "Prompt text")->required();
    c->add_option("--namespace", a->ns, "Namespace")->capture_default_str();
    c->add_option("--min-probability", a->min_probability,
                  "Hit threshold for this lookup (default: the verifier's calibrated one, else the fallback)")
        ->check(CLI::Range(0.0, 1.0));
  }
  {
    auto a = std::make_shared<CacheArgs>();
    auto* c = sub(cmd, "remove", "Remove one entry by id", a, run_remove);
    c->add_option("--id", a->id, "Entry id")->required()->check(CLI::PositiveNumber);
  }
  {
    auto a = std::make_shared<CacheArgs>();
    auto* c = sub(cmd, "clear", "Remove every entry of a namespace", a, run_clear);
    c->add_option("--namespace", a->ns, "Namespace")->capture_default_str();
  }
  {
    auto a = std::make_shared<CacheArgs>();
    sub(cmd, "stats", "Entries and bytes per namespace, the decision settings", a, run_stats);
  }
}

VERITY_REGISTER_COMMAND("cache", setup_cache);
}  // namespace
}  // namespace verity::cli
