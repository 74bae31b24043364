// The one translation unit that includes httplib (see server.hpp for the API).
#include "serve/server.hpp"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.hpp"
#include "core/log.hpp"
#include "index/doc_store.hpp"
#include "index/index_dir.hpp"
#include "serve/cache_handlers.hpp"
#include "serve/detail/request_json.hpp"

namespace verity::serve {
namespace {
using namespace detail;
using Clock = std::chrono::steady_clock;

// Request verifiers are limited to the built-ins plus the server's own default, so a
// client cannot make the server load an arbitrary weight file (f3:PATH / f4:PATH).
bool is_builtin_verifier(const std::string& v) {
  return v == "none" || v == "f0" || v == "f1" || v == "f2";
}

const char* type_name(const json& v) { return v.type_name(); }

void reply(httplib::Response& res, int status, const json& j) {
  res.status = status;
  res.set_content(dump(j), "application/json");
}

void reply_error(httplib::Response& res, int status, const std::string& message) {
  reply(res, status, json{{"error", message}});
}

std::string default_error_message(int status) {
  switch (status) {
    case 400: return "bad request: the HTTP request could not be parsed";
    case 404: return "not found";
    case 413: return "request body too large";
    case 414: return "request URI too long";
    default: return cat("HTTP error ", status);
  }
}
}  // namespace

void validate(const ServerOptions& o) {
  VERITY_CHECK(o.port >= 0 && o.port <= 65535, ConfigError, "port must be in [0, 65535], got ", o.port);
  VERITY_CHECK(!o.host.empty(), ConfigError, "host must not be empty");
  VERITY_CHECK(o.max_body_bytes > 0, ConfigError, "max_body_bytes must be positive");
  VERITY_CHECK(o.max_k > 0, ConfigError, "max_k must be positive");
  VERITY_CHECK(o.max_query_chars > 0, ConfigError, "max_query_chars must be positive");
  VERITY_CHECK(o.max_candidates > 0, ConfigError, "max_candidates must be positive");
  VERITY_CHECK(o.threads > 0 && o.threads <= 1024, ConfigError, "threads must be in [1, 1024], got ",
               o.threads);
  search::validate(o.pipeline);
  if (!o.cache_db.empty()) cache::validate(o.cache);
}

struct Server::Impl {
  std::string dir;
  ServerOptions opt;
  index::IndexManifest manifest;
  std::unique_ptr<cache::Cache> cache;  // with --cache
  Clock::time_point started = Clock::now();
  httplib::Server http;
  int port = 0;
  int listen_fd = -1;  // httplib's listening socket, seen through the socket-options hook

  // Pipelines by (stage1, verifier), opened on first use. The map lock is held only
  // to find the slot; opening (which can take seconds) holds the slot's own lock.
  struct Slot {
    std::mutex open_lock;
    std::shared_ptr<const search::Pipeline> pipeline;
  };
  std::mutex slots_lock;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Slot>> slots;

  std::atomic<size_t> served{0}, in_flight{0};
  std::mutex run_lock;
  std::condition_variable run_done;
  bool stop_requested = false, loop_active = false, http_stopped = false;

  std::shared_ptr<const search::Pipeline> pipeline(const std::string& stage1,
                                                   const std::string& verifier) {
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard lock(slots_lock);
      auto& s = slots[{stage1, verifier}];
      if (!s) s = std::make_shared<Slot>();
      slot = s;
    }
    std::lock_guard lock(slot->open_lock);
    if (!slot->pipeline) {
      auto o = opt.pipeline;
      o.stage1 = stage1;
      o.verifier = verifier;
      if (verifier == "none") o.reject_below.reset();  // no verifier, no verdicts
      // Failures are not cached: a bad combination costs a manifest read per request.
      slot->pipeline = std::make_shared<const search::Pipeline>(dir, o);
      log("serve: opened pipeline ", slot->pipeline->describe());
    }
    return slot->pipeline;
  }

  std::pair<std::string, std::string> choose(const json& body) {
    std::string stage1 = string_field(body, "stage1", &opt.pipeline.stage1);
    std::string verifier = string_field(body, "verifier", &opt.pipeline.verifier);
    if (!is_builtin_verifier(verifier) && verifier != opt.pipeline.verifier)
      throw HttpError(kBadRequest,
                      cat("verifier '", verifier, "' is not available: requests may choose none, f0, f1, f2",
                          is_builtin_verifier(opt.pipeline.verifier) ? "" : " or '" + opt.pipeline.verifier + "'",
                          " (learned verifiers are loaded by the server: --verifier)"));
    return {stage1, verifier};
  }

  std::string query_field(const json& body) {
    std::string query = string_field(body, "query", nullptr);
    if (query.empty()) throw HttpError(kBadRequest, "field 'query' must not be empty");
    size_t chars = utf8_code_points(query);
    if (chars > opt.max_query_chars)
      throw HttpError(kUnprocessable, cat("field 'query' has ", chars, " characters, the limit is ",
                                          opt.max_query_chars, " (--max-query-chars)"));
    return query;
  }

  json search(const json& body) {
    check_fields(body, {"query", "k", "stage1", "verifier"});
    std::string query = query_field(body);
    size_t k = 10;
    if (auto it = body.find("k"); it != body.end() && !it->is_null()) {
      if (!it->is_number_integer())
        throw HttpError(kBadRequest, cat("field 'k' must be an integer, got ", type_name(*it)));
      auto v = it->get<int64_t>();
      if (v < 1) throw HttpError(kBadRequest, cat("field 'k' must be at least 1, got ", v));
      if (uint64_t(v) > opt.max_k)
        throw HttpError(kUnprocessable,
                        cat("field 'k' is ", v, ", the limit is ", opt.max_k, " (--max-k)"));
      k = size_t(v);
    }
    auto [stage1, verifier] = choose(body);
    auto p = pipeline(stage1, verifier);
    search::StageTimings t;
    auto hits = p->search(query, k, &t);
    const auto& docs = p->docs();
    json results = json::array();
    for (size_t r = 0; r < hits.size(); ++r) {
      const auto& h = hits[r];
      json j = {{"rank", r + 1},
                {"id", h.id},
                {"score", h.score},
                {"stage1_score", h.stage1_score},
                {"title", std::string(docs.title(h.doc))}};
      if (h.verifier_score) j["verifier_score"] = *h.verifier_score;
      if (!h.verdict.empty()) j["verdict"] = h.verdict;
      results.push_back(std::move(j));
    }
    return {{"query", query},
            {"pipeline", p->describe()},
            {"results", std::move(results)},
            {"latency_ms",
             {{"encode", t.encode_ms}, {"stage1", t.stage1_ms}, {"stage2", t.stage2_ms}, {"total", t.total_ms}}}};
  }

  json verify(const json& body) {
    check_fields(body, {"query", "candidates", "verifier"});
    std::string query = query_field(body);
    auto it = body.find("candidates");
    if (it == body.end() || it->is_null())
      throw HttpError(kBadRequest, "missing field 'candidates' (an array of strings)");
    if (!it->is_array())
      throw HttpError(kBadRequest, cat("field 'candidates' must be an array of strings, got ", type_name(*it)));
    if (it->size() > opt.max_candidates)
      throw HttpError(kUnprocessable, cat("field 'candidates' has ", it->size(), " entries, the limit is ",
                                          opt.max_candidates, " (--max-candidates)"));
    std::vector<std::string> candidates;
    for (size_t i = 0; i < it->size(); ++i) {
      const auto& c = (*it)[i];
      if (!c.is_string())
        throw HttpError(kBadRequest, cat("candidates[", i, "] must be a string, got ", type_name(c)));
      candidates.push_back(c.get<std::string>());
    }
    std::string verifier = choose(body).second;
    if (verifier == "none")
      throw HttpError(kBadRequest,
                      "verification needs a verifier: pass \"verifier\" (f0, f1, f2) or start the server "
                      "with --verifier");
    auto start = Clock::now();
    auto p = pipeline(opt.pipeline.stage1, verifier);
    json results = json::array();
    if (!candidates.empty())
      for (const auto& v : p->verify(query, candidates)) {
        json j = {{"score", v.score}};
        if (!v.verdict.empty()) j["verdict"] = v.verdict;
        results.push_back(std::move(j));
      }
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return {{"query", query},
            {"pipeline", p->describe()},
            {"results", std::move(results)},
            {"latency_ms", {{"total", ms}}}};
  }

  json health() const {
    json out = {{"status", "ok"},
                {"in_flight", in_flight.load()},
                {"served", served.load()},
                {"uptime_s", std::chrono::duration<double>(Clock::now() - started).count()}};
    if (!dir.empty()) {
      json parts = json::array();
      for (const auto& [name, file] : manifest.parts) parts.push_back(name);
      out["docs"] = manifest.docs;
      out["parts"] = std::move(parts);
      out["default"] = cat("stage1=", opt.pipeline.stage1, ",verifier=", opt.pipeline.verifier);
    }
    if (cache) out["cache"] = {{"path", opt.cache_db}, {"entries", cache->stats().entries}};
    return out;
  }

  // A /cache handler's reply, counted like every other request.
  void answer(httplib::Response& res, const HandlerReply& r) {
    res.status = r.status;
    res.set_content(r.body, "application/json");
  }

  std::string endpoints() const {
    std::string list = dir.empty() ? "" : "POST /search, POST /verify, ";
    list += "GET /health";
    if (cache)
      list += ", POST /cache/put, POST /cache/lookup, DELETE /cache/entries/{id}, POST /cache/clear, GET /cache/stats";
    return list;
  }

  // Runs one handler and turns every failure into a JSON error; nothing escapes.
  template <typename Fn>
  void guarded(httplib::Response& res, Fn&& fn) {
    ++in_flight;
    try {
      reply(res, 200, fn());
    } catch (const HttpError& e) {
      reply_error(res, e.status, e.what());
    } catch (const ConfigError& e) {
      // Unknown stage1/verifier value, a part missing from the index, a verifier without tokens.
      reply_error(res, kBadRequest, e.what());
    } catch (const std::exception& e) {
      log("serve: internal error: ", e.what());
      reply_error(res, 500, cat("internal error: ", e.what()));
    } catch (...) {
      reply_error(res, 500, "internal error");
    }
    --in_flight;
  }

  void install_routes() {
    http.new_task_queue = [n = opt.threads] { return new httplib::ThreadPool(n); };
    http.set_payload_max_length(opt.max_body_bytes);
    // httplib's default also sets SO_REUSEPORT, which lets a second server bind the same
    // port and silently take half the connections; a busy port must be an error instead.
    http.set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_fd = sock;
    });
    http.set_tcp_nodelay(true);  // header and body go out in separate writes: no Nagle stall
    http.set_keep_alive_max_count(1000);
    http.set_keep_alive_timeout(2);  // an idle keep-alive connection delays stop() by up to this
    http.set_read_timeout(10);
    http.set_write_timeout(10);

    // 405 for a known path with the wrong method. These are ordinary routes, not a
    // pre-routing hook: httplib reads a request's body only before ordinary routes, and a body
    // left unread on a keep-alive connection would be parsed as the next request.
    // Paths are httplib patterns (regular expressions).
    std::vector<std::pair<std::string, std::string>> allowed_methods = {{"/health", "GET, HEAD"}};
    if (!dir.empty()) allowed_methods.insert(allowed_methods.end(), {{"/search", "POST"}, {"/verify", "POST"}});
    if (cache)
      allowed_methods.insert(allowed_methods.end(), {{"/cache/put", "POST"},
                                                     {"/cache/lookup", "POST"},
                                                     {"/cache/clear", "POST"},
                                                     {"/cache/stats", "GET, HEAD"},
                                                     {"/cache/entries/[^/]*", "DELETE"}});
    for (const auto& [path, allowed] : allowed_methods) {
      auto refuse = [path, allowed](const httplib::Request& req, httplib::Response& res) {
        res.set_header("Allow", allowed);
        reply_error(res, 405, cat("method ", req.method, " not allowed on ", req.path, " (allowed: ", allowed, ")"));
      };
      auto allows = [&allowed](const char* method) { return allowed.find(method) != std::string::npos; };
      if (!allows("GET")) http.Get(path, refuse);
      if (!allows("POST")) http.Post(path, refuse);
      http.Put(path, refuse);
      http.Patch(path, refuse);
      if (!allows("DELETE")) http.Delete(path, refuse);
      http.Options(path, refuse);
    }
    if (!dir.empty()) {
      http.Post("/search", [this](const httplib::Request& req, httplib::Response& res) {
        guarded(res, [&] { return search(parse_body(req.body)); });
      });
      http.Post("/verify", [this](const httplib::Request& req, httplib::Response& res) {
        guarded(res, [&] { return verify(parse_body(req.body)); });
      });
    }
    if (cache) {
      const CacheLimits limits{opt.max_query_chars};
      auto& c = *cache;
      auto counted = [this](httplib::Response& res, auto&& handler) {
        ++in_flight;
        answer(res, handler());
        --in_flight;
      };
      http.Post("/cache/put", [=, &c](const httplib::Request& req, httplib::Response& res) {
        counted(res, [&] { return cache_put(c, limits, req.body); });
      });
      http.Post("/cache/lookup", [=, &c](const httplib::Request& req, httplib::Response& res) {
        counted(res, [&] { return cache_lookup(c, limits, req.body); });
      });
      http.Post("/cache/clear", [=, &c](const httplib::Request& req, httplib::Response& res) {
        counted(res, [&] { return cache_clear(c, req.body); });
      });
      http.Get("/cache/stats", [=, &c](const httplib::Request&, httplib::Response& res) {
        counted(res, [&] { return cache_stats(c); });
      });
      http.Delete("/cache/entries/([^/]*)", [=, &c](const httplib::Request& req, httplib::Response& res) {
        counted(res, [&] { return cache_remove(c, req.matches[1].str()); });
      });
    }
    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      guarded(res, [&] { return health(); });
    });
    // httplib's own errors (404 unknown path, 413 body too large, 400 unparsable HTTP)
    // arrive here with an empty body: give them the same JSON shape.
    http.set_error_handler(httplib::Server::HandlerWithResponse([list = endpoints()](const httplib::Request& req,
                                                                                     httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      std::string message = default_error_message(res.status);
      if (res.status == 404) message = cat("no such endpoint: ", req.method, " ", req.path, " (endpoints: ", list, ")");
      reply_error(res, res.status, message);
      return httplib::Server::HandlerResponse::Handled;
    }));
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string message = "internal error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        message = cat("internal error: ", e.what());
      } catch (...) {
      }
      reply_error(res, 500, message);
    });
    http.set_logger([this](const httplib::Request&, const httplib::Response&) { ++served; });
  }
};

Server::Server(std::string index_dir, ServerOptions options) : impl_(std::make_unique<Impl>()) {
  validate(options);
  auto& m = *impl_;
  m.dir = std::move(index_dir);
  m.opt = std::move(options);
  VERITY_CHECK(!m.dir.empty() || !m.opt.cache_db.empty(), ConfigError,
               "the server needs an index (--index) or a cache database (--cache)");
  if (!m.dir.empty()) {
    m.manifest = index::read_index_manifest(m.dir);
    m.pipeline(m.opt.pipeline.stage1, m.opt.pipeline.verifier);
  }
  if (!m.opt.cache_db.empty()) {
    auto o = m.opt.cache;
    o.max_prompt_chars = m.opt.max_query_chars;
    m.cache = std::make_unique<cache::Cache>(m.opt.cache_db, o);
  }
  m.install_routes();
}

Server::~Server() {
  stop();
  std::unique_lock lock(impl_->run_lock);
  impl_->run_done.wait(lock, [&] { return !impl_->loop_active; });
}

int Server::bind() {
  auto& m = *impl_;
  VERITY_CHECK(m.port == 0, ConfigError, "server already bound to ", m.opt.host, ":", m.port);
  int port = m.opt.port == 0 ? m.http.bind_to_any_port(m.opt.host)
                             : (m.http.bind_to_port(m.opt.host, m.opt.port) ? m.opt.port : -1);
  VERITY_CHECK(port > 0, Error, "cannot listen on ", m.opt.host, ":", m.opt.port,
               " (address in use, not local, or not permitted)");
  // Debian's libcpp-httplib is built with a listen backlog of 5: a burst of new
  // connections overflows it and the dropped SYNs are retried only after 1 s.
  // listen() on a listening socket just resizes its backlog.
  if (m.listen_fd >= 0) ::listen(m.listen_fd, SOMAXCONN);
  m.port = port;
  return port;
}

void Server::run() {
  auto& m = *impl_;
  VERITY_CHECK(m.port > 0, ConfigError, "Server::run() needs bind() first");
  {
    std::lock_guard lock(m.run_lock);
    if (m.stop_requested) return;
    m.loop_active = true;
  }
  bool clean = m.http.listen_after_bind();
  {
    std::lock_guard lock(m.run_lock);
    m.loop_active = false;
  }
  m.run_done.notify_all();
  bool stopped;
  {
    std::lock_guard lock(m.run_lock);
    stopped = m.stop_requested;
  }
  VERITY_CHECK(clean || stopped, Error, "serving on ", m.opt.host, ":", m.port, " failed (accept error)");
}

void Server::stop() {
  auto& m = *impl_;
  {
    std::lock_guard lock(m.run_lock);
    m.stop_requested = true;
    if (!m.loop_active || m.http_stopped) return;
    m.http_stopped = true;  // httplib's stop() must run once per listen
  }
  // run() may be between setting loop_active and httplib marking itself running;
  // httplib::Server::stop() is a no-op before that, so wait for it.
  while (!m.http.is_running()) {
    {
      std::lock_guard lock(m.run_lock);
      if (!m.loop_active) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  m.http.stop();
}

int Server::port() const { return impl_->port; }
size_t Server::requests_served() const { return impl_->served.load(); }

}  // namespace verity::serve
