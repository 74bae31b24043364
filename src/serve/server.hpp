#pragma once
// HTTP front end of the two-stage pipeline and the verified semantic cache
// (API in docs/SERVER.md and docs/CACHE.md):
//   POST /search  {query, k?, stage1?, verifier?}   -> ranked hits + per-stage latency
//   POST /verify  {query, candidates:[text], verifier?} -> one {score, verdict?} per candidate
//   GET  /health                                    -> {status, docs, parts, uptime_s, ...}
//   /cache/put, /cache/lookup, /cache/entries/{id}, /cache/clear, /cache/stats
//     (serve/cache_handlers.hpp) when the server has a cache database
// Every answer is JSON; errors are {"error": message} with a 4xx status (500 only for
// unexpected failures, 503 when the server is at a limit). Endpoints are plain
// functions (serve/endpoints.hpp); sockets are handled by serve/connection_loop.hpp,
// whose timeouts and connection cap keep slow or hostile clients from starving the
// workers. httplib stays in server.cpp behind the pimpl.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "search/pipeline.hpp"
#include "serve/endpoint.hpp"

namespace verity::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                    // 0 = any free port (see Server::bind)
  size_t max_body_bytes = 64 * 1024;  // larger request bodies get 413
  size_t max_k = 100;                 // /search k above it gets 422
  size_t max_query_chars = 2000;      // in Unicode code points; longer gets 422
  size_t max_candidates = 64;         // /verify candidates above it get 422
  size_t threads = 16;                // worker threads (requests handled at once)
  size_t max_connections = 512;       // open connections; beyond it a new one gets 503
  double header_timeout_s = 5;        // request headers must arrive within this (else 408)
  double read_timeout_s = 10;         // the whole request must arrive within this (else 408)
  double idle_timeout_s = 5;          // an idle keep-alive connection is closed after this
  double write_timeout_s = 10;        // a client must take the response within this
  double request_timeout_s = 30;      // a response not ready this long after the request
                                      // arrived is replaced by 503
  // Defaults for every request; a request may override stage1 and verifier only.
  search::PipelineOptions pipeline;
  // The cache database ("" = no /cache endpoints) and its options.
  std::string cache_db;
  cache::CacheOptions cache;
};

// Validates limits and the default pipeline options; throws ConfigError naming the field.
void validate(const ServerOptions& options);

class Server {
 public:
  // Opens the default pipeline (and the cache) eagerly, so a broken index, database
  // or option fails at startup (ConfigError/FormatError) rather than on the first
  // request. index_dir may be "" when options.cache_db is set: no /search.
  // extra_routes are served beside the built-in endpoints (a path may not repeat).
  Server(std::string index_dir, ServerOptions options, std::vector<Route> extra_routes = {});
  ~Server();  // stops and waits for a running serve loop
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0 picks a free one) and returns the bound port;
  // throws Error naming the address when binding fails, ConfigError when the
  // process may not open max_connections descriptors.
  int bind();
  // Serves on the bound socket until stop(); call bind() first. Returns after the
  // listener is closed and every request already received has been answered.
  void run();
  // Thread-safe and idempotent: stop accepting connections; run() returns once the
  // requests already being handled are answered. Safe before run() starts.
  void stop();

  int port() const;                // bound port, 0 before bind()
  size_t requests_served() const;  // requests answered (any status)
  size_t open_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::serve
