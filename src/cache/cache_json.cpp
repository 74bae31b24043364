#include "cache/detail/cache_json.hpp"

namespace verity::cache::detail {
namespace {
using json = nlohmann::json;

json optional_number(const std::optional<float>& v) { return v ? json(*v) : json(nullptr); }
}  // namespace

json metadata_json(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::parse_error&) {
    return text;
  }
}

json lookup_json(const LookupResult& r) {
  const auto& t = r.timings;
  json out = {{"hit", r.hit},
              {"namespace", r.ns},
              {"id", nullptr},
              {"response", nullptr},
              {"prompt", nullptr},
              {"probability", nullptr},
              {"similarity", nullptr},
              {"metadata", nullptr},
              {"reason", r.reason},
              {"threshold", r.threshold},
              {"threshold_source", r.threshold_source},
              {"best", nullptr},
              {"latency_ms",
               {{"exact", t.exact_ms},
                {"encode", t.encode_ms},
                {"ann", t.ann_ms},
                {"fetch", t.fetch_ms},
                {"verify", t.verify_ms},
                {"total", t.total_ms}}}};
  if (!r.best) return out;
  const auto& b = *r.best;
  out["probability"] = optional_number(b.probability);
  out["similarity"] = b.similarity;
  if (r.hit) {
    out["id"] = b.entry.id;
    out["response"] = b.entry.response;
    out["prompt"] = b.entry.prompt;
    out["metadata"] = metadata_json(b.entry.metadata);
  } else {
    out["best"] = {{"id", b.entry.id},
                   {"prompt", b.entry.prompt},
                   {"probability", optional_number(b.probability)},
                   {"similarity", b.similarity}};
  }
  return out;
}

json put_json(const PutResult& r) {
  return {{"id", r.id}, {"namespace", r.ns}, {"replaced", r.replaced}, {"evicted", r.evicted}, {"expired", r.expired}};
}

json stats_json(const CacheStats& s) {
  json namespaces = json::object();
  for (const auto& n : s.namespaces)
    namespaces[n.name] = {{"entries", n.entries}, {"bytes", n.bytes}, {"index", n.graph ? "hnsw" : "exact"}};
  return {{"path", s.path},
          {"encoder", s.encoder},
          {"verifier", s.verifier},
          {"threshold", s.default_threshold},
          {"threshold_source", s.threshold_source},
          {"cosine_floor", s.cosine_floor},
          {"candidates", s.candidates},
          {"max_entries", s.max_entries},
          {"max_bytes", s.max_bytes},
          {"entries", s.entries},
          {"bytes", s.bytes},
          {"namespaces", namespaces},
          {"index_source", s.index_source},
          {"counters",
           {{"lookups", s.lookups},
            {"hits", s.hits},
            {"exact_hits", s.exact_hits},
            {"misses", s.misses},
            {"puts", s.puts},
            {"replaced", s.replaced},
            {"reused_vectors", s.reused_vectors},
            {"removed", s.removed},
            {"evicted", s.evicted},
            {"expired", s.expired},
            {"damaged_skipped", s.damaged_skipped}}}};
}

}  // namespace verity::cache::detail
