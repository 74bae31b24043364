#pragma once
// A thin RAII layer over the SQLite C API for the cache store: one connection,
// prepared statements, and errors turned into verity errors that name the
// database file. sqlite3.h stays in sqlite.cpp.
//
// SQLITE_CORRUPT and SQLITE_NOTADB (a damaged or foreign file) become
// FormatError; every other failure is Error. A connection is used by one
// thread at a time (the cache keeps one writer and a pool of readers).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace verity::cache::sql {

class Statement;

class Connection {
 public:
  // Opens (creating it when `create`) the database file; a busy database is
  // waited on for up to busy_timeout_ms before a write fails.
  Connection(const std::string& path, bool create, int busy_timeout_ms = 10000);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements with no parameters and no rows wanted.
  void exec(std::string_view sql);
  // Runs a statement that returns one text value (e.g. a PRAGMA).
  std::string query_text(std::string_view sql);
  Statement prepare(std::string_view sql);
  int64_t last_insert_rowid() const;
  int changes() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  // Throws the error for result code rc of the last call on this connection.
  [[noreturn]] void fail(int rc, std::string_view doing) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// A prepared statement, reset for reuse by reset() (run() resets itself).
class Statement {
 public:
  Statement(Connection& db, std::string_view sql);
  ~Statement();
  Statement(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int i, int64_t v);
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view text);
  Statement& bind_blob(int i, const void* data, size_t n);
  Statement& bind_null(int i);
  Statement& bind(int i, const std::optional<int64_t>& v) { return v ? bind(i, *v) : bind_null(i); }

  // Advances to the next row: true while there is one.
  bool step();
  // Steps to completion (a write) and resets.
  void run();
  void reset();

  bool is_null(int col) const;
  int64_t int64(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  // Valid until the next step/reset.
  std::span<const std::byte> blob(int col) const;

 private:
  Connection* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back when destroyed uncommitted.
class Transaction {
 public:
  explicit Transaction(Connection& db);
  ~Transaction();
  void commit();

 private:
  Connection& db_;
  bool done_ = false;
};

// The SQLite library version, for provenance.
std::string library_version();

}  // namespace verity::cache::sql
