#pragma once
// JSON views of cache results, shared by the HTTP handlers and the CLI so
// both print the same fields (docs/CACHE.md).
#include <nlohmann/json.hpp>

#include "cache/cache.hpp"

namespace verity::cache::detail {

// {"hit", "namespace", "id", "response", "prompt", "probability", "similarity", "latency_ms",
//  "reason", "threshold", "threshold_source", "metadata", "best"}; id, response,
// prompt and metadata are null on a miss, where "best" describes the candidate that lost.
nlohmann::json lookup_json(const LookupResult& r);
nlohmann::json put_json(const PutResult& r);
nlohmann::json stats_json(const CacheStats& s);
// The metadata text of an entry as JSON (stored text is validated on put; a
// damaged one comes back as a string rather than failing the request).
nlohmann::json metadata_json(const std::string& text);

}  // namespace verity::cache::detail
