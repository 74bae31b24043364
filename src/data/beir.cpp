#include "data/beir.hpp"

#include <charconv>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "data/lines.hpp"
#include "text/utf8.hpp"

namespace verity::data {
namespace {

using nlohmann::json;
constexpr size_t kMaxUnknownExamples = 5;

void check_utf8(std::string_view line, const std::string& path, size_t line_no) {
  size_t bad = text::first_invalid_utf8(line);
  VERITY_CHECK(bad == std::string_view::npos, FormatError, path, ":", line_no,
               ": invalid UTF-8 at byte ", bad + 1, " of the line");
}

json parse_json_object(std::string_view line, const std::string& path, size_t line_no) {
  check_utf8(line, path, line_no);
  json obj;
  try {
    obj = json::parse(line);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw FormatError(cat(path, ":", line_no, ": malformed JSON: ", e.what()));
  }
  VERITY_CHECK(obj.is_object(), FormatError, path, ":", line_no, ": expected a JSON object, got ",
               obj.type_name());
  return obj;
}

// A required string field; `what` is e.g. "_id".
std::string required_string(const json& obj, const char* key, const std::string& path,
                            size_t line_no) {
  auto it = obj.find(key);
  VERITY_CHECK(it != obj.end(), FormatError, path, ":", line_no, ": missing field \"", key, "\"");
  VERITY_CHECK(it->is_string(), FormatError, path, ":", line_no, ": field \"", key,
               "\" must be a string, got ", it->type_name());
  return it->get<std::string>();
}

std::string required_id(const json& obj, const std::string& path, size_t line_no) {
  std::string id = required_string(obj, "_id", path, line_no);
  VERITY_CHECK(!id.empty(), FormatError, path, ":", line_no, ": field \"_id\" is empty");
  return id;
}

// Absent or null -> empty; any other non-string is an error.
std::string optional_string(const json& obj, const char* key, const std::string& path,
                            size_t line_no) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  VERITY_CHECK(it->is_string(), FormatError, path, ":", line_no, ": field \"", key,
               "\" must be a string, got ", it->type_name());
  return it->get<std::string>();
}

std::string join_path(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

}  // namespace

DocFields parse_doc_fields(std::string_view name) {
  if (name == "title+text") return DocFields::kTitleAndText;
  if (name == "text") return DocFields::kTextOnly;
  throw ConfigError(cat("unknown document fields \"", name, "\"; valid: title+text, text"));
}

std::string_view doc_fields_name(DocFields fields) {
  return fields == DocFields::kTitleAndText ? "title+text" : "text";
}

std::optional<size_t> Corpus::find(std::string_view id) const {
  auto it = index_of.find(std::string(id));
  if (it == index_of.end()) return std::nullopt;
  return it->second;
}

std::string Corpus::indexed_text(size_t i) const {
  VERITY_ASSERT(i < docs.size());
  const Document& d = docs[i];
  if (fields == DocFields::kTextOnly || d.title.empty()) return d.text;
  std::string s;
  s.reserve(d.title.size() + 1 + d.text.size());
  s.append(d.title).append(" ").append(d.text);
  return s;
}

std::string corpus_file(const std::string& dir_or_file) {
  return verity::is_directory(dir_or_file) ? dir_or_file + "/corpus.jsonl" : dir_or_file;
}

Corpus load_corpus(const std::string& path, DocFields fields) {
  Corpus corpus;
  corpus.path = path;
  corpus.fields = fields;
  std::vector<size_t> line_of;  // for naming the first occurrence of a duplicate id
  corpus.content_hash = for_each_content_line(path, [&](std::string_view line, size_t line_no) {
    json obj = parse_json_object(line, path, line_no);
    Document doc;
    doc.id = required_id(obj, path, line_no);
    doc.title = optional_string(obj, "title", path, line_no);
    doc.text = required_string(obj, "text", path, line_no);
    auto [it, inserted] = corpus.index_of.emplace(doc.id, corpus.docs.size());
    VERITY_CHECK(inserted, FormatError, path, ":", line_no, ": duplicate document id \"", doc.id,
                 "\" (first at line ", line_of[it->second], ")");
    corpus.docs.push_back(std::move(doc));
    line_of.push_back(line_no);
  });
  return corpus;
}

namespace {
std::vector<Query> load_queries_hashed(const std::string& path, uint64_t* hash) {
  std::vector<Query> queries;
  std::unordered_map<std::string, size_t> line_of;
  uint64_t h = for_each_content_line(path, [&](std::string_view line, size_t line_no) {
    json obj = parse_json_object(line, path, line_no);
    Query q;
    q.id = required_id(obj, path, line_no);
    q.text = required_string(obj, "text", path, line_no);
    auto [it, inserted] = line_of.emplace(q.id, line_no);
    VERITY_CHECK(inserted, FormatError, path, ":", line_no, ": duplicate query id \"", q.id,
                 "\" (first at line ", it->second, ")");
    queries.push_back(std::move(q));
  });
  if (hash) *hash = h;
  return queries;
}

struct QrelsRow {
  std::string query_id, doc_id;
  int grade;
  size_t line_no;
};

// Parses and validates the TSV; rows come back in file order.
std::vector<QrelsRow> read_qrels_rows(const std::string& path, uint64_t* hash) {
  std::vector<QrelsRow> rows;
  bool seen_header = false;
  std::map<std::pair<std::string, std::string>, size_t> line_of;
  uint64_t h = for_each_content_line(path, [&](std::string_view line, size_t line_no) {
    check_utf8(line, path, line_no);
    std::string_view f[3];
    size_t n = split_tabs(line, f, 3);
    if (!seen_header) {
      seen_header = true;
      VERITY_CHECK(n == 3 && f[0] == "query-id" && f[1] == "corpus-id" && f[2] == "score",
                   FormatError, path, ":", line_no,
                   ": missing header \"query-id<TAB>corpus-id<TAB>score\", found \"", line, "\"");
      return;
    }
    VERITY_CHECK(n == 3, FormatError, path, ":", line_no,
                 ": expected 3 tab-separated fields (query-id, corpus-id, score), found ", n);
    VERITY_CHECK(!f[0].empty(), FormatError, path, ":", line_no, ": empty query-id");
    VERITY_CHECK(!f[1].empty(), FormatError, path, ":", line_no, ": empty corpus-id");
    int grade = 0;
    auto [end, ec] = std::from_chars(f[2].data(), f[2].data() + f[2].size(), grade);
    VERITY_CHECK(ec == std::errc() && end == f[2].data() + f[2].size() && !f[2].empty(),
                 FormatError, path, ":", line_no, ": score \"", f[2], "\" is not an integer");
    QrelsRow row{std::string(f[0]), std::string(f[1]), grade, line_no};
    auto [it, inserted] = line_of.emplace(std::pair{row.query_id, row.doc_id}, line_no);
    VERITY_CHECK(inserted, FormatError, path, ":", line_no, ": duplicate row for query \"",
                 row.query_id, "\" and document \"", row.doc_id, "\" (first at line ", it->second,
                 ")");
    rows.push_back(std::move(row));
  });
  VERITY_CHECK(seen_header, FormatError, path, ":1: missing header \"query-id<TAB>corpus-id<TAB>score\" (empty file)");
  if (hash) *hash = h;
  return rows;
}
}  // namespace

std::vector<Query> load_queries(const std::string& path) {
  return load_queries_hashed(path, nullptr);
}

Qrels load_qrels(const std::string& path, size_t* rows) {
  Qrels qrels;
  auto parsed = read_qrels_rows(path, nullptr);
  for (auto& r : parsed) qrels[r.query_id][r.doc_id] = r.grade;
  if (rows) *rows = parsed.size();
  return qrels;
}

BeirDataset load_beir(const std::string& dir, const std::string& split,
                      const LoadOptions& options) {
  auto start = std::chrono::steady_clock::now();
  VERITY_CHECK(verity::is_directory(dir), FormatError, dir,
               ": not a directory (expected a BEIR dataset folder)");
  BeirDataset ds;
  ds.dir = dir;
  ds.split = split;
  ds.name = std::filesystem::path(dir).lexically_normal().filename().string();
  if (ds.name.empty()) ds.name = std::filesystem::path(dir).lexically_normal().parent_path().filename().string();

  const std::string qrels_path = join_path(join_path(dir, "qrels"), split + ".tsv");
  VERITY_CHECK(verity::file_exists(qrels_path), FormatError, qrels_path,
               ": no qrels for split \"", split, "\"");
  ds.corpus = load_corpus(join_path(dir, "corpus.jsonl"), options.fields);
  const std::string queries_path = join_path(dir, "queries.jsonl");
  std::vector<Query> all_queries = load_queries_hashed(queries_path, &ds.report.queries_hash);
  auto rows = read_qrels_rows(qrels_path, &ds.report.qrels_hash);

  LoadReport& rep = ds.report;
  rep.docs = ds.corpus.size();
  rep.queries_in_file = all_queries.size();
  rep.qrels_rows = rows.size();
  std::unordered_set<std::string_view> query_ids;
  for (const auto& q : all_queries) query_ids.insert(q.id);

  for (auto& r : rows) {
    const bool query_known = query_ids.count(r.query_id) > 0;
    const bool doc_known = ds.corpus.index_of.count(r.doc_id) > 0;
    if (query_known && doc_known) {
      ds.qrels[r.query_id][r.doc_id] = r.grade;
      continue;
    }
    std::string problem = !query_known
        ? cat(qrels_path, ":", r.line_no, ": query id \"", r.query_id, "\" is not in ", queries_path)
        : cat(qrels_path, ":", r.line_no, ": document id \"", r.doc_id, "\" is not in ",
              ds.corpus.path);
    VERITY_CHECK(!options.strict_qrels, FormatError, problem);
    (query_known ? rep.qrels_unknown_doc : rep.qrels_unknown_query)++;
    if (rep.unknown_examples.size() < kMaxUnknownExamples) rep.unknown_examples.push_back(problem);
  }
  rep.qrels_kept = rep.qrels_rows - rep.qrels_unknown_query - rep.qrels_unknown_doc;

  for (auto& q : all_queries)
    if (options.all_queries || ds.qrels.count(q.id)) ds.queries.push_back(std::move(q));
  rep.queries_kept = ds.queries.size();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rep.qrels_unknown_query + rep.qrels_unknown_doc > 0) log(ds.name, ": ", rep.summary());
  return ds;
}

std::string LoadReport::summary() const {
  std::string s = cat(docs, " docs, ", queries_kept, "/", queries_in_file, " queries kept, ",
                      qrels_kept, "/", qrels_rows, " qrels rows kept");
  if (qrels_unknown_query + qrels_unknown_doc > 0) {
    s += cat("; dropped ", qrels_unknown_query, " rows with unknown query ids and ",
             qrels_unknown_doc, " rows with unknown document ids, e.g.");
    for (const auto& e : unknown_examples) s += cat(" [", e, "]");
  }
  return s;
}

}  // namespace verity::data
