#include "cache/store.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "cache/sqlite.hpp"
#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "index/token_store.hpp"

namespace verity::cache {
namespace {

constexpr const char* kFormat = "verity-cache";
constexpr int kVersion = 1;

// Entries keep the texts and the pooled vector; the token blobs live in a
// table of their own so the scan on open reads only small rows.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entries(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  namespace TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  last_used_ms INTEGER NOT NULL,
  expires_ms INTEGER,
  bytes INTEGER NOT NULL,
  pooled_crc INTEGER NOT NULL,
  pooled BLOB NOT NULL,
  prompt TEXT NOT NULL,
  response TEXT NOT NULL,
  metadata TEXT NOT NULL,
  UNIQUE(namespace, prompt));
CREATE INDEX IF NOT EXISTS entries_expiry ON entries(expires_ms) WHERE expires_ms IS NOT NULL;
CREATE TABLE IF NOT EXISTS entry_tokens(
  id INTEGER PRIMARY KEY,
  crc INTEGER NOT NULL,
  token_ids BLOB NOT NULL,
  tokens BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS ann_graphs(
  namespace TEXT PRIMARY KEY,
  generation INTEGER NOT NULL,
  crc INTEGER NOT NULL,
  graph BLOB NOT NULL) WITHOUT ROWID;
)sql";

constexpr const char* kRecordColumns =
    "id, namespace, prompt, response, metadata, created_ms, last_used_ms, expires_ms, bytes";

EntryRecord read_record(const sql::Statement& s, int first = 0) {
  EntryRecord r;
  r.id = s.int64(first);
  r.ns = s.text(first + 1);
  r.prompt = s.text(first + 2);
  r.response = s.text(first + 3);
  r.metadata = s.text(first + 4);
  r.created_ms = s.int64(first + 5);
  r.last_used_ms = s.int64(first + 6);
  if (!s.is_null(first + 7)) r.expires_ms = s.int64(first + 7);
  r.bytes = s.int64(first + 8);
  return r;
}

uint32_t crc_of(std::span<const std::byte> a, std::span<const std::byte> b = {}) {
  return crc32c(b.data(), b.size(), crc32c(a.data(), a.size()));
}

// A reader connection with its statements prepared once.
struct Reader {
  sql::Connection db;
  sql::Statement exact, get, fetch, scan, graph, generation;
  explicit Reader(const std::string& path)
      : db(path, false),
        exact(db, std::string("SELECT ") + kRecordColumns +
                      " FROM entries WHERE namespace = ?1 AND prompt = ?2 AND (expires_ms IS NULL OR expires_ms > ?3)"),
        get(db, std::string("SELECT ") + kRecordColumns + " FROM entries WHERE id = ?1"),
        fetch(db, std::string("SELECT ") + kRecordColumns +
                      ", e.pooled_crc, e.pooled, t.crc, t.token_ids, t.tokens FROM entries e LEFT JOIN entry_tokens t "
                      "USING(id) WHERE id = ?1"),
        scan(db, "SELECT id, namespace, last_used_ms, expires_ms, bytes, pooled_crc, pooled, prompt FROM entries ORDER BY id"),
        graph(db, "SELECT generation, crc, graph FROM ann_graphs WHERE namespace = ?1"),
        generation(db, "SELECT value FROM meta WHERE key = 'generation'") {}
};

}  // namespace

struct Store::Impl {
  std::string path, encoder;
  size_t dim = 0;
  std::unique_ptr<sql::Connection> writer;
  std::mutex pool_lock;
  std::vector<std::unique_ptr<Reader>> idle;

  // Borrows a reader for one call and returns it to the pool afterwards.
  class Lease {
   public:
    explicit Lease(Impl& s) : s_(s) {
      {
        std::lock_guard lock(s.pool_lock);
        if (!s.idle.empty()) {
          r_ = std::move(s.idle.back());
          s.idle.pop_back();
        }
      }
      if (!r_) r_ = std::make_unique<Reader>(s.path);
    }
    ~Lease() {
      std::lock_guard lock(s_.pool_lock);
      s_.idle.push_back(std::move(r_));
    }
    Reader* operator->() { return r_.get(); }

   private:
    Impl& s_;
    std::unique_ptr<Reader> r_;
  };

  std::string where(int64_t id) const { return cat(path, ": entry ", id); }

  void check_pooled(int64_t id, std::span<const std::byte> blob, int64_t crc) const {
    VERITY_CHECK(blob.size() == dim * sizeof(float), FormatError, where(id), ": pooled vector has ", blob.size(),
                 " bytes, expected ", dim * sizeof(float), " (dim ", dim, ")");
    VERITY_CHECK(crc_of(blob) == uint32_t(crc), FormatError, where(id), ": pooled vector checksum mismatch");
  }
};

namespace {
std::string meta_value(sql::Connection& db, const std::string& key) {
  auto s = db.prepare("SELECT value FROM meta WHERE key = ?1");
  s.bind(1, key);
  return s.step() ? s.text(0) : std::string();
}

size_t parse_dim(const std::string& path, const std::string& text) {
  size_t used = 0;
  unsigned long v = 0;
  try {
    v = std::stoul(text, &used);
  } catch (const std::logic_error&) {
  }
  VERITY_CHECK(used == text.size() && v > 0 && v <= 65536, FormatError, path, ": meta 'dim' is '", text,
               "', not a dimension");
  return v;
}

void check_format(sql::Connection& db, const std::string& path) {
  auto format = meta_value(db, "format");
  VERITY_CHECK(format == kFormat, FormatError, path, ": not a verity cache (meta 'format' is '", format, "')");
  auto version = meta_value(db, "version");
  VERITY_CHECK(version == std::to_string(kVersion), FormatError, path, ": cache format version '", version,
               "' is not supported (this build reads version ", kVersion, ")");
}
}  // namespace

std::string encoder_kind(const std::string& spec) {
  auto colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  for (const char* named : {"use-lite", "glove"})
    if (kind == named) return kind;
  return spec;
}

std::pair<std::string, size_t> Store::read_encoder(const std::string& path) {
  VERITY_CHECK(verity::file_exists(path), ConfigError, path, ": no such cache database");
  sql::Connection db(path, false);
  auto tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
  VERITY_CHECK(tables.step() && tables.int64(0) == 1, FormatError, path, ": not a verity cache (no meta table)");
  check_format(db, path);
  return {meta_value(db, "encoder"), parse_dim(path, meta_value(db, "dim"))};
}

Store::Store(const std::string& path, const std::string& encoder, size_t dim, const StoreOptions& o)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.path = path;
  VERITY_CHECK(o.durability == "full" || o.durability == "normal", ConfigError, "unknown cache durability '",
               o.durability, "' (valid: full, normal)");
  VERITY_CHECK(o.check == "none" || o.check == "quick" || o.check == "full", ConfigError,
               "unknown cache check '", o.check, "' (valid: none, quick, full)");
  const bool existed = verity::file_exists(path) && verity::file_size(path) > 0;
  VERITY_CHECK(existed || o.create, ConfigError, path,
               verity::file_exists(path) ? ": an empty file, not a cache database (put creates one)"
                                         : ": no such cache database");
  m.writer = std::make_unique<sql::Connection>(path, o.create);
  auto& db = *m.writer;
  // The page size only takes effect on a new file; 8 KiB keeps an entry row
  // (pooled vector and texts) on one page.
  if (!existed) db.exec("PRAGMA page_size = 8192");
  auto mode = db.query_text("PRAGMA journal_mode = WAL");
  VERITY_CHECK(mode == "wal", Error, path, ": SQLite refused WAL mode (journal_mode is '", mode, "')");
  db.exec(o.durability == "full" ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
  if (o.check != "none") {
    auto result = db.query_text(o.check == "quick" ? "PRAGMA quick_check" : "PRAGMA integrity_check");
    VERITY_CHECK(result == "ok", FormatError, path, ": SQLite ", o.check, " check failed: ", result.substr(0, 300));
  }
  if (!existed) {
    VERITY_CHECK(!encoder.empty() && dim > 0, ConfigError, path, ": a new cache needs an encoder");
    sql::Transaction t(db);
    db.exec(kSchema);
    auto put = db.prepare("INSERT INTO meta(key, value) VALUES (?1, ?2)");
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"format", kFormat},
             {"version", std::to_string(kVersion)},
             {"encoder", encoder},
             {"dim", std::to_string(dim)},
             {"token_codec", "f16"},
             {"generation", "0"}}) {
      put.bind(1, k).bind(2, v);
      put.run();
    }
    t.commit();
  } else {
    auto tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
    VERITY_CHECK(tables.step() && tables.int64(0) == 1, FormatError, path, ": not a verity cache (no meta table)");
    check_format(db, path);
  }
  m.encoder = meta_value(db, "encoder");
  m.dim = parse_dim(path, meta_value(db, "dim"));
  VERITY_CHECK(encoder.empty() || encoder_kind(encoder) == encoder_kind(m.encoder), ConfigError, path,
               ": the cache was built with encoder '", m.encoder, "', not '", encoder,
               "' (open it with that encoder, or use a new file)");
  VERITY_CHECK(dim == 0 || dim == m.dim, ConfigError, path, ": the cache stores dim ", m.dim, ", the encoder gives ",
               dim);
  auto codec = meta_value(db, "token_codec");
  VERITY_CHECK(codec == "f16", FormatError, path, ": unknown token_codec '", codec, "'");
  // Every entry must have its token row; a half-written pair is damage, not a state.
  auto orphans = db.prepare(
      "SELECT (SELECT count(*) FROM entries e WHERE NOT EXISTS (SELECT 1 FROM entry_tokens t WHERE t.id = e.id)),"
      " (SELECT count(*) FROM entry_tokens t WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.id = t.id))");
  VERITY_CHECK(orphans.step(), Error, path, ": cannot count entries");
  VERITY_CHECK(orphans.int64(0) == 0 && orphans.int64(1) == 0, FormatError, path, ": ", orphans.int64(0),
               " entries without token vectors and ", orphans.int64(1), " token rows without an entry");
}

Store::~Store() = default;

const std::string& Store::path() const { return impl_->path; }
const std::string& Store::encoder() const { return impl_->encoder; }
size_t Store::dim() const { return impl_->dim; }

std::optional<EntryRecord> Store::find_exact(std::string_view ns, std::string_view prompt, int64_t now_ms) {
  Impl::Lease r(*impl_);
  auto& s = r->exact;
  s.bind(1, ns).bind(2, prompt).bind(3, now_ms);
  std::optional<EntryRecord> out;
  if (s.step()) out = read_record(s);
  s.reset();
  return out;
}

std::optional<EntryRecord> Store::get(int64_t id) {
  Impl::Lease r(*impl_);
  auto& s = r->get;
  s.bind(1, id);
  std::optional<EntryRecord> out;
  if (s.step()) out = read_record(s);
  s.reset();
  return out;
}

std::optional<std::pair<EntryRecord, EntryVectors>> Store::fetch(int64_t id) {
  auto& m = *impl_;
  Impl::Lease r(m);
  auto& s = r->fetch;
  s.bind(1, id);
  struct ResetOnExit {
    sql::Statement& s;
    ~ResetOnExit() { s.reset(); }
  } reset{s};
  if (!s.step()) return std::nullopt;
  std::pair<EntryRecord, EntryVectors> out;
  out.first = read_record(s);
  const int c = 9;
  auto pooled = s.blob(c + 1);
  m.check_pooled(id, pooled, s.int64(c));
  VERITY_CHECK(!s.is_null(c + 2), FormatError, m.where(id), ": token vectors missing");
  auto ids = s.blob(c + 3), tokens = s.blob(c + 4);
  VERITY_CHECK(ids.size() % sizeof(uint32_t) == 0 && tokens.size() == ids.size() / 4 * m.dim * sizeof(uint16_t),
               FormatError, m.where(id), ": token blobs of ", ids.size(), " and ", tokens.size(),
               " bytes do not hold n ids and n × ", m.dim, " halves");
  VERITY_CHECK(crc_of(ids, tokens) == uint32_t(s.int64(c + 2)), FormatError, m.where(id),
               ": token vectors checksum mismatch");
  auto& v = out.second;
  v.pooled.resize(m.dim);
  std::memcpy(v.pooled.data(), pooled.data(), pooled.size());
  v.ids.resize(ids.size() / 4);
  std::memcpy(v.ids.data(), ids.data(), ids.size());
  std::vector<uint16_t> halves(tokens.size() / 2);
  std::memcpy(halves.data(), tokens.data(), tokens.size());
  v.tokens.resize(halves.size());
  index::decode_halves(halves.data(), v.tokens.data(), halves.size());
  return out;
}

void Store::scan(const std::function<void(const IndexRow&)>& fn) {
  auto& m = *impl_;
  Impl::Lease r(m);
  auto& s = r->scan;
  struct ResetOnExit {
    sql::Statement& s;
    ~ResetOnExit() { s.reset(); }
  } reset{s};
  std::vector<float> pooled(m.dim);
  IndexRow row;
  while (s.step()) {
    row.id = s.int64(0);
    row.ns = s.text(1);
    row.last_used_ms = s.int64(2);
    row.expires_ms = s.is_null(3) ? std::nullopt : std::optional<int64_t>(s.int64(3));
    row.bytes = s.int64(4);
    row.prompt = s.text(7);
    auto blob = s.blob(6);
    m.check_pooled(row.id, blob, s.int64(5));
    std::memcpy(pooled.data(), blob.data(), blob.size());
    for (size_t i = 0; i < m.dim; ++i)
      VERITY_CHECK(std::isfinite(pooled[i]), FormatError, m.where(row.id), ": pooled component ", i, " is not finite");
    row.pooled = pooled;
    fn(row);
  }
}

uint64_t Store::generation() {
  Impl::Lease r(*impl_);
  auto& s = r->generation;
  uint64_t g = 0;
  if (s.step()) g = uint64_t(std::stoull(s.text(0)));
  s.reset();
  return g;
}

std::optional<std::string> Store::load_graph(std::string_view ns) {
  const uint64_t current = generation();
  Impl::Lease r(*impl_);
  auto& s = r->graph;
  s.bind(1, ns);
  std::optional<std::string> out;
  struct ResetOnExit {
    sql::Statement& s;
    ~ResetOnExit() { s.reset(); }
  } reset{s};
  if (s.step() && uint64_t(s.int64(0)) == current) {
    auto blob = s.blob(2);
    VERITY_CHECK(crc_of(blob) == uint32_t(s.int64(1)), FormatError, impl_->path, ": saved graph of namespace '", ns,
                 "': checksum mismatch");
    out = std::string(reinterpret_cast<const char*>(blob.data()), blob.size());
  }
  return out;
}

void Store::write(const std::function<void(Writer&)>& fn) {
  auto& db = *impl_->writer;
  sql::Transaction t(db);
  db.exec("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'");
  Writer w(*this);
  fn(w);
  t.commit();
}

Store::Writer::Upserted Store::Writer::upsert(const NewEntry& e, int64_t bytes) {
  auto& m = *store_.impl_;
  auto& db = *m.writer;
  VERITY_CHECK(e.pooled.size() == m.dim && e.tokens.size() == e.ids.size() * m.dim, ConfigError,
               "cache put: vectors do not match dim ", m.dim);
  std::vector<uint16_t> halves(e.tokens.size());
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = index::float_to_half(e.tokens[i]);
  std::span<const std::byte> pooled = std::as_bytes(e.pooled), ids = std::as_bytes(e.ids),
                             tokens = std::as_bytes(std::span<const uint16_t>(halves));
  Upserted out;
  auto find = db.prepare("SELECT id, bytes FROM entries WHERE namespace = ?1 AND prompt = ?2");
  find.bind(1, e.ns).bind(2, e.prompt);
  if (find.step()) {
    out.id = find.int64(0);
    out.old_bytes = find.int64(1);
    out.replaced = true;
  }
  find.reset();
  if (out.replaced) {
    auto s = db.prepare(
        "UPDATE entries SET created_ms = ?2, last_used_ms = ?2, expires_ms = ?3, bytes = ?4, pooled_crc = ?5, "
        "pooled = ?6, response = ?7, metadata = ?8 WHERE id = ?1");
    s.bind(1, out.id).bind(2, e.now_ms).bind(3, e.expires_ms).bind(4, bytes).bind(5, int64_t(crc_of(pooled)));
    s.bind_blob(6, pooled.data(), pooled.size()).bind(7, e.response).bind(8, e.metadata);
    s.run();
  } else {
    auto s = db.prepare(
        "INSERT INTO entries(namespace, created_ms, last_used_ms, expires_ms, bytes, pooled_crc, pooled, prompt, "
        "response, metadata) VALUES (?1, ?2, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    s.bind(1, e.ns).bind(2, e.now_ms).bind(3, e.expires_ms).bind(4, bytes).bind(5, int64_t(crc_of(pooled)));
    s.bind_blob(6, pooled.data(), pooled.size()).bind(7, e.prompt).bind(8, e.response).bind(9, e.metadata);
    s.run();
    out.id = db.last_insert_rowid();
  }
  auto t = db.prepare("INSERT OR REPLACE INTO entry_tokens(id, crc, token_ids, tokens) VALUES (?1, ?2, ?3, ?4)");
  t.bind(1, out.id).bind(2, int64_t(crc_of(ids, tokens)));
  t.bind_blob(3, ids.data(), ids.size()).bind_blob(4, tokens.data(), tokens.size());
  t.run();
  return out;
}

bool Store::Writer::remove(int64_t id) {
  auto& db = *store_.impl_->writer;
  auto s = db.prepare("DELETE FROM entries WHERE id = ?1");
  s.bind(1, id);
  s.run();
  bool removed = db.changes() > 0;
  auto t = db.prepare("DELETE FROM entry_tokens WHERE id = ?1");
  t.bind(1, id);
  t.run();
  return removed;
}

std::vector<int64_t> Store::Writer::ids_in(std::string_view ns) {
  auto s = store_.impl_->writer->prepare("SELECT id FROM entries WHERE namespace = ?1");
  s.bind(1, ns);
  std::vector<int64_t> out;
  while (s.step()) out.push_back(s.int64(0));
  return out;
}

std::vector<std::pair<int64_t, std::string>> Store::Writer::expired(int64_t now_ms) {
  auto s = store_.impl_->writer->prepare(
      "SELECT id, namespace FROM entries WHERE expires_ms IS NOT NULL AND expires_ms <= ?1");
  s.bind(1, now_ms);
  std::vector<std::pair<int64_t, std::string>> out;
  while (s.step()) out.emplace_back(s.int64(0), s.text(1));
  return out;
}

void Store::Writer::touch(int64_t id, int64_t last_used_ms) {
  auto s = store_.impl_->writer->prepare("UPDATE entries SET last_used_ms = max(last_used_ms, ?2) WHERE id = ?1");
  s.bind(1, id).bind(2, last_used_ms);
  s.run();
}

void Store::Writer::save_graph(std::string_view ns, std::string_view graph) {
  auto& db = *store_.impl_->writer;
  auto s = db.prepare(
      "INSERT OR REPLACE INTO ann_graphs(namespace, generation, crc, graph) VALUES "
      "(?1, (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'), ?2, ?3)");
  s.bind(1, ns).bind(2, int64_t(crc32c(graph.data(), graph.size()))).bind_blob(3, graph.data(), graph.size());
  s.run();
}

void Store::Writer::drop_graphs() { store_.impl_->writer->exec("DELETE FROM ann_graphs"); }

}  // namespace verity::cache
