// One server endpoint's request handling, called as the plain function its HTTP
// route calls (no sockets): the routes of serve::Endpoints for a tiny index of
// tests/fixtures/tiny_beir (with dense and token parts when models/use-lite is
// converted) and a cache database (the tiny GloVe model, F1, at most 64 entries a
// namespace). VERITY_FUZZ_ENDPOINT picks the route (one harness each); the input is
// its JSON body, or for DELETE /cache/entries/{id} the path parameter. The cache
// keeps what earlier inputs put, so lookups, removals and clears meet real entries.
// Properties: the status is 200 or a 4xx (a 500 is a bug); the body is a JSON
// object with an "error" string exactly when the status is not 200, and a 200 from
// /search or /verify has "results".
#include <nlohmann/json.hpp>
#include <string_view>

#include "fuzz_support.hpp"
#include "serve/endpoints.hpp"
#include "tiny_models.hpp"

using namespace verity;

namespace {
struct EndpointTarget {
  std::string_view name, method, path;
  bool param;  // the input is the path parameter, not the body
};
constexpr EndpointTarget kTargets[] = {
    {"search", "POST", "/search", false},
    {"verify", "POST", "/verify", false},
    {"cache_put", "POST", "/cache/put", false},
    {"cache_lookup", "POST", "/cache/lookup", false},
    {"cache_remove", "DELETE", "/cache/entries/{id}", true},
    {"cache_clear", "POST", "/cache/clear", false},
};

const EndpointTarget& target() {
  for (const auto& t : kTargets)
    if (t.name == VERITY_FUZZ_ENDPOINT) return t;
  fuzz::property_failed("unknown VERITY_FUZZ_ENDPOINT");
}

struct Served {
  std::unique_ptr<serve::Endpoints> endpoints;
  serve::Route route;
};

Served& served(const EndpointTarget& t) {
  static Served s = [&t] {
    serve::ServerOptions o;
    o.max_k = 20;
    o.max_candidates = 8;
    o.max_query_chars = 256;
    o.pipeline.threads = 1;
    o.cache_db = fuzz::scratch_dir() + "/cache.sqlite";
    o.cache.encoder = "glove:" + fuzz::make_tiny_glove(fuzz::scratch_dir() + "/base");
    o.cache.verifier = "f1";
    o.cache.max_entries = 64;
    o.cache.durability = "normal";  // no fsync per put: the harness never crashes the store
    Served out;
    out.endpoints = std::make_unique<serve::Endpoints>(fuzz::make_tiny_index(fuzz::scratch_dir() + "/index"), o);
    for (auto& r : out.endpoints->routes([] { return size_t(0); }))
      if (r.method == t.method && r.path == t.path) out.route = std::move(r);
    if (!out.route.handle) fuzz::property_failed(cat("no route ", t.method, " ", t.path));
    for (auto& r : out.endpoints->routes([] { return size_t(0); }))  // entries to find, remove and clear
      if (r.path == "/cache/put")
        for (const char* body : {R"({"prompt": "the cat sat", "response": "on the mat"})",
                                 R"({"prompt": "measles vaccine", "response": "r", "namespace": "n"})"})
          r.handle({body, {}});
    return out;
  }();
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const EndpointTarget& t = target();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  serve::Request request;
  (t.param ? request.param : request.body) = input;
  const serve::Reply r = served(t).route.handle(request);
  VERITY_FUZZ_EXPECT(r.status == 200 || (r.status >= 400 && r.status < 500), t.name, ": status ", r.status,
                     ": ", r.body);
  nlohmann::json body;
  try {
    body = nlohmann::json::parse(r.body);
  } catch (const std::exception& e) {
    fuzz::property_failed(cat(t.name, ": reply is not JSON: ", e.what()));
  }
  VERITY_FUZZ_EXPECT(body.is_object(), t.name, ": reply is not an object");
  VERITY_FUZZ_EXPECT(body.contains("error") == (r.status != 200), t.name, ": status ", r.status, " with ", r.body);
  if (r.status != 200) {
    VERITY_FUZZ_EXPECT(body["error"].is_string(), t.name, ": no error message");
  } else if (t.name == "search" || t.name == "verify") {
    VERITY_FUZZ_EXPECT(body.contains("results") && body["results"].is_array(), t.name, ": no results");
  }
  return 0;
}
