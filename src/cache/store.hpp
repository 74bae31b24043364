#pragma once
// The cache's durable store: one SQLite file in WAL mode (schema in
// docs/CACHE.md, "Database"). It knows rows, not decisions: the cache decides
// what to put, evict and serve. Reads may run on any number of threads (each
// borrows a connection from a pool); writes go through one connection inside
// write(), which the caller serializes.
//
// Vectors are stored per entry as little-endian blobs: pooled f32[dim]
// (L2-normalized), token_ids u32[n] and tokens f16[n × dim], with crc32c of
// the pooled blob and of ids+tokens. A blob whose size or checksum is wrong
// is a FormatError naming the file and the entry id.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace verity::cache {

namespace sql {
class Connection;
}

struct StoreOptions {
  bool create = true;              // create the file when missing
  std::string durability = "full";  // full: fsync each commit; normal: survives a process crash only
  std::string check = "quick";      // integrity check on open: none | quick | full
};

// One entry without its vectors.
struct EntryRecord {
  int64_t id = 0;
  std::string ns, prompt, response, metadata;
  int64_t created_ms = 0, last_used_ms = 0;
  std::optional<int64_t> expires_ms;
  int64_t bytes = 0;  // stored size: texts + blobs
};

struct EntryVectors {
  std::vector<float> pooled;     // dim
  std::vector<uint32_t> ids;     // n token identities
  std::vector<float> tokens;     // n × dim
};

// What a put writes; spans are borrowed for the call.
struct NewEntry {
  std::string_view ns, prompt, response, metadata;
  int64_t now_ms = 0;
  std::optional<int64_t> expires_ms;
  std::span<const float> pooled, tokens;
  std::span<const uint32_t> ids;
};

// The index-relevant part of each row, as scanned on open.
struct IndexRow {
  int64_t id = 0;
  std::string ns;
  int64_t last_used_ms = 0;
  std::optional<int64_t> expires_ms;
  int64_t bytes = 0;
  std::string prompt;
  std::span<const float> pooled;  // valid during the callback only
};

// What two encoder specs must share to read each other's vectors: the model
// name for the named pretrained models "use-lite[:DIR]" and "glove[:DIR]"
// (the directory may move between machines), the whole spec otherwise.
std::string encoder_kind(const std::string& spec);

class Store {
 public:
  // Opens or creates the file, sets WAL mode and the durability, checks the
  // schema version and the encoder: a database written with another encoder
  // or dimension is a ConfigError; a damaged file a FormatError. `encoder`
  // empty accepts the stored one (an existing file) and is an error for a
  // new file.
  Store(const std::string& path, const std::string& encoder, size_t dim, const StoreOptions& options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The encoder name and dimension recorded in the file.
  static std::pair<std::string, size_t> read_encoder(const std::string& path);

  const std::string& path() const;
  const std::string& encoder() const;
  size_t dim() const;

  // --- reads (thread-safe) ---
  // The live entry with exactly this prompt in ns, if any.
  std::optional<EntryRecord> find_exact(std::string_view ns, std::string_view prompt, int64_t now_ms);
  std::optional<EntryRecord> get(int64_t id);
  // The entry and its vectors; nullopt when the id is gone.
  std::optional<std::pair<EntryRecord, EntryVectors>> fetch(int64_t id);
  // Calls fn for every row (pooled blob checked), in id order.
  void scan(const std::function<void(const IndexRow&)>& fn);
  // The stored ANN graph of ns when no commit came after it was saved
  // (see write()); a checksum mismatch is a FormatError.
  std::optional<std::string> load_graph(std::string_view ns);
  uint64_t generation();

  // --- writes (one caller at a time) ---
  class Writer {
   public:
    struct Upserted {
      int64_t id = 0;
      bool replaced = false;
      int64_t old_bytes = 0;
    };
    // Inserts, or replaces the entry with the same (ns, prompt) keeping its id.
    Upserted upsert(const NewEntry& e, int64_t bytes);
    bool remove(int64_t id);
    std::vector<int64_t> ids_in(std::string_view ns);
    // Entries whose expiry is at or before now: (id, namespace).
    std::vector<std::pair<int64_t, std::string>> expired(int64_t now_ms);
    void touch(int64_t id, int64_t last_used_ms);
    void save_graph(std::string_view ns, std::string_view graph);
    void drop_graphs();

   private:
    friend class Store;
    explicit Writer(Store& s) : store_(s) {}
    Store& store_;
  };
  // Runs fn in one IMMEDIATE transaction and commits; the generation counter
  // moves on with every commit. Any exception rolls everything back.
  void write(const std::function<void(Writer&)>& fn);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::cache
