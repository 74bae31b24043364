#pragma once
// HTTP front end of the two-stage pipeline and the verified semantic cache
// (API in docs/SERVER.md and docs/CACHE.md):
//   POST /search  {query, k?, stage1?, verifier?}   -> ranked hits + per-stage latency
//   POST /verify  {query, candidates:[text], verifier?} -> one {score, verdict?} per candidate
//   GET  /health                                    -> {status, docs, parts, uptime_s, ...}
//   /cache/put, /cache/lookup, /cache/entries/{id}, /cache/clear, /cache/stats
//     (serve/cache_handlers.hpp) when the server has a cache database
// Every answer is JSON; errors are {"error": message} with a 4xx status (500 only for
// unexpected failures). Handlers never throw out, so a bad request cannot stop the server.
// httplib stays in server.cpp behind the pimpl.
#include <cstddef>
#include <memory>
#include <string>

#include "cache/cache.hpp"
#include "search/pipeline.hpp"

namespace verity::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                    // 0 = any free port (see Server::bind)
  size_t max_body_bytes = 64 * 1024;  // larger request bodies get 413
  size_t max_k = 100;                 // /search k above it gets 422
  size_t max_query_chars = 2000;      // in Unicode code points; longer gets 422
  size_t max_candidates = 64;         // /verify candidates above it get 422
  size_t threads = 16;                // worker threads; each keep-alive connection holds one
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
  // request. index_dir may be "" when options.cache_db is set: no /search, /verify.
  Server(std::string index_dir, ServerOptions options);
  ~Server();  // stops and waits for a running serve loop
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0 picks a free one) and returns the bound port;
  // throws Error naming the address when binding fails.
  int bind();
  // Serves on the bound socket until stop(); call bind() first. Returns after the
  // listener is closed and every in-flight request has been answered.
  void run();
  // Thread-safe and idempotent: stop accepting connections; run() returns once the
  // requests already being handled are finished. Safe before run() starts.
  void stop();

  int port() const;             // bound port, 0 before bind()
  size_t requests_served() const;  // requests answered (any status)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::serve
