// verity.Cache (the verified semantic cache, src/cache) and its lookup result.
#include <pybind11/stl.h>

#include <mutex>

#include "cache/cache.hpp"
#include "cache/detail/cache_json.hpp"
#include "common.hpp"

namespace verity::python {
namespace {

// close() drops the handle; a call already running keeps its own reference,
// so the database closes (and saves its graphs) when the last call returns.
class PyCache {
 public:
  PyCache(const std::string& path, cache::CacheOptions options)
      : path_(path), cache_(std::make_shared<cache::Cache>(path, std::move(options))) {}

  std::shared_ptr<cache::Cache> get() const {
    std::lock_guard lock(mutex_);
    VERITY_CHECK(cache_, Error, "verity.Cache(" + path_ + ") is closed");
    return cache_;
  }
  void close() {
    std::shared_ptr<cache::Cache> last;
    {
      std::lock_guard lock(mutex_);
      last.swap(cache_);
    }
    py::gil_scoped_release release;  // the destructor writes the graphs
    last.reset();
  }
  bool closed() const {
    std::lock_guard lock(mutex_);
    return !cache_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  mutable std::mutex mutex_;
  std::shared_ptr<cache::Cache> cache_;
};

std::string metadata_text(const py::object& metadata) {
  if (metadata.is_none()) return "{}";
  VERITY_CHECK(py::isinstance<py::dict>(metadata), ConfigError, "metadata must be a dict (a JSON object)");
  return py::module_::import("json").attr("dumps")(metadata).cast<std::string>();
}

const cache::Candidate* served(const cache::LookupResult& r) { return r.hit && r.best ? &*r.best : nullptr; }

}  // namespace

void bind_cache(py::module_& m) {
  py::class_<cache::LookupResult>(m, "CacheLookup", R"(The answer of Cache.lookup.

A hit carries the cached entry served (.id, .prompt: the cached prompt that
matched, .response, .metadata); on a miss those are None and .best describes
the nearest candidate that lost, and .reason says why.)")
      .def_readonly("hit", &cache::LookupResult::hit, "True when a cached answer is served.")
      .def_readonly("reason", &cache::LookupResult::reason,
                    "hit: 'exact' or 'verified'; miss: 'empty', 'below_cosine_floor' or 'below_threshold'.")
      .def_property_readonly(
          "id", [](const cache::LookupResult& r) -> std::optional<int64_t> {
            if (auto* c = served(r)) return c->entry.id;
            return std::nullopt;
          },
          "Entry id served, or None.")
      .def_property_readonly(
          "response", [](const cache::LookupResult& r) -> std::optional<std::string> {
            if (auto* c = served(r)) return c->entry.response;
            return std::nullopt;
          },
          "The cached response served, or None.")
      .def_property_readonly(
          "prompt", [](const cache::LookupResult& r) -> std::optional<std::string> {
            if (auto* c = served(r)) return c->entry.prompt;
            return std::nullopt;
          },
          "The cached prompt that matched, or None.")
      .def_property_readonly(
          "metadata", [](const cache::LookupResult& r) -> py::object {
            if (auto* c = served(r)) return to_python(cache::detail::metadata_json(c->entry.metadata));
            return py::none();
          },
          "The served entry's metadata (dict), or None.")
      .def_property_readonly(
          "probability", [](const cache::LookupResult& r) -> std::optional<float> {
            if (r.best) return r.best->probability;
            return std::nullopt;
          },
          "Verifier probability of the entry served (hit) or of the best candidate (miss); None when unverified.")
      .def_property_readonly(
          "similarity", [](const cache::LookupResult& r) -> std::optional<float> {
            if (r.best) return r.best->similarity;
            return std::nullopt;
          },
          "Pooled cosine of that entry, or None.")
      .def_readonly("threshold", &cache::LookupResult::threshold, "The probability threshold applied.")
      .def_readonly("threshold_source", &cache::LookupResult::threshold_source,
                    "'request' (min_probability), 'verifier' (its calibrated default) or 'fallback'.")
      .def_property_readonly(
          "best", [](const cache::LookupResult& r) { return to_python(cache::detail::lookup_json(r).at("best")); },
          "On a miss, the candidate that lost (dict: id, prompt, probability, similarity), else None.")
      .def_property_readonly(
          "latency_ms", [](const cache::LookupResult& r) { return to_python(cache::detail::lookup_json(r).at("latency_ms")); },
          "Stage timings in ms (dict: exact, encode, ann, fetch, verify, total).")
      .def(
          "to_dict", [](const cache::LookupResult& r) { return to_python(cache::detail::lookup_json(r)); },
          "The JSON object of POST /cache/lookup, as a dict.")
      .def("__bool__", [](const cache::LookupResult& r) { return r.hit; })
      .def("__repr__", [](const cache::LookupResult& r) {
        auto j = cache::detail::lookup_json(r);
        return "<verity.CacheLookup hit=" + std::string(r.hit ? "True" : "False") + " reason=" + r.reason +
               " probability=" + j.at("probability").dump() + ">";
      });

  const cache::CacheOptions d;
  py::class_<PyCache>(m, "Cache", R"(The verified semantic cache, stored in one SQLite file (WAL mode).

An answer cached for one prompt is served for a new prompt only when the
verifier, reading the token similarity map of (new prompt, cached prompt),
gives a probability of "same meaning" at or above the threshold: the
lookup's min_probability, else the verifier's calibrated default. Lookup
order: exact text, then the nearest entries by pooled cosine (at most
`candidates`, none below `cosine_floor`), then the verifier. An acknowledged
put is committed before it returns. Thread-safe: lookups run in parallel,
writes are serialized; calls release the GIL. Use as a context manager or
call close() to save the ANN graphs for a fast reopen.)")
      .def(py::init([](const std::string& path, const std::string& encoder, const std::string& verifier,
                       size_t candidates, float cosine_floor, size_t max_entries, size_t max_bytes,
                       const std::string& durability, bool create) {
             cache::CacheOptions o;
             o.encoder = encoder;
             o.verifier = verifier;
             o.candidates = candidates;
             o.cosine_floor = cosine_floor;
             o.max_entries = max_entries;
             o.max_bytes = max_bytes;
             o.durability = durability;
             o.create = create;
             return without_gil([&] { return std::make_unique<PyCache>(path, std::move(o)); });
           }),
           py::arg("path"), py::kw_only(), py::arg("encoder") = d.encoder, py::arg("verifier") = d.verifier,
           py::arg("candidates") = d.candidates, py::arg("cosine_floor") = d.cosine_floor,
           py::arg("max_entries") = d.max_entries, py::arg("max_bytes") = d.max_bytes,
           py::arg("durability") = d.durability, py::arg("create") = d.create)
      .def(
          "put",
          [](const PyCache& self, const std::string& prompt, const std::string& response, const std::string& ns,
             const py::object& metadata, std::optional<double> ttl_s) {
            cache::PutOptions o;
            o.ns = ns;
            o.metadata = metadata_text(metadata);
            o.ttl_s = ttl_s;
            auto c = self.get();
            return without_gil_short([&] { return c->put(prompt, response, o); }).id;
          },
          py::arg("prompt"), py::arg("response"), py::kw_only(), py::arg("namespace") = cache::kDefaultNamespace,
          py::arg("metadata") = py::none(), py::arg("ttl_s") = py::none(),
          "Caches response for prompt and returns the entry id. The same prompt again in a namespace replaces "
          "its entry; ttl_s: seconds until it expires (never served after).")
      .def(
          "put_many",
          [](const PyCache& self, const std::vector<std::pair<std::string, std::string>>& items, const std::string& ns,
             std::optional<double> ttl_s) {
            std::vector<cache::PutRequest> requests(items.size());
            for (size_t i = 0; i < items.size(); ++i) {
              requests[i].prompt = items[i].first;
              requests[i].response = items[i].second;
              requests[i].options.ns = ns;
              requests[i].options.ttl_s = ttl_s;
            }
            auto c = self.get();
            auto results = without_gil([&] { return c->put_batch(requests); });
            std::vector<int64_t> ids;
            ids.reserve(results.size());
            for (const auto& r : results) ids.push_back(r.id);
            return ids;
          },
          py::arg("items"), py::kw_only(), py::arg("namespace") = cache::kDefaultNamespace,
          py::arg("ttl_s") = py::none(),
          "Caches (prompt, response) pairs, encoded in parallel batches; returns their ids in order.")
      .def(
          "lookup",
          [](const PyCache& self, const std::string& prompt, const std::string& ns, std::optional<float> min_probability) {
            cache::LookupOptions o;
            o.ns = ns;
            o.min_probability = min_probability;
            auto c = self.get();
            return without_gil_short([&] { return c->lookup(prompt, o); });
          },
          py::arg("prompt"), py::kw_only(), py::arg("namespace") = cache::kDefaultNamespace,
          py::arg("min_probability") = py::none(), "A CacheLookup: the hit served, or the miss and why.")
      .def(
          "get",
          [](const PyCache& self, int64_t id) -> py::object {
            auto c = self.get();
            auto e = without_gil_short([&] { return c->get(id); });
            if (!e) return py::none();
            nlohmann::json j = {{"id", e->id},
                                {"namespace", e->ns},
                                {"prompt", e->prompt},
                                {"response", e->response},
                                {"metadata", cache::detail::metadata_json(e->metadata)},
                                {"created_ms", e->created_ms},
                                {"expires_ms", e->expires_ms ? nlohmann::json(*e->expires_ms) : nlohmann::json(nullptr)}};
            return to_python(j);
          },
          py::arg("id"), "The entry (dict) with this id, or None.")
      .def(
          "remove",
          [](const PyCache& self, int64_t id) {
            auto c = self.get();
            return without_gil_short([&] { return c->remove(id); });
          },
          py::arg("id"), "Removes an entry; False when there was none.")
      .def(
          "clear",
          [](const PyCache& self, const std::string& ns) {
            auto c = self.get();
            return without_gil_short([&] { return c->clear(ns); });
          },
          py::arg("namespace") = cache::kDefaultNamespace, "Removes every entry of a namespace; returns how many.")
      .def(
          "stats", [](const PyCache& self) { return to_python(cache::detail::stats_json(self.get()->stats())); },
          "The object of GET /cache/stats, as a dict.")
      .def("close", &PyCache::close, "Saves the ANN graphs and closes the database; later calls raise verity.Error.")
      .def_property_readonly("closed", &PyCache::closed)
      .def_property_readonly("path", &PyCache::path)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyCache& self, py::args) { self.close(); })
      .def("__repr__", [](const PyCache& self) {
        return "<verity.Cache " + self.path() + (self.closed() ? " (closed)>" : ">");
      });
}

}  // namespace verity::python
