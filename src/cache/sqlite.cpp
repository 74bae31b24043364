#include "cache/sqlite.hpp"

#include <sqlite3.h>

#include "core/error.hpp"

namespace verity::cache::sql {
namespace {
bool is_damage(int rc) {
  int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}
}  // namespace

Connection::Connection(const std::string& path, bool create, int busy_timeout_ms) : path_(path) {
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw Error(cat(path, ": cannot open the cache database: ", message));
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
}

Connection::~Connection() { sqlite3_close_v2(db_); }

void Connection::fail(int rc, std::string_view doing) const {
  std::string message = cat(path_, ": ", doing, ": ", db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc),
                            " (SQLite code ", rc, ")");
  if (is_damage(rc)) throw FormatError(message + "; the database file is damaged");
  throw Error(message);
}

void Connection::exec(std::string_view sql) {
  char* err = nullptr;
  std::string text(sql);
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string message = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    std::string full = cat(path_, ": ", message, " (SQLite code ", rc, ", running: ", text.substr(0, 60), ")");
    if (is_damage(rc)) throw FormatError(full + "; the database file is damaged");
    throw Error(full);
  }
}

std::string Connection::query_text(std::string_view sql) {
  Statement s(*this, sql);
  VERITY_CHECK(s.step(), Error, path_, ": '", sql, "' returned no row");
  return s.text(0);
}

Statement Connection::prepare(std::string_view sql) { return Statement(*this, sql); }
int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Connection::changes() const { return sqlite3_changes(db_); }

Statement::Statement(Connection& db, std::string_view sql) : db_(&db), sql_(sql) {
  int rc = sqlite3_prepare_v3(db.handle(), sql_.data(), int(sql_.size()), SQLITE_PREPARE_PERSISTENT, &stmt_,
                              nullptr);
  if (rc != SQLITE_OK) db.fail(rc, cat("preparing '", sql_.substr(0, 60), "'"));
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_), sql_(std::move(o.sql_)) {
  o.stmt_ = nullptr;
}

Statement& Statement::bind(int i, int64_t v) {
  if (int rc = sqlite3_bind_int64(stmt_, i, v); rc != SQLITE_OK) db_->fail(rc, "binding a parameter");
  return *this;
}
Statement& Statement::bind(int i, double v) {
  if (int rc = sqlite3_bind_double(stmt_, i, v); rc != SQLITE_OK) db_->fail(rc, "binding a parameter");
  return *this;
}
Statement& Statement::bind(int i, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_, i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) db_->fail(rc, "binding a parameter");
  return *this;
}
Statement& Statement::bind_blob(int i, const void* data, size_t n) {
  // A zero-length blob must still be a blob, not NULL: SQLite wants a non-null pointer.
  static const char kEmpty = 0;
  int rc = sqlite3_bind_blob64(stmt_, i, n ? data : &kEmpty, n, SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_->fail(rc, "binding a parameter");
  return *this;
}
Statement& Statement::bind_null(int i) {
  if (int rc = sqlite3_bind_null(stmt_, i); rc != SQLITE_OK) db_->fail(rc, "binding a parameter");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);
  db_->fail(rc, cat("running '", sql_.substr(0, 60), "'"));
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t Statement::int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::real(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Statement::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  return p ? std::string(p, size_t(sqlite3_column_bytes(stmt_, col))) : std::string();
}
std::span<const std::byte> Statement::blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  size_t n = size_t(sqlite3_column_bytes(stmt_, col));
  return {static_cast<const std::byte*>(p), p ? n : 0};
}

Transaction::Transaction(Connection& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }
Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}
void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

std::string library_version() { return sqlite3_libversion(); }

}  // namespace verity::cache::sql
