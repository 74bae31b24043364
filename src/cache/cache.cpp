#include "cache/cache.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "cache/store.hpp"
#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "encode/registry.hpp"
#include "index/dense_hnsw.hpp"
#include "text/surface.hpp"
#include "text/utf8.hpp"
#include "text/word_kinds.hpp"
#include "verify/pair_scoring.hpp"
#include "verify/verifier.hpp"

namespace verity::cache {
namespace {
using Clock = std::chrono::steady_clock;
constexpr const char* kDefaultEncoder = "use-lite";
constexpr size_t kEncodeBatch = 64;
// Candidates fetched beyond `candidates`, so expired entries among the
// nearest do not shrink the verified set.
constexpr size_t kExpiredSlack = 4;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

size_t code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool live(const std::optional<int64_t>& expires_ms, int64_t now_ms) { return !expires_ms || *expires_ms > now_ms; }

// One encoded text: what the store keeps and the verifier reads.
struct Encoded {
  std::vector<float> pooled, tokens;
  std::vector<uint32_t> ids;
  verify::TextTokens view() const { return {tokens, ids, pooled}; }
};

struct EntryInfo {
  int64_t bytes = 0;
  std::optional<int64_t> expires_ms;
  std::list<int64_t>::iterator lru;
  uint64_t surface = 0;  // surface_key of the prompt
};

struct Namespace {
  NamespaceIndex ann;
  std::unordered_map<int64_t, EntryInfo> entries;
  std::list<int64_t> lru;  // front = most recently used
  size_t bytes = 0;
  // Entries by the surface of their prompt (case, spacing, apostrophes and
  // sentence punctuation aside): such a prompt is a candidate whatever its
  // cosine, which case alone can pull far down ("MARGUERITE WELL MAYBE
  // LATER" / "Marguerite: Well, maybe later.": 0.35).
  std::unordered_map<uint64_t, std::vector<int64_t>> by_surface;
  Namespace(size_t dim, const AnnOptions& o) : ann(dim, o) {}
  void add_surface(int64_t id, uint64_t surface) { by_surface[surface].push_back(id); }
  void drop_surface(int64_t id, uint64_t surface) {
    auto it = by_surface.find(surface);
    if (it == by_surface.end()) return;
    std::erase(it->second, id);
    if (it->second.empty()) by_surface.erase(it);
  }
};

// A hash of text::surface_text, not the text, to keep 80,000 prompts' index
// small; two surfaces that collide only add a candidate the verifier judges.
uint64_t surface_key(std::string_view prompt) {
  const auto surface = text::surface_text(prompt);
  return fnv1a64(surface.data(), surface.size());
}

Entry to_entry(const EntryRecord& r) { return {r.id, r.ns, r.prompt, r.response, r.metadata, r.created_ms, r.expires_ms}; }

void check_namespace(const std::string& ns) {
  VERITY_CHECK(!ns.empty(), ConfigError, "namespace must not be empty");
  VERITY_CHECK(ns.size() <= kMaxNamespaceBytes, ConfigError, "namespace has ", ns.size(), " bytes, the limit is ",
               kMaxNamespaceBytes);
}
}  // namespace

void validate(const CacheOptions& o) {
  VERITY_CHECK(o.candidates >= 1 && o.candidates <= 256, ConfigError, "candidates must be in [1, 256], got ",
               o.candidates);
  VERITY_CHECK(std::isfinite(o.cosine_floor) && o.cosine_floor >= -1 && o.cosine_floor <= 1, ConfigError,
               "cosine_floor must be in [-1, 1], got ", o.cosine_floor);
  VERITY_CHECK(std::isfinite(o.fallback_threshold), ConfigError, "fallback_threshold must be finite");
  VERITY_CHECK(o.ann.exact_limit >= 1, ConfigError, "ann exact_limit must be positive");
}

struct Cache::Impl {
  CacheOptions opt;
  std::unique_ptr<Store> store;
  std::unique_ptr<encode::Encoder> encoder;
  // encode::encoder_identity, hashed from the model files the first time a
  // verifier trained on one encoder needs checking (never for F0-F2).
  std::once_flag identity_once;
  std::string identity;
  void check_maps_fit(const verify::Verifier& v) {
    if (v.encoder().empty()) return;
    std::call_once(identity_once, [&] { identity = encode::encoder_identity(*encoder); });
    verify::check_trained_encoder(v, identity, encoder->spec());
  }
  std::unique_ptr<verify::Verifier> verifier;
  size_t dim = 0;
  float default_threshold = 0;
  std::string threshold_source, index_source;
  size_t graphs_reloaded = 0, graphs_rebuilt = 0;
  // The database holds the current graphs: no commit since they were loaded.
  bool graphs_saved_current = false;

  // Writers hold write_lock for the whole put/remove, then state_lock
  // exclusively to apply a committed change; lookups hold state_lock shared.
  std::mutex write_lock;
  mutable std::shared_mutex state_lock;
  std::map<std::string, Namespace> namespaces;
  std::unordered_map<int64_t, std::string> ns_of;
  // LRU lists move on lookups, which hold state_lock only shared.
  mutable std::mutex lru_lock;
  // Recency of hits, written to the database with the next commit.
  std::mutex touch_lock;
  std::unordered_map<int64_t, int64_t> pending_touches;

  std::atomic<uint64_t> lookups{0}, hits{0}, exact_hits{0}, misses{0}, puts{0}, replaced{0}, removed{0},
      evicted{0}, expired{0}, damaged{0}, reused_vectors{0};

  encode::EncodeOptions encode_options() const {
    encode::EncodeOptions eo;
    eo.normalize = true;
    eo.batch_size = kEncodeBatch;
    eo.with_tokens = true;
    eo.threads = opt.encoder_threads;
    return eo;
  }

  std::vector<Encoded> encode_texts(std::span<const std::string> texts) const {
    auto enc = encoder->encode(texts, encode_options());
    std::vector<Encoded> out(texts.size());
    for (size_t b = 0; b < texts.size(); ++b) {
      auto p = enc.pooled_row(b);
      out[b].pooled.assign(p.begin(), p.end());
      out[b].tokens = enc.token_block(b);
      out[b].ids = verify::token_identities(enc.token_strings[b]);
    }
    return out;
  }

  // Many texts on put_threads workers, each encoding a contiguous share with
  // encoder_threads torch threads: short texts leave torch's own intra-op
  // parallelism mostly idle, separate calls keep every core busy.
  std::vector<Encoded> encode_many(std::span<const std::string> texts) const {
    size_t workers = opt.put_threads ? opt.put_threads : std::max(1u, std::thread::hardware_concurrency());
    workers = std::min(workers, std::max<size_t>(1, texts.size() / kEncodeBatch));
    if (workers <= 1) return encode_texts(texts);
    std::vector<std::vector<Encoded>> parts(workers);
    std::vector<std::exception_ptr> errors(workers);
    std::vector<std::thread> pool;
    const size_t share = (texts.size() + workers - 1) / workers;
    for (size_t w = 0; w < workers; ++w)
      pool.emplace_back([&, w] {
        try {
          size_t b = w * share, e = std::min(texts.size(), b + share);
          if (b < e) parts[w] = encode_texts(texts.subspan(b, e - b));
        } catch (...) {
          errors[w] = std::current_exception();
        }
      });
    for (auto& t : pool) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    std::vector<Encoded> out;
    out.reserve(texts.size());
    for (auto& part : parts)
      for (auto& e : part) out.push_back(std::move(e));
    return out;
  }

  // The vectors of every prompt of a put group: a prompt already stored in its
  // namespace, or met earlier in the group, reuses those vectors (the encoder
  // is deterministic, and the stored fp16 token rows round-trip exactly), so
  // only new texts are encoded. A damaged stored row is encoded afresh.
  std::vector<Encoded> vectors_for(const std::vector<std::string>& prompts, const std::vector<std::string>& nss) {
    const int64_t now_ms = unix_ms();
    std::vector<Encoded> out(prompts.size());
    std::unordered_map<std::string_view, size_t> first;  // prompt -> its first index in the group
    std::vector<std::pair<size_t, size_t>> copies;       // (index, index it copies)
    std::vector<std::string> todo;
    std::vector<size_t> where;
    for (size_t i = 0; i < prompts.size(); ++i) {
      if (auto it = first.find(prompts[i]); it != first.end()) {
        copies.emplace_back(i, it->second);
        continue;
      }
      first.emplace(prompts[i], i);
      std::optional<std::pair<EntryRecord, EntryVectors>> row;
      try {
        if (auto exact = store->find_exact(nss[i], prompts[i], now_ms)) row = store->fetch(exact->id);
      } catch (const FormatError&) {
        row.reset();
      }
      if (row) {  // fetch checked the pooled vector's size and checksum
        out[i] = {std::move(row->second.pooled), std::move(row->second.tokens), std::move(row->second.ids)};
        ++reused_vectors;
      } else {
        todo.push_back(prompts[i]);
        where.push_back(i);
      }
    }
    auto encoded = encode_many(todo);
    for (size_t k = 0; k < where.size(); ++k) out[where[k]] = std::move(encoded[k]);
    for (auto [i, j] : copies) out[i] = out[j];
    reused_vectors += copies.size();
    return out;
  }

  Namespace& namespace_for(const std::string& ns) {
    auto it = namespaces.find(ns);
    if (it == namespaces.end()) it = namespaces.emplace(ns, Namespace(dim, opt.ann)).first;
    return it->second;
  }

  void check_prompt(const std::string& prompt) const {
    VERITY_CHECK(!prompt.empty(), ConfigError, "prompt must not be empty");
    VERITY_CHECK(text::holds_content(prompt), ConfigError,
                 "prompt holds no letter, number or symbol (only whitespace or punctuation)");
    if (opt.max_prompt_chars) {
      size_t n = code_points(prompt);
      VERITY_CHECK(n <= opt.max_prompt_chars, ConfigError, "prompt has ", n, " characters, the limit is ",
                   opt.max_prompt_chars);
    }
  }

  void touch(const std::string& ns, int64_t id, int64_t now_ms) {
    {
      std::shared_lock state(state_lock);
      auto n = namespaces.find(ns);
      if (n != namespaces.end()) {
        auto e = n->second.entries.find(id);
        if (e != n->second.entries.end()) {
          std::lock_guard lock(lru_lock);
          n->second.lru.splice(n->second.lru.begin(), n->second.lru, e->second.lru);
        }
      }
    }
    std::lock_guard lock(touch_lock);
    pending_touches[id] = now_ms;
  }

  // --- writes: everything below runs under write_lock ---

  // A change committed to the database, applied to memory afterwards.
  struct Change {
    struct Added {
      int64_t id;
      std::string ns;
      const float* pooled;
      int64_t bytes;
      std::optional<int64_t> expires_ms;
      uint64_t surface;
    };
    std::vector<Added> added;
    std::vector<int64_t> gone;  // removed, evicted or expired
  };

  // In-transaction housekeeping of every commit: hit recency and expiry.
  void begin_commit(Store::Writer& w, Change& change, int64_t now_ms, size_t* expired_count) {
    graphs_saved_current = false;
    std::unordered_map<int64_t, int64_t> touches;
    {
      std::lock_guard lock(touch_lock);
      touches.swap(pending_touches);
    }
    for (const auto& [id, ms] : touches) w.touch(id, ms);
    auto gone = w.expired(now_ms);
    for (const auto& [id, ns] : gone) {
      w.remove(id);
      change.gone.push_back(id);
    }
    if (expired_count) *expired_count = gone.size();
    expired += gone.size();
  }

  // Victims (least recently used first) that bring ns within the caps once
  // `extra_entries`/`extra_bytes` are added; `keep` are never chosen.
  std::vector<int64_t> plan_eviction(const std::string& ns, int64_t extra_entries, int64_t extra_bytes,
                                     const std::unordered_set<int64_t>& keep,
                                     const std::unordered_set<int64_t>& already_gone) const {
    std::vector<int64_t> victims;
    if (!opt.max_entries && !opt.max_bytes) return victims;
    std::shared_lock state(state_lock);
    auto it = namespaces.find(ns);
    int64_t entries = extra_entries, bytes = extra_bytes;
    if (it != namespaces.end()) {
      for (const auto& [id, info] : it->second.entries)
        if (!already_gone.count(id)) ++entries, bytes += info.bytes;
    }
    auto over = [&] {
      return (opt.max_entries && entries > int64_t(opt.max_entries)) || (opt.max_bytes && bytes > int64_t(opt.max_bytes));
    };
    if (!over() || it == namespaces.end()) return victims;
    std::lock_guard lock(lru_lock);
    const auto& n = it->second;
    for (auto r = n.lru.rbegin(); r != n.lru.rend() && over(); ++r) {
      if (keep.count(*r) || already_gone.count(*r)) continue;
      victims.push_back(*r);
      --entries;
      bytes -= n.entries.at(*r).bytes;
    }
    return victims;
  }

  void apply(const Change& change) {
    std::unique_lock state(state_lock);
    for (int64_t id : change.gone) {
      auto it = ns_of.find(id);
      if (it == ns_of.end()) continue;
      auto n_it = namespaces.find(it->second);
      ns_of.erase(it);
      if (n_it == namespaces.end()) continue;
      auto& n = n_it->second;
      if (auto e = n.entries.find(id); e != n.entries.end()) {
        n.bytes -= e->second.bytes;
        n.lru.erase(e->second.lru);
        n.drop_surface(id, e->second.surface);
        n.entries.erase(e);
      }
      n.ann.remove(id);
      if (n.entries.empty()) namespaces.erase(n_it);
    }
    // Per namespace, the last vector of each id, so graph insertion can run in parallel.
    std::map<std::string, std::map<int64_t, const float*>> batches;
    for (const auto& a : change.added) {
      auto& n = namespace_for(a.ns);
      auto [e, fresh] = n.entries.try_emplace(a.id);
      if (fresh) {
        n.lru.push_front(a.id);
        e->second.lru = n.lru.begin();
      } else {
        n.bytes -= e->second.bytes;
        n.lru.splice(n.lru.begin(), n.lru, e->second.lru);
        n.drop_surface(a.id, e->second.surface);
      }
      e->second.surface = a.surface;
      n.add_surface(a.id, a.surface);
      e->second.bytes = a.bytes;
      e->second.expires_ms = a.expires_ms;
      n.bytes += a.bytes;
      ns_of[a.id] = a.ns;
      batches[a.ns][a.id] = a.pooled;
    }
    for (const auto& [ns, batch] : batches) {
      std::vector<int64_t> ids;
      std::vector<float> vecs;
      for (const auto& [id, pooled] : batch) {
        ids.push_back(id);
        vecs.insert(vecs.end(), pooled, pooled + dim);
      }
      namespaces.at(ns).ann.add_batch(ids, vecs, std::thread::hardware_concurrency());
    }
  }

  std::vector<PutResult> put_group(std::span<const PutRequest> requests, const std::vector<Encoded>& encoded) {
    const int64_t now_ms = unix_ms();
    std::vector<PutResult> results(requests.size());
    std::vector<int64_t> bytes(requests.size());
    std::vector<std::optional<int64_t>> expires(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      const auto& r = requests[i];
      const auto& e = encoded[i];
      bytes[i] = int64_t(r.prompt.size() + r.response.size() + r.options.metadata.size() +
                         (e.pooled.size() + e.ids.size()) * 4 + e.tokens.size() * 2);
      VERITY_CHECK(!opt.max_bytes || bytes[i] <= int64_t(opt.max_bytes), ConfigError, "entry of ", bytes[i],
                   " bytes (texts and vectors) exceeds the namespace cap of ", opt.max_bytes, " bytes");
      if (r.options.ttl_s) expires[i] = now_ms + int64_t(std::ceil(*r.options.ttl_s * 1000.0));
      results[i].ns = r.options.ns;
    }
    Change change;
    std::unordered_set<int64_t> gone;
    store->write([&](Store::Writer& w) {
      size_t expired_now = 0;
      begin_commit(w, change, now_ms, &expired_now);
      gone.insert(change.gone.begin(), change.gone.end());
      // Puts in this group per namespace: new entries and byte deltas, for the caps.
      std::map<std::string, std::pair<int64_t, int64_t>> growth;
      std::map<std::string, std::unordered_set<int64_t>> keep;
      for (size_t i = 0; i < requests.size(); ++i) {
        const auto& r = requests[i];
        const auto& e = encoded[i];
        NewEntry ne{r.options.ns, r.prompt, r.response, r.options.metadata, now_ms, expires[i], e.pooled, e.tokens, e.ids};
        auto up = w.upsert(ne, bytes[i]);
        results[i].id = up.id;
        results[i].replaced = up.replaced;
        results[i].expired = expired_now;
        // A replaced entry is counted in memory with its old size (or, put
        // twice in this group, was counted here once already): add the delta.
        auto& [n, b] = growth[r.options.ns];
        if (!up.replaced) ++n;
        b += bytes[i] - (up.replaced ? up.old_bytes : 0);
        keep[r.options.ns].insert(up.id);
        change.added.push_back({up.id, r.options.ns, e.pooled.data(), bytes[i], expires[i], surface_key(r.prompt)});
      }
      for (const auto& [ns, g] : growth) {
        auto victims = plan_eviction(ns, g.first, g.second, keep[ns], gone);
        for (int64_t id : victims) {
          w.remove(id);
          change.gone.push_back(id);
          gone.insert(id);
        }
        for (size_t i = 0; i < requests.size(); ++i)
          if (requests[i].options.ns == ns) results[i].evicted = victims.size();
        evicted += victims.size();
      }
    });
    apply(change);
    for (const auto& r : results) {
      ++puts;
      if (r.replaced) ++replaced;
    }
    return results;
  }

  void check_put(const PutRequest& r) const {
    check_prompt(r.prompt);
    check_namespace(r.options.ns);
    nlohmann::json meta;
    try {
      meta = nlohmann::json::parse(r.options.metadata);
    } catch (const nlohmann::json::parse_error& e) {
      throw ConfigError(cat("metadata is not valid JSON (at byte ", e.byte, ")"));
    }
    VERITY_CHECK(meta.is_object(), ConfigError, "metadata must be a JSON object, got ", meta.type_name());
    if (r.options.ttl_s) {
      double t = *r.options.ttl_s;
      VERITY_CHECK(std::isfinite(t) && t > 0 && t <= 3.2e9, ConfigError, "ttl_s must be a positive number of seconds "
                   "(at most 3.2e9), got ", t);
    }
  }

  // --- lookups ---

  struct Gathered {
    Encoded query;
    std::vector<Neighbor> nearest;  // live entries, best first, at most opt.candidates
    std::vector<int64_t> surface;   // live entries whose prompt has the prompt's surface (at most opt.candidates)
    bool empty = true;               // the namespace has no live entry
  };

  Gathered gather(const std::string& prompt, const std::string& ns, int64_t now_ms, LookupTimings& t) {
    Gathered g;
    auto te = Clock::now();
    std::vector<std::string> one{prompt};
    g.query = std::move(encode_texts(one)[0]);
    t.encode_ms = ms_since(te);
    auto ta = Clock::now();
    const uint64_t surface = surface_key(prompt);
    {
      std::shared_lock state(state_lock);
      auto it = namespaces.find(ns);
      if (it != namespaces.end() && it->second.ann.size() > 0) {
        const auto& n = it->second;
        for (const auto& nb : n.ann.search(g.query.pooled, opt.candidates + kExpiredSlack)) {
          auto e = n.entries.find(nb.id);
          if (e == n.entries.end() || !live(e->second.expires_ms, now_ms)) continue;
          g.empty = false;
          if (g.nearest.size() < opt.candidates) g.nearest.push_back(nb);
        }
      }
      if (it != namespaces.end())
        if (auto s = it->second.by_surface.find(surface); s != it->second.by_surface.end())
          for (int64_t id : s->second) {  // at most `candidates` of them: many variants of "hi" stay cheap
            if (g.surface.size() == opt.candidates) break;
            if (auto e = it->second.entries.find(id);
                e != it->second.entries.end() && live(e->second.expires_ms, now_ms))
              g.surface.push_back(id), g.empty = false;
          }
    }
    t.ann_ms = ms_since(ta);
    return g;
  }

  struct Fetched {
    Neighbor nb;
    EntryRecord record;
    EntryVectors vectors;
  };

  // Stored rows of the candidates at or above the floor, and of the
  // prompt's surface matches whatever their cosine; entries removed or
  // expired since the search are skipped, damaged ones counted and skipped.
  std::vector<Fetched> fetch(const Gathered& g, int64_t now_ms) {
    std::vector<Fetched> out;
    auto add = [&](Neighbor nb, bool surface) {
      try {
        auto row = store->fetch(nb.id);
        if (!row || !live(row->first.expires_ms, now_ms)) return;
        if (surface)  // both pooled vectors are unit length
          nb.cosine = index::inner_product(g.query.pooled.data(), row->second.pooled.data(), dim);
        out.push_back({nb, std::move(row->first), std::move(row->second)});
      } catch (const FormatError& e) {
        ++damaged;
        log("cache: skipping a damaged entry: ", e.what());
      }
    };
    auto surface = [&](int64_t id) { return std::find(g.surface.begin(), g.surface.end(), id) != g.surface.end(); };
    auto nearest = [&](int64_t id) {
      return std::any_of(g.nearest.begin(), g.nearest.end(), [&](const Neighbor& nb) { return nb.id == id; });
    };
    for (const auto& nb : g.nearest)
      if (nb.cosine >= opt.cosine_floor || surface(nb.id)) add(nb, false);
    for (int64_t id : g.surface)
      if (!nearest(id)) add({id, 0.0f}, true);
    return out;
  }

  std::vector<float> score(const verify::Verifier& v, const Encoded& query, const std::vector<Fetched>& cands) const {
    std::vector<verify::TextTokens> views;
    views.reserve(cands.size());
    for (const auto& c : cands) views.push_back({c.vectors.tokens, c.vectors.ids, c.vectors.pooled});
    return verify::score_texts(v, query.view(), views, dim);
  }

  // The candidate a verifier serves: highest score, ties to the higher cosine.
  static size_t best_of(const std::vector<Fetched>& cands, const std::vector<float>& scores) {
    size_t best = 0;
    for (size_t i = 1; i < cands.size(); ++i)
      if (scores[i] > scores[best] || (scores[i] == scores[best] && cands[i].nb.cosine > cands[best].nb.cosine))
        best = i;
    return best;
  }
};

Cache::Cache(const std::string& path, CacheOptions options) : impl_(std::make_unique<Impl>()) {
  validate(options);
  auto& m = *impl_;
  m.opt = std::move(options);
  std::string encoder_name = m.opt.encoder;
  if (encoder_name.empty()) {
    bool exists = verity::file_exists(path) && verity::file_size(path) > 0;
    encoder_name = exists ? Store::read_encoder(path).first : kDefaultEncoder;
  }
  m.encoder = encode::make_encoder(encoder_name);
  m.dim = m.encoder->dim();
  m.verifier = verify::make_verifier(m.opt.verifier);
  m.check_maps_fit(*m.verifier);  // a verifier reads only the maps of the encoder it was trained on
  if (m.verifier->uses_context()) text::WordKinds::english();  // read now, not on the first lookup that swaps a word
  if (auto t = m.verifier->default_threshold()) {
    m.default_threshold = *t;
    m.threshold_source = "verifier";
  } else {
    m.default_threshold = m.opt.fallback_threshold;
    m.threshold_source = "fallback";
  }
  StoreOptions so;
  so.create = m.opt.create;
  so.durability = m.opt.durability;
  so.check = m.opt.check;
  m.store = std::make_unique<Store>(path, encoder_name, m.dim, so);
  m.opt.encoder = encoder_name;

  // Every namespace from the stored vectors: a saved graph is reloaded when
  // it matches the database, else the index is rebuilt. Expired rows are left
  // for the purge below.
  const int64_t now_ms = unix_ms();
  struct Row {
    int64_t id, last_used_ms;
  };
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> vectors;
  std::map<std::string, std::vector<Row>> rows;
  size_t expired_rows = 0;
  m.store->scan([&](const IndexRow& r) {
    if (!live(r.expires_ms, now_ms)) {
      ++expired_rows;
      return;
    }
    auto& n = m.namespace_for(r.ns);
    n.entries[r.id] = {r.bytes, r.expires_ms, {}, surface_key(r.prompt)};
    n.add_surface(r.id, n.entries[r.id].surface);
    n.bytes += size_t(r.bytes);
    m.ns_of[r.id] = r.ns;
    rows[r.ns].push_back({r.id, r.last_used_ms});
    auto& [ids, vecs] = vectors[r.ns];
    ids.push_back(r.id);
    vecs.insert(vecs.end(), r.pooled.begin(), r.pooled.end());
  });
  for (auto& [ns, rs] : rows) {
    auto& n = m.namespaces.at(ns);
    std::sort(rs.begin(), rs.end(), [](const Row& a, const Row& b) {
      return a.last_used_ms != b.last_used_ms ? a.last_used_ms < b.last_used_ms : a.id < b.id;
    });
    for (const auto& r : rs) {
      n.lru.push_front(r.id);
      n.entries.at(r.id).lru = n.lru.begin();
    }
    auto& [ids, vecs] = vectors.at(ns);
    bool reloaded = false;
    if (ids.size() > m.opt.ann.exact_limit) {
      // A graph saved on the last clean close, if no commit came after it;
      // used only when its ids and vectors are exactly the database's.
      try {
        if (auto dump = m.store->load_graph(ns)) {
          reloaded = n.ann.load_graph(std::as_bytes(std::span<const char>(dump->data(), dump->size())), ids, vecs,
                                      cat(path, ": saved graph of namespace '", ns, "'"));
          if (!reloaded) log("cache: the saved graph of namespace '", ns, "' differs from the database; rebuilding");
        }
      } catch (const FormatError& e) {
        log("cache: ", e.what(), "; rebuilding");
      }
      (reloaded ? m.graphs_reloaded : m.graphs_rebuilt)++;
    }
    if (!reloaded) n.ann.add_batch(ids, vecs, std::thread::hardware_concurrency());
    vecs = {};
  }
  m.index_source = m.ns_of.empty() ? "new" : m.graphs_rebuilt || !m.graphs_reloaded ? "rebuilt" : "reloaded";
  m.graphs_saved_current = m.graphs_rebuilt == 0;
  if (expired_rows) {
    Impl::Change change;
    m.store->write([&](Store::Writer& w) { m.begin_commit(w, change, now_ms, nullptr); });
  }
}

Cache::~Cache() {
  // Hit recency not yet written and the namespaces' graphs go out with a last
  // commit; a failure here only costs LRU order and a rebuild on the next open.
  auto& m = *impl_;
  try {
    std::lock_guard lock(m.write_lock);
    bool pending;
    {
      std::lock_guard t(m.touch_lock);
      pending = !m.pending_touches.empty();
    }
    std::vector<std::pair<std::string, std::string>> graphs;
    if (!m.graphs_saved_current || pending)
      for (const auto& [name, n] : m.namespaces)
        if (n.ann.uses_graph()) graphs.emplace_back(name, n.ann.serialize_graph());
    if (pending || !graphs.empty()) {
      Impl::Change change;
      m.store->write([&](Store::Writer& w) {
        m.begin_commit(w, change, unix_ms(), nullptr);
        w.drop_graphs();
        for (const auto& [name, dump] : graphs) w.save_graph(name, dump);
      });
    }
  } catch (const std::exception& e) {
    log("cache: could not save hit recency and graphs on close (the next open rebuilds): ", e.what());
  }
}

const verify::Verifier& Cache::verifier() const { return *impl_->verifier; }
const CacheOptions& Cache::options() const { return impl_->opt; }

PutResult Cache::put(const std::string& prompt, const std::string& response, const PutOptions& options) {
  PutRequest r{prompt, response, options};
  return put_batch(std::span<const PutRequest>(&r, 1))[0];
}

std::vector<PutResult> Cache::put_batch(std::span<const PutRequest> requests, size_t commit_every) {
  auto& m = *impl_;
  VERITY_CHECK(commit_every > 0, ConfigError, "commit_every must be positive");
  for (const auto& r : requests) m.check_put(r);
  std::vector<PutResult> out;
  out.reserve(requests.size());
  auto group_at = [&](size_t b) { return requests.subspan(b, std::min(commit_every, requests.size() - b)); };
  // Encoding runs outside the write lock (lookups and encoding overlap), and
  // group g+1 is encoded while group g is written and committed.
  auto encode_group = [&m](std::span<const PutRequest> group) {
    std::vector<std::string> prompts, nss;
    for (const auto& r : group) prompts.push_back(r.prompt), nss.push_back(r.options.ns);
    return std::async(std::launch::async,
                      [&m, prompts = std::move(prompts), nss = std::move(nss)] { return m.vectors_for(prompts, nss); });
  };
  std::future<std::vector<Encoded>> next;
  if (!requests.empty()) next = encode_group(group_at(0));
  for (size_t b = 0; b < requests.size(); b += commit_every) {
    auto group = group_at(b);
    auto encoded = next.get();
    if (b + commit_every < requests.size()) next = encode_group(group_at(b + commit_every));
    std::lock_guard lock(m.write_lock);
    auto results = m.put_group(group, encoded);
    out.insert(out.end(), results.begin(), results.end());
  }
  return out;
}

LookupResult Cache::lookup(const std::string& prompt, const LookupOptions& options) {
  auto& m = *impl_;
  auto start = Clock::now();
  m.check_prompt(prompt);
  check_namespace(options.ns);
  LookupResult res;
  res.ns = options.ns;
  if (options.min_probability) {
    VERITY_CHECK(std::isfinite(*options.min_probability), ConfigError, "min_probability must be a finite number");
    res.threshold = *options.min_probability;
    res.threshold_source = "request";
  } else {
    res.threshold = m.default_threshold;
    res.threshold_source = m.threshold_source;
  }
  ++m.lookups;
  const int64_t now_ms = unix_ms();
  auto& t = res.timings;
  auto finish = [&](bool hit, std::string reason) {
    res.hit = hit;
    res.reason = std::move(reason);
    if (hit) {
      ++m.hits;
      m.touch(options.ns, res.best->entry.id, now_ms);
    } else {
      ++m.misses;
    }
    t.total_ms = ms_since(start);
    return res;
  };

  auto tx = Clock::now();
  auto exact = m.store->find_exact(options.ns, prompt, now_ms);
  t.exact_ms = ms_since(tx);
  if (exact) {
    ++m.exact_hits;
    res.best = Candidate{to_entry(*exact), 1.0f, 1.0f};
    return finish(true, "exact");
  }
  auto g = m.gather(prompt, options.ns, now_ms, t);
  if (g.empty) return finish(false, "empty");
  auto tf = Clock::now();
  auto cands = m.fetch(g, now_ms);
  t.fetch_ms = ms_since(tf);
  if (cands.empty()) {
    // Nothing reached the floor: report the nearest entry and its cosine.
    if (!g.nearest.empty())
      if (auto rec = m.store->get(g.nearest[0].id)) res.best = Candidate{to_entry(*rec), g.nearest[0].cosine, {}};
    return finish(false, "below_cosine_floor");
  }
  auto tv = Clock::now();
  auto scores = m.score(*m.verifier, g.query, cands);
  t.verify_ms = ms_since(tv);
  size_t b = Impl::best_of(cands, scores);
  res.best = Candidate{to_entry(cands[b].record), cands[b].nb.cosine, scores[b]};
  return finish(scores[b] >= res.threshold, scores[b] >= res.threshold ? "verified" : "below_threshold");
}

Probe Cache::probe(const std::string& prompt, const std::string& ns,
                   std::span<const verify::Verifier* const> scorers) {
  auto& m = *impl_;
  m.check_prompt(prompt);
  check_namespace(ns);
  for (const auto* scorer : scorers)
    if (scorer) m.check_maps_fit(*scorer);
  const int64_t now_ms = unix_ms();
  Probe out;
  if (auto exact = m.store->find_exact(ns, prompt, now_ms)) out.exact_id = exact->id;
  LookupTimings t;
  auto g = m.gather(prompt, ns, now_ms, t);
  auto cands = m.fetch(g, now_ms);
  for (const auto* scorer : scorers) {
    ScorerChoice c;
    if (!scorer) {
      if (!g.nearest.empty()) c = {g.nearest[0].id, g.nearest[0].cosine, g.nearest[0].cosine};
    } else if (!cands.empty()) {
      auto scores = m.score(*scorer, g.query, cands);
      size_t b = Impl::best_of(cands, scores);
      c = {cands[b].nb.id, scores[b], cands[b].nb.cosine};
    }
    out.choices.push_back(c);
  }
  return out;
}

bool Cache::remove(int64_t id) {
  auto& m = *impl_;
  std::lock_guard lock(m.write_lock);
  Impl::Change change;
  bool found = false;
  const int64_t now_ms = unix_ms();
  m.store->write([&](Store::Writer& w) {
    m.begin_commit(w, change, now_ms, nullptr);
    found = w.remove(id);
    if (found) change.gone.push_back(id);
  });
  m.apply(change);
  if (found) ++m.removed;
  return found;
}

size_t Cache::clear(const std::string& ns) { return clear(std::span<const std::string>(&ns, 1)); }

size_t Cache::clear(std::span<const std::string> namespaces) {
  auto& m = *impl_;
  for (const auto& ns : namespaces) check_namespace(ns);
  std::lock_guard lock(m.write_lock);
  Impl::Change change;
  size_t n = 0;
  const int64_t now_ms = unix_ms();
  m.store->write([&](Store::Writer& w) {
    m.begin_commit(w, change, now_ms, nullptr);
    std::unordered_set<int64_t> already(change.gone.begin(), change.gone.end());
    for (const auto& ns : namespaces)
      for (int64_t id : w.ids_in(ns)) {
        w.remove(id);
        if (already.insert(id).second) change.gone.push_back(id), ++n;
      }
  });
  m.apply(change);
  m.removed += n;
  return n;
}

std::optional<Entry> Cache::get(int64_t id) {
  auto rec = impl_->store->get(id);
  if (!rec || !live(rec->expires_ms, unix_ms())) return std::nullopt;
  return to_entry(*rec);
}

CacheStats Cache::stats() const {
  const auto& m = *impl_;
  CacheStats s;
  s.path = m.store->path();
  s.encoder = m.opt.encoder;
  s.verifier = m.verifier->spec();
  s.default_threshold = m.default_threshold;
  s.threshold_source = m.threshold_source;
  s.cosine_floor = m.opt.cosine_floor;
  s.candidates = m.opt.candidates;
  s.max_entries = m.opt.max_entries;
  s.max_bytes = m.opt.max_bytes;
  s.index_source = m.index_source;
  {
    std::shared_lock state(m.state_lock);
    for (const auto& [name, n] : m.namespaces) {
      s.namespaces.push_back({name, n.entries.size(), n.bytes, n.ann.uses_graph()});
      s.entries += n.entries.size();
      s.bytes += n.bytes;
    }
  }
  s.lookups = m.lookups;
  s.hits = m.hits;
  s.exact_hits = m.exact_hits;
  s.misses = m.misses;
  s.puts = m.puts;
  s.replaced = m.replaced;
  s.reused_vectors = m.reused_vectors;
  s.removed = m.removed;
  s.evicted = m.evicted;
  s.expired = m.expired;
  s.damaged_skipped = m.damaged;
  return s;
}

}  // namespace verity::cache
