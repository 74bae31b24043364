// One server endpoint's JSON body handling, called as the plain function the HTTP
// route calls (no sockets), over a tiny index of tests/fixtures/tiny_beir (with
// dense and token parts when models/use-lite is converted). Which endpoint comes
// from VERITY_FUZZ_ENDPOINT (one harness per endpoint). Properties: the status is
// 200 or a 4xx (a 500 is a bug), and the body is a JSON object with "results" or
// an "error" string.
#include <nlohmann/json.hpp>
#include <string_view>

#include "fuzz_support.hpp"
#include "serve/endpoints.hpp"
#include "tiny_models.hpp"

using namespace verity;

namespace {
struct EndpointTarget {
  std::string_view name;
  serve::Reply (*call)(serve::Endpoints&, std::string_view body);
};
constexpr EndpointTarget kTargets[] = {
    {"search", [](serve::Endpoints& e, std::string_view b) { return e.search(b); }},
    {"verify", [](serve::Endpoints& e, std::string_view b) { return e.verify(b); }},
    // The cache endpoints (/cache/*) are added here once src/cache is merged.
};

const EndpointTarget& target() {
  for (const auto& t : kTargets)
    if (t.name == VERITY_FUZZ_ENDPOINT) return t;
  fuzz::property_failed("unknown VERITY_FUZZ_ENDPOINT");
}

serve::Endpoints& endpoints() {
  static serve::Endpoints e = [] {
    const auto index = fuzz::make_tiny_index(fuzz::scratch_dir() + "/index");
    serve::ServerOptions o;
    o.max_k = 20;
    o.max_candidates = 8;
    o.max_query_chars = 256;
    o.pipeline.threads = 1;
    return serve::Endpoints(index, o);
  }();
  return e;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const EndpointTarget& t = target();
  const serve::Reply r = t.call(endpoints(), std::string_view(reinterpret_cast<const char*>(data), size));
  VERITY_FUZZ_EXPECT(r.status == 200 || (r.status >= 400 && r.status < 500), t.name, ": status ", r.status,
                     ": ", r.body);
  nlohmann::json body;
  try {
    body = nlohmann::json::parse(r.body);
  } catch (const std::exception& e) {
    fuzz::property_failed(cat(t.name, ": reply is not JSON: ", e.what()));
  }
  VERITY_FUZZ_EXPECT(body.is_object(), t.name, ": reply is not an object");
  if (r.status == 200) {
    VERITY_FUZZ_EXPECT(body.contains("results") && body["results"].is_array(), t.name, ": no results");
  } else {
    VERITY_FUZZ_EXPECT(body.contains("error") && body["error"].is_string(), t.name, ": no error message");
  }
  return 0;
}
