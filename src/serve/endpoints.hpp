#pragma once
// The service's endpoints as plain functions (API: docs/SERVER.md, docs/CACHE.md):
//   search(body)  POST /search  {query, k?, stage1?, verifier?}           (with an index)
//   verify(body)  POST /verify  {query, candidates:[text], verifier?}     (always: through the
//                 index's pipeline where it has token vectors, else on an encoder of its own)
//   health()      GET  /health
//   the /cache endpoints (serve/cache_handlers.hpp) on the server's cache (with cache_db)
// Each returns a status and a JSON body and never throws. Thread-safe: requests run
// concurrently; pipelines are opened once per (stage1, verifier) and shared.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "serve/endpoint.hpp"
#include "serve/server.hpp"

namespace verity::serve {

class Endpoints {
 public:
  // Opens the default pipeline and the cache eagerly: a broken index, database or
  // option throws here (ConfigError/FormatError), not on the first request.
  // index_dir may be "" when options.cache_db is set (then search answers 404, and
  // verify uses the cache's encoder and verifier).
  Endpoints(std::string index_dir, ServerOptions options);
  ~Endpoints();
  Endpoints(const Endpoints&) = delete;
  Endpoints& operator=(const Endpoints&) = delete;

  Reply search(std::string_view body);
  Reply verify(std::string_view body);
  // requests_served is the transport's count, reported as "served".
  Reply health(size_t requests_served) const;

  // Every endpoint this server has, as routes (for Server); requests_served feeds /health.
  std::vector<Route> routes(std::function<size_t()> requests_served);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::serve
