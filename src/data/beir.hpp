#pragma once
// BEIR dataset layout: <dir>/corpus.jsonl, <dir>/queries.jsonl, <dir>/qrels/<split>.tsv.
//
// Input rules (every violation is a FormatError naming the file and the 1-based line):
//  - corpus.jsonl: one JSON object per line with string "_id" and "text"; "title" may be
//    absent or null (-> empty). Other fields are ignored. Ids are unique.
//  - queries.jsonl: string "_id" and "text"; ids unique.
//  - qrels/<split>.tsv: header "query-id<TAB>corpus-id<TAB>score", then rows of exactly three
//    tab-separated fields with an integer score; a (query, doc) pair appears once.
//  - All text must be valid UTF-8.
//  - Blank lines at the end of a file are ignored; a blank line followed by more content is
//    an error (BEIR files have none, so one in the middle signals a damaged file).
// Qrels rows naming a query or document that does not exist are counted, logged and left
// out of the returned qrels (so they never reach evaluation); LoadOptions::strict_qrels
// makes them fatal instead.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace verity::data {

struct Document {
  std::string id, title, text;
};

// Which fields form the text that gets indexed and encoded.
enum class DocFields {
  kTitleAndText,  // title + " " + text (just text when the title is empty)
  kTextOnly,
};
// "title+text" or "text"; anything else is a ConfigError listing both.
DocFields parse_doc_fields(std::string_view name);
std::string_view doc_fields_name(DocFields fields);

struct Corpus {
  std::vector<Document> docs;
  std::unordered_map<std::string, size_t> index_of;  // doc id -> position in docs
  std::string path;                                  // the corpus.jsonl it came from
  uint64_t content_hash = 0;                         // fnv1a64 of the raw file bytes
  DocFields fields = DocFields::kTitleAndText;

  size_t size() const { return docs.size(); }
  std::optional<size_t> find(std::string_view id) const;
  // The text to index for docs[i], according to `fields`.
  std::string indexed_text(size_t i) const;
};

struct Query {
  std::string id, text;
};

// query id -> doc id -> grade. Grades are kept as given (0 and negative included);
// a document is relevant when its grade is > 0.
using Qrels = std::map<std::string, std::map<std::string, int>>;

struct LoadOptions {
  DocFields fields = DocFields::kTitleAndText;
  // false: keep only queries that have at least one qrels row in the split (BEIR's rule).
  bool all_queries = false;
  // true: a qrels row naming an unknown query or document is a FormatError.
  bool strict_qrels = false;
};

struct LoadReport {
  size_t docs = 0;
  size_t queries_in_file = 0;
  size_t queries_kept = 0;
  size_t qrels_rows = 0;               // data rows in the qrels file (header excluded)
  size_t qrels_kept = 0;               // rows that made it into BeirDataset::qrels
  size_t qrels_unknown_query = 0;      // rows whose query id is not in queries.jsonl
  size_t qrels_unknown_doc = 0;        // rows whose doc id is not in corpus.jsonl (query known)
  std::vector<std::string> unknown_examples;  // "file:line: ..." for the first few
  uint64_t queries_hash = 0, qrels_hash = 0;  // fnv1a64 of the raw file bytes
  double seconds = 0;

  // One line for logs: counts plus the dropped-row examples, if any.
  std::string summary() const;
};

struct BeirDataset {
  std::string name;  // basename of the directory
  std::string dir, split;
  Corpus corpus;
  std::vector<Query> queries;  // file order
  Qrels qrels;
  LoadReport report;
};

Corpus load_corpus(const std::string& path, DocFields fields = DocFields::kTitleAndText);
// The corpus file a path names: <path>/corpus.jsonl for a BEIR directory, else the path.
std::string corpus_file(const std::string& dir_or_file);
std::vector<Query> load_queries(const std::string& path);
// Reads a qrels TSV as is (no id checks); `rows` receives the number of data rows.
Qrels load_qrels(const std::string& path, size_t* rows = nullptr);

// Loads the dataset and checks qrels against corpus and queries (see the top of this file).
BeirDataset load_beir(const std::string& dir, const std::string& split = "test",
                      const LoadOptions& options = {});

}  // namespace verity::data
