#pragma once
// The /cache endpoints as plain functions: request body (or path parameter)
// in, status and JSON text out. No sockets, and nothing is thrown: every
// failure becomes {"error": message} with the status docs/SERVER.md lists
// (400 bad field, 404 unknown entry, 422 over a limit, 500 damaged database
// or internal error). The server routes to them; tests and fuzzers call them
// directly.
#include <cstddef>
#include <string>
#include <string_view>

#include "serve/endpoint.hpp"

namespace verity::cache {
class Cache;
}

namespace verity::serve {

struct CacheLimits {
  size_t max_prompt_chars = 2000;  // prompt length in code points (422 above)
};

// POST /cache/put {"prompt", "response", "namespace"?, "metadata"?, "ttl_s"?} -> {"id", "replaced", ...}
Reply cache_put(cache::Cache& cache, const CacheLimits& limits, std::string_view body);
// POST /cache/lookup {"prompt", "namespace"?, "min_probability"?}
//   -> {"hit", "id", "response", "prompt", "probability", "similarity", "latency_ms", ...}
Reply cache_lookup(cache::Cache& cache, const CacheLimits& limits, std::string_view body);
// DELETE /cache/entries/{id} -> {"id", "removed": true}; 404 when there is no such entry.
Reply cache_remove(cache::Cache& cache, std::string_view id);
// POST /cache/clear {"namespace"?} -> {"namespace", "removed"}
Reply cache_clear(cache::Cache& cache, std::string_view body);
// GET /cache/stats
Reply cache_stats(const cache::Cache& cache);

}  // namespace verity::serve
