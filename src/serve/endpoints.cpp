#include "serve/endpoints.hpp"

#include <chrono>
#include <map>
#include <mutex>

#include "cache/cache.hpp"
#include "core/log.hpp"
#include "encode/registry.hpp"
#include "index/doc_store.hpp"
#include "index/index_dir.hpp"
#include "serve/cache_handlers.hpp"
#include "serve/detail/request_json.hpp"
#include "verify/verifier.hpp"

namespace verity::serve {
namespace {
using namespace detail;
using Clock = std::chrono::steady_clock;

// Request verifiers are limited to the built-ins plus the server's own default, so a
// client cannot make the server load an arbitrary weight file (f3:PATH / f4:PATH).
bool is_builtin_verifier(const std::string& v) {
  return v == "none" || v == "f0" || v == "f1" || v == "f2";
}

// Counts a request as in flight for its lifetime (reported by /health).
class InFlight {
 public:
  explicit InFlight(std::atomic<size_t>& n) : n_(n) { ++n_; }
  ~InFlight() { --n_; }

 private:
  std::atomic<size_t>& n_;
};
}  // namespace

struct Endpoints::Impl {
  std::string dir;
  ServerOptions opt;
  index::IndexManifest manifest;
  std::unique_ptr<cache::Cache> cache;  // with cache_db
  Clock::time_point started = Clock::now();
  mutable std::atomic<size_t> in_flight{0};

  // Pipelines by (stage1, verifier), opened on first use. The map lock is held only
  // to find the slot; opening (which can take seconds) holds the slot's own lock.
  struct Slot {
    std::mutex open_lock;
    std::shared_ptr<const search::Pipeline> pipeline;
  };
  std::mutex slots_lock;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Slot>> slots;

  std::shared_ptr<const search::Pipeline> pipeline(const std::string& stage1, const std::string& verifier) {
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
    return {stage1, requested_verifier(body, opt.pipeline.verifier)};
  }

  // The request's "verifier", else the server's; a learned one only if it is the server's own.
  static std::string requested_verifier(const json& body, const std::string& server_verifier) {
    std::string verifier = string_field(body, "verifier", &server_verifier);
    if (!is_builtin_verifier(verifier) && verifier != server_verifier)
      throw HttpError(kBadRequest,
                      cat("verifier '", verifier, "' is not available: requests may choose none, f0, f1, f2",
                          is_builtin_verifier(server_verifier) ? "" : " or '" + server_verifier + "'",
                          " (learned verifiers are loaded by the server: --verifier)"));
    return verifier;
  }

  // /verify needs texts encoded, not the index: where the index has no token vectors,
  // or there is no index, it runs on an encoder and verifiers of its own, opened on
  // first use (the encoder once, shared by every verifier a request names).
  bool index_verifies = false;  // the index has token vectors: /verify goes through its pipeline
  std::string text_encoder_spec, text_verifier_default;
  std::mutex text_lock;
  std::shared_ptr<const encode::Encoder> text_encoder;
  std::string text_encoder_identity;  // computed on first use, for trained verifiers' checks
  std::map<std::string, std::shared_ptr<const search::TextVerifier>> text_verifiers;

  std::shared_ptr<const search::TextVerifier> text_verifier(const std::string& name) {
    std::lock_guard lock(text_lock);
    auto& slot = text_verifiers[name];
    if (slot) return slot;
    if (!text_encoder) text_encoder = encode::make_encoder(text_encoder_spec);
    std::string spec = name;  // "auto" as a pipeline's: the default verifier where it reads these maps, else F1
    std::shared_ptr<const verify::Verifier> v = search::open_verifier_for(spec, *text_encoder, &text_encoder_identity);
    auto threshold = search::verdict_threshold(opt.pipeline.reject_below, *v);
    slot = std::make_shared<const search::TextVerifier>(text_encoder, std::move(v), threshold, opt.pipeline.threads);
    log("serve: /verify opened ", slot->describe());
    return slot;
  }


  // /search of a server without an index.
  void need_index(const char* endpoint) const {
    if (dir.empty())
      throw HttpError(kNotFound, cat("no such endpoint: POST ", endpoint, " (this server has no index: --index)"));
  }

  json search(const json& body) {
    need_index("/search");
    check_fields(body, {"query", "k", "stage1", "verifier"});
    std::string query = text_field(body, "query", opt.max_query_chars);
    size_t k = 10;
    if (auto it = body.find("k"); it != body.end() && !it->is_null()) {
      if (!it->is_number_integer())
        throw HttpError(kBadRequest, cat("field 'k' must be an integer, got ", it->type_name()));
      // An unsigned value above INT64_MAX reads as negative through get<int64_t>().
      if (it->is_number_unsigned() && it->get<uint64_t>() > opt.max_k)
        throw HttpError(kUnprocessable,
                        cat("field 'k' is ", it->get<uint64_t>(), ", the limit is ", opt.max_k, " (--max-k)"));
      auto v = it->get<int64_t>();
      if (v < 1) throw HttpError(kBadRequest, cat("field 'k' must be at least 1, got ", v));
      if (uint64_t(v) > opt.max_k)
        throw HttpError(kUnprocessable, cat("field 'k' is ", v, ", the limit is ", opt.max_k, " (--max-k)"));
      k = size_t(v);
    }
    // Stage 1 passes the server's --candidates: a larger k would come back short.
    if (k > opt.pipeline.candidates)
      throw HttpError(kUnprocessable, cat("field 'k' is ", k, ", above the server's --candidates ",
                                          opt.pipeline.candidates, " (stage 1 passes only that many)"));
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
    std::string query = text_field(body, "query", opt.max_query_chars);
    auto it = body.find("candidates");
    if (it == body.end() || it->is_null())
      throw HttpError(kBadRequest, "missing field 'candidates' (an array of strings)");
    if (!it->is_array())
      throw HttpError(kBadRequest, cat("field 'candidates' must be an array of strings, got ", it->type_name()));
    if (it->size() > opt.max_candidates)
      throw HttpError(kUnprocessable, cat("field 'candidates' has ", it->size(), " entries, the limit is ",
                                          opt.max_candidates, " (--max-candidates)"));
    std::vector<std::string> candidates;
    for (size_t i = 0; i < it->size(); ++i) {
      const auto& c = (*it)[i];
      if (!c.is_string())
        throw HttpError(kBadRequest, cat("candidates[", i, "] must be a string, got ", c.type_name()));
      candidates.push_back(c.get<std::string>());
    }
    std::string verifier = requested_verifier(body, index_verifies ? opt.pipeline.verifier : text_verifier_default);
    if (verifier == "none")
      throw HttpError(kBadRequest,
                      "verification needs a verifier: pass \"verifier\" (f0, f1, f2, or the server's own "
                      "--verifier) or start the server with --verifier");
    auto start = Clock::now();
    std::vector<search::Verification> verified;
    std::string described;
    if (index_verifies) {
      auto p = pipeline(opt.pipeline.stage1, verifier);
      if (!candidates.empty()) verified = p->verify(query, candidates);
      described = p->describe();
    } else {
      auto tv = text_verifier(verifier);
      if (!candidates.empty()) verified = tv->verify(query, candidates);
      described = tv->describe();
    }
    json results = json::array();
    for (const auto& v : verified) {
      json j = {{"score", v.score}};
      if (!v.verdict.empty()) j["verdict"] = v.verdict;
      results.push_back(std::move(j));
    }
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return {{"query", query},
            {"pipeline", described},
            {"results", std::move(results)},
            {"latency_ms", {{"total", ms}}}};
  }

  json health(size_t served) const {
    json out = {{"status", "ok"},
                {"in_flight", in_flight.load()},
                {"served", served},
                {"uptime_s", std::chrono::duration<double>(Clock::now() - started).count()}};
    if (!dir.empty()) {
      json parts = json::array();
      for (const auto& [name, file] : manifest.parts) parts.push_back(name);
      out["docs"] = manifest.docs;
      out["parts"] = std::move(parts);
      out["default"] = cat("stage1=", opt.pipeline.stage1, ",verifier=", opt.pipeline.verifier);
    }
    if (cache) {  // which verifier decides a hit, and at what threshold, as /cache/stats says
      const auto stats = cache->stats();
      out["cache"] = {{"path", opt.cache_db},
                      {"entries", stats.entries},
                      {"verifier", stats.verifier},
                      {"threshold", stats.default_threshold}};
    }
    return out;
  }
};

Endpoints::Endpoints(std::string index_dir, ServerOptions options) : impl_(std::make_unique<Impl>()) {
  validate(options);
  auto& m = *impl_;
  m.dir = std::move(index_dir);
  m.opt = std::move(options);
  std::string asked_verifier = m.opt.pipeline.verifier;  // before "auto" resolves to what the index allows
  VERITY_CHECK(!m.dir.empty() || !m.opt.cache_db.empty(), ConfigError,
               "the server needs an index (--index) or a cache database (--cache)");
  if (!m.dir.empty()) {
    m.manifest = index::read_index_manifest(m.dir);
    const std::pair<std::string, std::string> asked{m.opt.pipeline.stage1, m.opt.pipeline.verifier};
    const auto first = m.pipeline(asked.first, asked.second);
    const auto& opened = first->options();
    // "auto" became what the index allows: requests that leave stage1/verifier out, and
    // those that name the same, share this pipeline under its resolved names.
    m.opt.pipeline.stage1 = opened.stage1;
    m.opt.pipeline.verifier = opened.verifier;
    if (asked != std::pair{opened.stage1, opened.verifier}) {
      std::lock_guard lock(m.slots_lock);
      m.slots[{opened.stage1, opened.verifier}] = m.slots[asked];
      m.slots.erase(asked);
    }
  }
  if (!m.opt.cache_db.empty()) {
    auto o = m.opt.cache;
    o.max_prompt_chars = m.opt.max_query_chars;
    m.cache = std::make_unique<cache::Cache>(m.opt.cache_db, o);
  }
  // /verify: through the index where it holds token vectors; else on the encoder the
  // server names (--encoder), the index records, or the cache uses, and the verifier
  // asked for (the cache's where there is no index).
  m.index_verifies = !m.dir.empty() && m.manifest.parts.count("tokens") > 0;
  if (!m.index_verifies) {
    if (m.dir.empty()) {
      const auto stats = m.cache->stats();
      m.text_encoder_spec = stats.encoder;
      m.text_verifier_default = m.opt.cache.verifier;
    } else {
      auto recorded = m.manifest.specs.find("encoder");
      m.text_encoder_spec = !m.opt.pipeline.encoder.empty() ? m.opt.pipeline.encoder
                            : recorded != m.manifest.specs.end() ? recorded->second
                                                                 : search::TextVerifierOptions{}.encoder;
      m.text_verifier_default = asked_verifier;
    }
  }
}

Endpoints::~Endpoints() = default;

Reply Endpoints::search(std::string_view body) {
  InFlight counted(impl_->in_flight);
  return answer([&] { return impl_->search(parse_body(body)); });
}

Reply Endpoints::verify(std::string_view body) {
  InFlight counted(impl_->in_flight);
  return answer([&] { return impl_->verify(parse_body(body)); });
}

Reply Endpoints::health(size_t requests_served) const {
  InFlight counted(impl_->in_flight);
  return answer([&] { return impl_->health(requests_served); });
}

std::vector<Route> Endpoints::routes(std::function<size_t()> served) {
  std::vector<Route> routes;
  if (!impl_->dir.empty()) routes.push_back({"POST", "/search", [this](const Request& r) { return search(r.body); }});
  routes.push_back({"POST", "/verify", [this](const Request& r) { return verify(r.body); }});
  routes.push_back({"GET", "/health", [this, served](const Request&) { return health(served()); }});
  if (impl_->cache) {
    cache::Cache& c = *impl_->cache;
    const CacheLimits limits{impl_->opt.max_query_chars};
    // Each counted as in flight, like the endpoints above.
    auto counted = [this](auto handler) {
      return [this, handler](const Request& r) {
        InFlight in_flight(impl_->in_flight);
        return handler(r);
      };
    };
    routes.push_back({"POST", "/cache/put", counted([&c, limits](const Request& r) {
                        return cache_put(c, limits, r.body);
                      })});
    routes.push_back({"POST", "/cache/lookup", counted([&c, limits](const Request& r) {
                        return cache_lookup(c, limits, r.body);
                      })});
    routes.push_back(
        {"DELETE", "/cache/entries/{id}", counted([&c](const Request& r) { return cache_remove(c, r.param); })});
    routes.push_back({"POST", "/cache/clear", counted([&c](const Request& r) { return cache_clear(c, r.body); })});
    routes.push_back({"GET", "/cache/stats", counted([&c](const Request&) { return cache_stats(c); })});
  }
  return routes;
}

}  // namespace verity::serve
