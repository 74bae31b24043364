// verity serve: the two-stage pipeline over HTTP (API: docs/SERVER.md).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "cli/cache_flags.hpp"
#include "cli/command.hpp"
#include "cli/pipeline_flags.hpp"
#include "core/log.hpp"
#include "serve/server.hpp"

namespace verity::cli {
namespace {

struct ServeArgs {
  CommonFlags common;
  PipelineFlags pipeline;
  serve::ServerOptions server;
  std::string index;
  int encoder_threads = 1;
};

// SIGINT/SIGTERM are blocked before any thread starts, so every thread inherits the
// mask and the signals reach only the watcher's sigtimedwait.
sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Stops the server on SIGINT/SIGTERM from a thread of its own: a signal handler may
// not take locks, and httplib::Server::stop() does. A second signal exits at once.
// Declared after the server, so it is joined before the server is destroyed.
class SignalWatcher {
 public:
  SignalWatcher(sigset_t signals, serve::Server& server) : signals_(signals) {
    thread_ = std::thread([this, &server] {
      const timespec poll{0, 200'000'000};
      bool stopping = false;
      while (!done_) {
        int sig = sigtimedwait(&signals_, nullptr, &poll);
        if (sig <= 0) continue;
        if (stopping) {
          std::fprintf(stderr, "verity serve: second %s: exiting without waiting\n", strsignal(sig));
          std::_Exit(128 + sig);
        }
        stopping = true;
        log("serve: ", strsignal(sig), ": no new connections; finishing in-flight requests");
        server.stop();
      }
    });
  }
  ~SignalWatcher() {
    done_ = true;
    thread_.join();
  }

 private:
  sigset_t signals_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

void run_serve(ServeArgs& a, const CLI::App* cmd) {
  apply_common_flags(a.common);
  if (a.index.empty()) {
    // Without an index the cache is the only user of an encoder and a verifier: --encoder,
    // --encoder-threads and --verifier mean the cache's, unless its own flags say otherwise.
    auto to_cache = [&](const char* flag, const char* cache_flag, const auto& value, auto& cache_value) {
      if (cmd->count(flag) == 0) return;
      VERITY_CHECK(cmd->count(cache_flag) == 0 || value == cache_value, ConfigError, flag, " ", value, " and ",
                   cache_flag, " ", cache_value, " disagree; a server without --index has only the cache's");
      cache_value = value;
    };
    to_cache("--verifier", "--cache-verifier", a.pipeline.options.verifier, a.server.cache.verifier);
    to_cache("--encoder", "--cache-encoder", a.pipeline.options.encoder, a.server.cache.encoder);
    to_cache("--encoder-threads", "--cache-encoder-threads", a.encoder_threads, a.server.cache.encoder_threads);
    auto given = given_flags(cmd, {"--stage1", "--fusion", "--rrf-k", "--dense-weight", "--candidates", "--combine",
                                   "--verifier-weight", "--penalty-beta", "--penalty-tau", "--reject-below",
                                   "--max-k"});
    if (!given.empty())
      throw ConfigError(flags_refused(given, "/search over --index",
                                      "serve --help; the cache takes --cache-candidates, --cache-encoder-threads, ..."));
    a.pipeline.options = {};  // no pipeline: its "auto" defaults never open
  }
  check_pipeline_flags(cmd, a.pipeline, "--stage1", true);
  sigset_t stop_signals = block_stop_signals();
  auto options = a.server;
  options.pipeline = a.pipeline.resolved();
  options.pipeline.threads = a.encoder_threads;
  VERITY_CHECK(!a.index.empty() || !options.cache_db.empty(), ConfigError,
               "serve: give --index DIR, --cache DB.sqlite, or both");
  serve::Server server(a.index, options);
  int port = server.bind();
  std::string what = a.index.empty() ? "" : cat("index ", a.index, ", stage1=", options.pipeline.stage1,
                                                 ", verifier=", options.pipeline.verifier, ", ");
  if (!options.cache_db.empty()) what += cat("cache ", options.cache_db, ", ");
  log("serve: listening on http://", options.host, ":", port, " (", what, options.threads, " threads)");
  if (a.common.json) {
    nlohmann::json j = {{"host", options.host}, {"port", port}, {"index", a.index.empty() ? nlohmann::json() : nlohmann::json(a.index)}};
    if (!options.cache_db.empty()) j["cache"] = options.cache_db;
    print_json(j);
  }
  SignalWatcher watcher(stop_signals, server);
  server.run();
  log("serve: stopped cleanly after ", server.requests_served(), " requests");
}

void setup_serve(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto& s = args->server;
  auto* cmd = app.add_subcommand(
      "serve", "Serve an index and/or a verified semantic cache over HTTP: /search, /verify, /cache/..., /health");
  cmd->add_option("--index", args->index, "Index directory built by 'verity index' (optional with --cache)");
  cmd->add_option("--cache", s.cache_db,
                  "Cache database (SQLite, created if missing): enables the /cache endpoints (docs/CACHE.md)")
      ->envname("VERITY_SERVE_CACHE");
  cmd->add_option("--host", s.host, "Address to listen on (127.0.0.1 = this machine only)")
      ->envname("VERITY_SERVE_HOST")
      ->capture_default_str();
  cmd->add_option("--port", s.port, "TCP port; 0 picks a free one (printed, and in --json output)")
      ->envname("VERITY_SERVE_PORT")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--threads", s.threads,
                  "Worker threads: requests handled at once (connections are not tied to a worker)")
      ->envname("VERITY_SERVE_THREADS")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--max-connections", s.max_connections,
                  "Open connections allowed; beyond it a new connection is answered 503")
      ->envname("VERITY_SERVE_MAX_CONNECTIONS")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  const auto timeout = CLI::Range(0.001, 3600.0);
  cmd->add_option("--header-timeout", s.header_timeout_s,
                  "Seconds a request's headers may take to arrive (then 408 and close)")
      ->check(timeout)
      ->capture_default_str();
  cmd->add_option("--read-timeout", s.read_timeout_s,
                  "Seconds a whole request may take to arrive (then 408 and close)")
      ->check(timeout)
      ->capture_default_str();
  cmd->add_option("--idle-timeout", s.idle_timeout_s, "Seconds an idle keep-alive connection stays open")
      ->check(timeout)
      ->capture_default_str();
  cmd->add_option("--write-timeout", s.write_timeout_s,
                  "Seconds a client may take to read a response (then the connection is cut)")
      ->check(timeout)
      ->capture_default_str();
  cmd->add_option("--request-timeout", s.request_timeout_s,
                  "Seconds from a request's arrival to its answer; later, the client gets 503")
      ->check(timeout)
      ->capture_default_str();
  cmd->add_option("--encoder-threads", args->encoder_threads,
                  "Torch threads per request (0 = runtime default); requests already run in parallel")
      ->capture_default_str();
  cmd->add_option("--max-body", s.max_body_bytes, "Largest request body in bytes (larger: 413)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-k", s.max_k, "Largest k a /search request may ask for (larger: 422)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-query-chars", s.max_query_chars, "Longest query in characters (longer: 422)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-candidates", s.max_candidates, "Most candidates per /verify request (more: 422)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  args->pipeline.options.stage1 = args->pipeline.options.verifier = "auto";  // the two-stage default
  add_pipeline_flags(cmd, args->pipeline, "--stage1");
  cmd->add_option("--encoder", args->pipeline.options.encoder,
                  "Override the encoder recorded in the index");
  add_cache_flags(cmd, s.cache, "cache-");
  add_common_flags(cmd, args->common);
  cmd->callback([args, cmd] { run_serve(*args, cmd); });
}

VERITY_REGISTER_COMMAND("serve", setup_serve);
}  // namespace
}  // namespace verity::cli
