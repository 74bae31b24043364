#include "data/beir.hpp"
#include "text/utf8.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/io.hpp"

using namespace verity;
using namespace verity::data;
namespace fs = std::filesystem;

namespace {

const std::string kCorpus =
    R"({"_id": "d1", "title": "Alpha", "text": "first doc"})"
    "\n"
    R"({"_id": "d2", "text": "no title"})"
    "\n"
    R"({"_id": "d3", "title": null, "text": "null title", "metadata": {}})"
    "\n";
const std::string kQueries =
    R"({"_id": "q1", "text": "alpha?"})"
    "\n"
    R"({"_id": "q2", "text": "beta?"})"
    "\n"
    R"({"_id": "q3", "text": "no qrels"})"
    "\n";
const std::string kQrels = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td3\t1\n";

// A BEIR folder in a fresh temp directory; files can be overwritten per test.
class BeirDir {
 public:
  explicit BeirDir(const std::string& name) {
    dir_ = (fs::temp_directory_path() /
            ("verity_beir_" + std::to_string(::getpid()) + "_" + name)).string();
    fs::remove_all(dir_);
    fs::create_directories(fs::path(dir_) / "qrels");
    write("corpus.jsonl", kCorpus);
    write("queries.jsonl", kQueries);
    write("qrels/test.tsv", kQrels);
  }
  ~BeirDir() { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& contents) {
    std::ofstream(path(rel), std::ios::binary) << contents;
  }
  std::string path(const std::string& rel) const { return (fs::path(dir_) / rel).string(); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// Runs load_beir and returns the FormatError message ("" if it loaded).
std::string load_error(const BeirDir& d, const LoadOptions& options = {}) {
  try {
    load_beir(d.dir(), "test", options);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

// Asserts the message starts with "<path>:<line>:" and mentions `what`.
void expect_names(const std::string& message, const std::string& path, size_t line,
                  const std::string& what) {
  EXPECT_EQ(message.rfind(path + ":" + std::to_string(line) + ":", 0), 0u) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
}

}  // namespace

TEST(Beir, LoadsValidDataset) {
  BeirDir d("valid");
  auto ds = load_beir(d.dir());
  EXPECT_EQ(ds.name, fs::path(d.dir()).filename().string());
  EXPECT_EQ(ds.split, "test");
  ASSERT_EQ(ds.corpus.size(), 3u);
  EXPECT_EQ(ds.corpus.docs[0].title, "Alpha");
  EXPECT_EQ(ds.corpus.docs[1].title, "");
  EXPECT_EQ(ds.corpus.docs[2].title, "");
  EXPECT_EQ(ds.corpus.find("d2"), 1u);
  EXPECT_FALSE(ds.corpus.find("nope").has_value());
  EXPECT_EQ(ds.corpus.indexed_text(0), "Alpha first doc");
  EXPECT_EQ(ds.corpus.indexed_text(1), "no title");  // no leading space for empty titles
  EXPECT_EQ(ds.corpus.path, d.path("corpus.jsonl"));
  EXPECT_EQ(ds.corpus.content_hash, fnv1a64(kCorpus.data(), kCorpus.size()));

  // q3 has no qrels rows, so BEIR's rule leaves it out.
  ASSERT_EQ(ds.queries.size(), 2u);
  EXPECT_EQ(ds.queries[0].id, "q1");
  EXPECT_EQ(ds.queries[1].text, "beta?");
  // Grade 0 rows are kept as given.
  EXPECT_EQ(ds.qrels.at("q1").at("d1"), 2);
  EXPECT_EQ(ds.qrels.at("q1").at("d2"), 0);
  EXPECT_EQ(ds.qrels.at("q2").at("d3"), 1);
  EXPECT_EQ(ds.report.qrels_rows, 3u);
  EXPECT_EQ(ds.report.qrels_kept, 3u);
  EXPECT_EQ(ds.report.queries_in_file, 3u);
  EXPECT_EQ(ds.report.queries_kept, 2u);
}

TEST(Beir, OptionsTextOnlyAndAllQueries) {
  BeirDir d("options");
  LoadOptions opt;
  opt.fields = parse_doc_fields("text");
  opt.all_queries = true;
  auto ds = load_beir(d.dir(), "test", opt);
  EXPECT_EQ(ds.corpus.indexed_text(0), "first doc");
  EXPECT_EQ(ds.queries.size(), 3u);
  EXPECT_EQ(parse_doc_fields("title+text"), DocFields::kTitleAndText);
  EXPECT_THROW(parse_doc_fields("title"), ConfigError);
}

TEST(Beir, MissingSplitOrDirectory) {
  BeirDir d("split");
  try {
    load_beir(d.dir(), "dev");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("dev.tsv"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_beir(d.path("nothing_here")), FormatError);
}

TEST(Beir, MalformedJson) {
  BeirDir d("badjson");
  d.write("corpus.jsonl", kCorpus + R"({"_id": "d4", "text": "unterminated)" "\n");
  expect_names(load_error(d), d.path("corpus.jsonl"), 4, "malformed JSON");
  d.write("corpus.jsonl", "[1, 2]\n");
  expect_names(load_error(d), d.path("corpus.jsonl"), 1, "expected a JSON object");
  // Found by fuzz/beir_corpus.cpp: a number beyond double's range is the JSON
  // library's out_of_range, not its parse_error, and escaped as a raw exception.
  d.write("corpus.jsonl", kCorpus + R"({"_id": "d4", "text": "t", "n": 8E5555555555})" "\n");
  expect_names(load_error(d), d.path("corpus.jsonl"), 4, "malformed JSON");
  // The same in queries.jsonl (found by fuzz/beir_queries.cpp).
  d.write("corpus.jsonl", kCorpus);
  d.write("queries.jsonl", R"({"_id": "q1", "text": "t", "n": 19919e9919})" "\n");
  expect_names(load_error(d), d.path("queries.jsonl"), 1, "malformed JSON");
}

TEST(Beir, MissingOrNonStringId) {
  BeirDir d("badid");
  d.write("corpus.jsonl", kCorpus + R"({"title": "t", "text": "x"})" "\n");
  expect_names(load_error(d), d.path("corpus.jsonl"), 4, "missing field \"_id\"");
  d.write("corpus.jsonl", R"({"_id": 17, "text": "x"})" "\n");
  expect_names(load_error(d), d.path("corpus.jsonl"), 1, "\"_id\" must be a string");
  d.write("corpus.jsonl", R"({"_id": "", "text": "x"})" "\n");
  expect_names(load_error(d), d.path("corpus.jsonl"), 1, "\"_id\" is empty");
  d.write("corpus.jsonl", kCorpus);
  d.write("queries.jsonl", R"({"_id": ["q1"], "text": "x"})" "\n");
  expect_names(load_error(d), d.path("queries.jsonl"), 1, "\"_id\" must be a string");
}

TEST(Beir, MissingTextAndBadTitle) {
  BeirDir d("badtext");
  d.write("corpus.jsonl", R"({"_id": "d1", "title": "only a title"})" "\n");
  expect_names(load_error(d), d.path("corpus.jsonl"), 1, "missing field \"text\"");
  d.write("corpus.jsonl", R"({"_id": "d1", "title": 3, "text": "x"})" "\n");
  expect_names(load_error(d), d.path("corpus.jsonl"), 1, "\"title\" must be a string");
  d.write("corpus.jsonl", kCorpus);
  d.write("queries.jsonl", R"({"_id": "q1"})" "\n");
  expect_names(load_error(d), d.path("queries.jsonl"), 1, "missing field \"text\"");
}

TEST(Beir, DuplicateIds) {
  BeirDir d("dups");
  d.write("corpus.jsonl", kCorpus + R"({"_id": "d2", "text": "again"})" "\n");
  std::string msg = load_error(d);
  expect_names(msg, d.path("corpus.jsonl"), 4, "duplicate document id \"d2\"");
  EXPECT_NE(msg.find("first at line 2"), std::string::npos) << msg;
  d.write("corpus.jsonl", kCorpus);
  d.write("queries.jsonl", kQueries + R"({"_id": "q1", "text": "again"})" "\n");
  msg = load_error(d);
  expect_names(msg, d.path("queries.jsonl"), 4, "duplicate query id \"q1\"");
  EXPECT_NE(msg.find("first at line 1"), std::string::npos) << msg;
}

TEST(Beir, InvalidUtf8) {
  BeirDir d("utf8");
  // 0xC3 0x28: a two-byte lead followed by a non-continuation byte.
  d.write("corpus.jsonl", kCorpus + "{\"_id\": \"d4\", \"text\": \"caf\xC3\x28\"}\n");
  expect_names(load_error(d), d.path("corpus.jsonl"), 4, "invalid UTF-8 at byte 27");
  d.write("corpus.jsonl", kCorpus);
  d.write("queries.jsonl", "{\"_id\": \"q1\", \"text\": \"\xED\xA0\x80\"}\n");  // surrogate
  expect_names(load_error(d), d.path("queries.jsonl"), 1, "invalid UTF-8");
  d.write("queries.jsonl", kQueries);
  d.write("qrels/test.tsv", kQrels + "q\xFF\td1\t1\n");
  expect_names(load_error(d), d.path("qrels/test.tsv"), 5, "invalid UTF-8");
}

TEST(Beir, Utf8Validator) {
  const auto npos = std::string_view::npos;
  EXPECT_EQ(text::first_invalid_utf8("plain"), npos);
  EXPECT_EQ(text::first_invalid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), npos);
  EXPECT_EQ(text::first_invalid_utf8("ab\xC0\xAF"), 2u);          // overlong '/'
  EXPECT_EQ(text::first_invalid_utf8("\xE0\x80\xAF"), 0u);        // overlong, 3 bytes
  EXPECT_EQ(text::first_invalid_utf8("x\xED\xA0\x80"), 1u);       // U+D800
  EXPECT_EQ(text::first_invalid_utf8("\xF4\x90\x80\x80"), 0u);    // above U+10FFFF
  EXPECT_EQ(text::first_invalid_utf8("ok\xE2\x82"), 2u);          // truncated
  EXPECT_EQ(text::first_invalid_utf8("\x80"), 0u);                // stray continuation
}

TEST(Beir, QrelsBadRows) {
  BeirDir d("qrelsrows");
  const std::string qrels = d.path("qrels/test.tsv");
  d.write("qrels/test.tsv", kQrels + "q2\td1\n");
  expect_names(load_error(d), qrels, 5, "expected 3 tab-separated fields");
  d.write("qrels/test.tsv", kQrels + "q2\td1\t1\textra\n");
  expect_names(load_error(d), qrels, 5, "found 4");
  d.write("qrels/test.tsv", kQrels + "q2 d1 1\n");  // spaces, not tabs
  expect_names(load_error(d), qrels, 5, "found 1");
  d.write("qrels/test.tsv", kQrels + "q2\td1\t1.5\n");
  expect_names(load_error(d), qrels, 5, "score \"1.5\" is not an integer");
  d.write("qrels/test.tsv", kQrels + "q2\td1\t\n");
  expect_names(load_error(d), qrels, 5, "is not an integer");
  d.write("qrels/test.tsv", kQrels + "q2\td1\tx\n");
  expect_names(load_error(d), qrels, 5, "is not an integer");
  d.write("qrels/test.tsv", kQrels + "\td1\t1\n");
  expect_names(load_error(d), qrels, 5, "empty query-id");
  d.write("qrels/test.tsv", kQrels + "q1\td1\t1\n");
  std::string msg = load_error(d);
  expect_names(msg, qrels, 5, "duplicate row");
  EXPECT_NE(msg.find("first at line 2"), std::string::npos) << msg;
}

TEST(Beir, QrelsHeader) {
  BeirDir d("qrelsheader");
  const std::string qrels = d.path("qrels/test.tsv");
  d.write("qrels/test.tsv", "q1\td1\t1\n");
  expect_names(load_error(d), qrels, 1, "missing header");
  d.write("qrels/test.tsv", "");
  expect_names(load_error(d), qrels, 1, "missing header");
  d.write("qrels/test.tsv", "query-id\tcorpus-id\tscore\n");  // header only: no rows
  auto ds = load_beir(d.dir());
  EXPECT_EQ(ds.report.qrels_rows, 0u);
  EXPECT_TRUE(ds.queries.empty());
}

TEST(Beir, NegativeGradesKept) {
  BeirDir d("negative");
  d.write("qrels/test.tsv", kQrels + "q2\td1\t-1\n");
  auto ds = load_beir(d.dir());
  EXPECT_EQ(ds.qrels.at("q2").at("d1"), -1);
}

TEST(Beir, BlankLines) {
  BeirDir d("blank");
  // Trailing blank lines (and CRLF endings) are fine.
  d.write("corpus.jsonl", kCorpus + "\n\r\n  \n");
  d.write("qrels/test.tsv", "query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\n\n");
  auto ds = load_beir(d.dir());
  EXPECT_EQ(ds.corpus.size(), 3u);
  EXPECT_EQ(ds.qrels.at("q1").at("d1"), 1);
  // A blank line in the middle is an error naming the blank line.
  d.write("corpus.jsonl", R"({"_id": "d1", "text": "a"})" "\n\n" R"({"_id": "d2", "text": "b"})" "\n");
  expect_names(load_error(d), d.path("corpus.jsonl"), 2, "blank line before more content");
  d.write("corpus.jsonl", kCorpus);
  d.write("qrels/test.tsv", "query-id\tcorpus-id\tscore\n\nq1\td1\t1\n");
  expect_names(load_error(d), d.path("qrels/test.tsv"), 2, "blank line");
}

TEST(Beir, UnknownQrelsIdsAreCountedAndDropped) {
  BeirDir d("unknown");
  d.write("qrels/test.tsv", kQrels + "q9\td1\t1\nq2\td9\t1\nq8\td8\t1\n");
  auto ds = load_beir(d.dir());
  EXPECT_EQ(ds.report.qrels_rows, 6u);
  EXPECT_EQ(ds.report.qrels_kept, 3u);
  EXPECT_EQ(ds.report.qrels_unknown_query, 2u);  // q9 and q8 (q8's doc is unknown too)
  EXPECT_EQ(ds.report.qrels_unknown_doc, 1u);
  EXPECT_FALSE(ds.qrels.count("q9"));
  EXPECT_FALSE(ds.qrels.at("q2").count("d9"));
  ASSERT_EQ(ds.report.unknown_examples.size(), 3u);
  EXPECT_EQ(ds.report.unknown_examples[0].rfind(d.path("qrels/test.tsv") + ":5:", 0), 0u);
  EXPECT_NE(ds.report.unknown_examples[1].find("document id \"d9\""), std::string::npos);
  std::string summary = ds.report.summary();
  EXPECT_NE(summary.find("dropped 2 rows with unknown query ids and 1 rows with unknown document"),
            std::string::npos)
      << summary;

  LoadOptions strict;
  strict.strict_qrels = true;
  expect_names(load_error(d, strict), d.path("qrels/test.tsv"), 5, "query id \"q9\" is not in");
}

TEST(Beir, LoadQrelsAlone) {
  BeirDir d("qrelsalone");
  size_t rows = 0;
  auto qrels = load_qrels(d.path("qrels/test.tsv"), &rows);
  EXPECT_EQ(rows, 3u);
  EXPECT_EQ(qrels.size(), 2u);
  EXPECT_EQ(load_queries(d.path("queries.jsonl")).size(), 3u);
  EXPECT_EQ(load_corpus(d.path("corpus.jsonl")).size(), 3u);
}

TEST(Beir, RealSciFact) {
  const std::string dir = std::string(VERITY_SHARED_DATA) + "/beir/scifact";
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " not present";
  auto start = std::chrono::steady_clock::now();
  auto ds = load_beir(dir, "test");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(ds.name, "scifact");
  EXPECT_EQ(ds.corpus.size(), 5183u);
  EXPECT_EQ(ds.report.queries_in_file, 1109u);
  EXPECT_EQ(ds.queries.size(), 300u);
  EXPECT_EQ(ds.report.qrels_rows, 339u);
  EXPECT_EQ(ds.report.qrels_kept, 339u);
  size_t pairs = 0;
  for (const auto& [q, docs] : ds.qrels) pairs += docs.size();
  EXPECT_EQ(pairs, 339u);
  std::cerr << "scifact load: " << seconds << " s; " << ds.report.summary() << "\n";
}
