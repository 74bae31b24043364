#pragma once
// A verified semantic cache: an answer cached for one prompt is served for a
// new prompt only when a stage-2 verifier, reading the token similarity map
// of (new prompt, cached prompt), says the two mean the same thing.
//
// Lookup decision, in order (docs/CACHE.md, "Decision rule"):
//   1. exact text: a live entry with the same prompt in the namespace is a hit
//      (probability 1) without encoding;
//   2. the prompt's pooled vector -> the namespace's nearest entries
//      (exact scan, HNSW once large) -> the top `candidates`;
//   3. candidates below `cosine_floor` are dropped unverified, except entries
//      whose prompt is the same on the surface (text::surface_text: case,
//      spacing, apostrophes and sentence punctuation aside), which are
//      candidates whatever their cosine or rank;
//   4. the verifier scores (prompt, cached prompt) on its token map;
//   5. the best-scoring candidate is a hit when its score reaches the
//      threshold: the request's min_probability, else the verifier's
//      calibrated default_threshold(), else `fallback_threshold`.
// Expired entries are never served. Each namespace is capped by entries and
// bytes; a put over a cap evicts least-recently-used entries.
//
// Storage: one SQLite file in WAL mode (cache/store.hpp); an acknowledged put
// is committed before put() returns. Thread-safe: lookups run concurrently,
// writes are serialized. Errors: ConfigError for bad arguments, FormatError
// for a damaged database, Error for I/O failures.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/namespace_index.hpp"

namespace verity::verify {
class Verifier;
}

namespace verity::cache {

inline constexpr const char* kDefaultNamespace = "default";
inline constexpr size_t kMaxNamespaceBytes = 256;
// Threshold used when neither the request nor the verifier gives one.
inline constexpr float kFallbackThreshold = 0.5f;

struct CacheOptions {
  // Encoder spec (encode::make_encoder); "" = the one the database records,
  // or "use-lite" for a new database.
  std::string encoder;
  std::string verifier = "default";  // verify::make_verifier spec
  size_t candidates = 4;             // nearest entries passed to the verifier
  float cosine_floor = 0.5f;         // pooled cosine below which a candidate is not verified
  float fallback_threshold = kFallbackThreshold;
  size_t max_entries = 0;            // per namespace; 0 = no cap
  size_t max_bytes = 0;              // per namespace (texts + vectors); 0 = no cap
  size_t max_prompt_chars = 0;       // 0 = no limit (the server sets its own)
  std::string durability = "full";   // full | normal (see StoreOptions)
  std::string check = "quick";       // SQLite check on open: none | quick | full
  bool create = true;                // create the database file when missing
  int encoder_threads = 1;           // torch threads per encode call (0 = runtime default);
                                     // lookups run in parallel already
  size_t put_threads = 0;            // concurrent encode calls of a put_batch; 0 = all cores
  AnnOptions ann;
};
// Throws ConfigError naming the field.
void validate(const CacheOptions& options);

struct PutOptions {
  std::string ns = kDefaultNamespace;
  std::string metadata = "{}";    // a JSON object, stored as given
  std::optional<double> ttl_s;    // seconds until expiry; none = never
};

struct PutRequest {
  std::string prompt, response;
  PutOptions options;
};

struct PutResult {
  int64_t id = 0;
  std::string ns;          // the namespace it went into
  bool replaced = false;   // an entry with this prompt existed in the namespace
  size_t evicted = 0;      // entries evicted by the caps
  size_t expired = 0;      // expired entries purged in the same commit
};

struct Entry {
  int64_t id = 0;
  std::string ns, prompt, response, metadata;
  int64_t created_ms = 0;               // Unix time, ms
  std::optional<int64_t> expires_ms;    // Unix time, ms
};

struct LookupOptions {
  std::string ns = kDefaultNamespace;
  std::optional<float> min_probability;  // overrides the default threshold
};

struct LookupTimings {
  double exact_ms = 0, encode_ms = 0, ann_ms = 0, fetch_ms = 0, verify_ms = 0, total_ms = 0;
};

struct Candidate {
  Entry entry;
  float similarity = 0;                // pooled cosine
  std::optional<float> probability;    // verifier score; none when not verified
};

struct LookupResult {
  bool hit = false;
  std::string ns;  // the namespace looked in
  // hit: "exact" | "verified"; miss: "empty" (nothing in the namespace),
  // "below_cosine_floor", "below_threshold".
  std::string reason;
  // hit: the entry served; miss: the best candidate that lost, if any.
  std::optional<Candidate> best;
  float threshold = 0;
  std::string threshold_source;  // "request" | "verifier" | "fallback"
  LookupTimings timings;
};

struct NamespaceStats {
  std::string name;
  size_t entries = 0, bytes = 0;
  bool graph = false;  // HNSW (true) or exact scan
};

struct CacheStats {
  std::string path, encoder, verifier;
  float default_threshold = 0;
  std::string threshold_source;  // "verifier" | "fallback"
  float cosine_floor = 0;
  size_t candidates = 0, max_entries = 0, max_bytes = 0;
  size_t entries = 0, bytes = 0;
  std::vector<NamespaceStats> namespaces;
  // Since open.
  uint64_t lookups = 0, hits = 0, exact_hits = 0, misses = 0, puts = 0, replaced = 0, removed = 0,
           evicted = 0, expired = 0, damaged_skipped = 0;
  uint64_t reused_vectors = 0;  // puts whose prompt was already stored or earlier in its batch: not encoded
  std::string index_source;  // "rebuilt" | "reloaded" | "new"
};

// What a lookup's stages 2-4 see, for evaluation: the exact-text match and
// the nearest candidates with each scorer's choice. A scorer is a verifier,
// or nullptr for the pooled cosine alone (no floor: the cosine-threshold
// rule of other semantic caches).
struct ScorerChoice {
  int64_t id = -1;        // the candidate the scorer would serve; -1 = none
  float score = 0;        // its score (cosine for the nullptr scorer)
  float similarity = 0;
};
struct Probe {
  std::optional<int64_t> exact_id;
  std::vector<ScorerChoice> choices;  // one per scorer, in order
};

class Cache {
 public:
  // Opens or creates the database, loads the encoder and verifier, and
  // rebuilds (or reloads) each namespace's index from the stored vectors.
  Cache(const std::string& path, CacheOptions options);
  ~Cache();  // saves the namespaces' graphs for a fast reopen
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  PutResult put(const std::string& prompt, const std::string& response, const PutOptions& options = {});
  // Encodes in batches and commits every `commit_every` requests; results in
  // request order. A repeated prompt (same namespace) replaces the earlier one.
  std::vector<PutResult> put_batch(std::span<const PutRequest> requests, size_t commit_every = 256);
  LookupResult lookup(const std::string& prompt, const LookupOptions& options = {});
  // False when no such entry exists.
  bool remove(int64_t id);
  // Entries removed; several namespaces are cleared in one commit.
  size_t clear(const std::string& ns);
  size_t clear(std::span<const std::string> namespaces);
  std::optional<Entry> get(int64_t id);
  CacheStats stats() const;

  // Evaluation (see Probe). Scorers must be thread-safe for concurrent calls.
  Probe probe(const std::string& prompt, const std::string& ns,
              std::span<const verify::Verifier* const> scorers);
  // The cache's verifier (its spec and threshold appear in stats()).
  const verify::Verifier& verifier() const;
  const CacheOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::cache
