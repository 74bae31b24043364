#include "serve/cache_handlers.hpp"

#include <cmath>
#include <limits>
#include <optional>

#include "cache/cache.hpp"
#include "cache/detail/cache_json.hpp"
#include "serve/detail/request_json.hpp"

namespace verity::serve {
namespace {
using namespace detail;

std::string namespace_field(const json& body) {
  static const std::string kDefault = cache::kDefaultNamespace;
  std::string ns = string_field(body, "namespace", &kDefault);
  if (ns.empty()) throw HttpError(kBadRequest, "field 'namespace' must not be empty");
  if (ns.size() > cache::kMaxNamespaceBytes)
    throw HttpError(kUnprocessable,
                    cat("field 'namespace' has ", ns.size(), " bytes, the limit is ", cache::kMaxNamespaceBytes));
  return ns;
}

// A number field or nullopt when absent/null; 400 for another type or a value outside [lo, hi].
std::optional<double> number_field(const json& body, const char* field, double lo, double hi, bool lo_open) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) throw HttpError(kBadRequest, cat("field '", field, "' must be a number, got ", it->type_name()));
  double v = it->get<double>();
  bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
  if (!ok)
    throw HttpError(kBadRequest, cat("field '", field, "' must be in ", lo_open ? "(" : "[", lo, ", ", hi, "], got ",
                                     it->dump()));
  return v;
}
}  // namespace

Reply cache_put(cache::Cache& cache, const CacheLimits& limits, std::string_view text) {
  return answer([&] {
    json body = parse_body(text);
    check_fields(body, {"prompt", "response", "namespace", "metadata", "ttl_s"});
    std::string prompt = text_field(body, "prompt", limits.max_prompt_chars);
    std::string response = string_field(body, "response", nullptr);
    cache::PutOptions o;
    o.ns = namespace_field(body);
    if (auto it = body.find("metadata"); it != body.end() && !it->is_null()) {
      if (!it->is_object())
        throw HttpError(kBadRequest, cat("field 'metadata' must be a JSON object, got ", it->type_name()));
      o.metadata = dump(*it);
    }
    o.ttl_s = number_field(body, "ttl_s", 0, 3.2e9, true);
    auto r = cache.put(prompt, response, o);
    return cache::detail::put_json(r);
  });
}

Reply cache_lookup(cache::Cache& cache, const CacheLimits& limits, std::string_view text) {
  return answer([&] {
    json body = parse_body(text);
    check_fields(body, {"prompt", "namespace", "min_probability"});
    std::string prompt = text_field(body, "prompt", limits.max_prompt_chars);
    cache::LookupOptions o;
    o.ns = namespace_field(body);
    if (auto p = number_field(body, "min_probability", 0, 1, false)) o.min_probability = float(*p);
    return cache::detail::lookup_json(cache.lookup(prompt, o));
  });
}

Reply cache_remove(cache::Cache& cache, std::string_view id_text) {
  return answer([&] {
    int64_t id = 0;
    bool ok = !id_text.empty() && id_text.size() <= 18;
    for (char c : id_text) ok = ok && c >= '0' && c <= '9';
    if (!ok) throw HttpError(kBadRequest, cat("entry id '", id_text.substr(0, 40), "' is not a positive integer"));
    for (char c : id_text) id = id * 10 + (c - '0');
    if (!cache.remove(id)) throw HttpError(kNotFound, cat("no cache entry with id ", id));
    return json{{"id", id}, {"removed", true}};
  });
}

Reply cache_clear(cache::Cache& cache, std::string_view text) {
  return answer([&] {
    json body = parse_body(text);
    check_fields(body, {"namespace"});
    std::string ns = namespace_field(body);
    size_t n = cache.clear(ns);
    return json{{"namespace", ns}, {"removed", n}};
  });
}

Reply cache_stats(const cache::Cache& cache) {
  return answer([&] { return cache::detail::stats_json(cache.stats()); });
}

}  // namespace verity::serve
