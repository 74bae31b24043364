// The SQLite store without an encoder: rows round-trip, reopen keeps them, and
// foreign, damaged or mismatched files are clear errors.
#include "cache/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

using namespace verity;
using namespace verity::cache;
namespace fs = std::filesystem;

namespace {
constexpr size_t kDim = 8;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("verity_store_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string db() const { return (dir_ / "cache.sqlite").string(); }
  fs::path dir_;
};

struct Vectors {
  std::vector<float> pooled = std::vector<float>(kDim, 0.25f);
  std::vector<float> tokens;
  std::vector<uint32_t> ids;
  explicit Vectors(size_t n, float base = 0.5f) {
    for (size_t i = 0; i < n * kDim; ++i) tokens.push_back(base + float(i) / 64.0f);
    for (size_t i = 0; i < n; ++i) ids.push_back(uint32_t(100 + i));
  }
};

int64_t put(Store& s, std::string_view ns, std::string_view prompt, std::string_view response, const Vectors& v,
            bool* replaced = nullptr) {
  int64_t id = 0;
  s.write([&](Store::Writer& w) {
    auto r = w.upsert({ns, prompt, response, "{}", 1000, std::nullopt, v.pooled, v.tokens, v.ids}, 123);
    id = r.id;
    if (replaced) *replaced = r.replaced;
  });
  return id;
}
}  // namespace

TEST_F(StoreTest, RowsRoundTripAndSurviveReopen) {
  Vectors v(3);
  int64_t a, b;
  {
    Store s(db(), "enc", kDim, {});
    a = put(s, "ns", "hello", "world", v);
    b = put(s, "other", "hello", "there", v);
    EXPECT_NE(a, b);
    bool replaced = false;
    EXPECT_EQ(put(s, "ns", "hello", "again", v, &replaced), a);
    EXPECT_TRUE(replaced);
  }
  Store s(db(), "", 0, {});
  EXPECT_EQ(s.encoder(), "enc");
  EXPECT_EQ(s.dim(), kDim);
  auto exact = s.find_exact("ns", "hello", 2000);
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->id, a);
  EXPECT_EQ(exact->response, "again");
  EXPECT_FALSE(s.find_exact("ns", "Hello", 2000));
  auto row = s.fetch(b);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->first.response, "there");
  EXPECT_EQ(row->second.ids, v.ids);
  ASSERT_EQ(row->second.tokens.size(), v.tokens.size());
  for (size_t i = 0; i < v.tokens.size(); ++i) EXPECT_NEAR(row->second.tokens[i], v.tokens[i], 2e-3);
  size_t scanned = 0;
  s.scan([&](const IndexRow& r) {
    ++scanned;
    EXPECT_EQ(r.pooled.size(), kDim);
  });
  EXPECT_EQ(scanned, 2u);
  s.write([&](Store::Writer& w) { EXPECT_TRUE(w.remove(a)); });
  EXPECT_FALSE(s.fetch(a));
}

TEST_F(StoreTest, ExpiredRowsAreNotExactMatches) {
  Store s(db(), "enc", kDim, {});
  Vectors v(1);
  s.write([&](Store::Writer& w) {
    w.upsert({"ns", "p", "r", "{}", 1000, int64_t(5000), v.pooled, v.tokens, v.ids}, 1);
  });
  EXPECT_TRUE(s.find_exact("ns", "p", 4999));
  EXPECT_FALSE(s.find_exact("ns", "p", 5000));
  s.write([&](Store::Writer& w) { EXPECT_EQ(w.expired(5000).size(), 1u); });
}

TEST_F(StoreTest, WrongEncoderOrDimIsAConfigError) {
  { Store s(db(), "enc", kDim, {}); }
  EXPECT_THROW(Store(db(), "other", kDim, {}), ConfigError);
  EXPECT_THROW(Store(db(), "enc", kDim + 1, {}), ConfigError);
  StoreOptions o;
  o.create = false;
  EXPECT_THROW(Store((dir_ / "missing.sqlite").string(), "enc", kDim, o), ConfigError);
}

TEST_F(StoreTest, ForeignAndDamagedFilesAreFormatErrors) {
  {
    std::ofstream f(db(), std::ios::binary);
    f << std::string(5000, 'x');
  }
  EXPECT_THROW(Store(db(), "enc", kDim, {}), FormatError);
  fs::remove(db());
  // A valid SQLite file that is not a cache.
  {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &h), SQLITE_OK);
    sqlite3_exec(h, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr);
    sqlite3_close(h);
  }
  EXPECT_THROW(Store(db(), "enc", kDim, {}), FormatError);
}

TEST_F(StoreTest, TamperedBlobsAreCaughtByTheChecksum) {
  int64_t id;
  {
    Store s(db(), "enc", kDim, {});
    id = put(s, "ns", "p", "r", Vectors(2));
  }
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &h), SQLITE_OK);
  std::string flip = "UPDATE entry_tokens SET tokens = zeroblob(length(tokens)) WHERE id = " + std::to_string(id);
  ASSERT_EQ(sqlite3_exec(h, flip.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  Store s(db(), "enc", kDim, {});
  try {
    s.fetch(id);
    FAIL() << "expected a FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
  }
}

TEST_F(StoreTest, TruncatedFileIsAnErrorNotACrash) {
  {
    Store s(db(), "enc", kDim, {});
    for (int i = 0; i < 200; ++i) put(s, "ns", "prompt " + std::to_string(i), std::string(500, 'r'), Vectors(4));
  }
  ASSERT_FALSE(fs::exists(db() + "-wal") && fs::file_size(db() + "-wal") > 0);  // checkpointed on close
  fs::resize_file(db(), fs::file_size(db()) / 2);
  EXPECT_THROW(
      {
        Store s(db(), "enc", kDim, {});
        s.scan([](const IndexRow&) {});
      },
      Error);
}
