#pragma once
// Lexical residuality of a hard negative (docs/DIAGNOSTICS.md):
//   T(x)  = set of analyzed tokens of x (the BM25 analyzer, text::Analyzer)
//   idf(t)= ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)) over an IDF corpus of N documents
//   psi   = sum_{t in T(q) \ T(n)} idf(t) / sum_{t in T(q)} idf(t)
//   noncoverage = |T(q) \ T(n)| / |T(q)|
// When T(q) is empty (e.g. a stopwords-only query) both are defined as 0 and
// the triple is flagged, so no NaN reaches the aggregates.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/analyzer.hpp"

namespace verity::diagnose {

class IdfTable {
 public:
  IdfTable() = default;
  // df(t) = number of documents whose analyzed tokens contain t.
  IdfTable(size_t num_docs, std::unordered_map<std::string, uint32_t> df);
  static IdfTable build(std::span<const std::string> documents, const text::Analyzer& analyzer);
  // The same on `threads` workers; also returns each document's sorted unique
  // terms in *doc_terms (when given) so LexicalScorer::add_known_texts can
  // reuse this analysis for negatives that are corpus documents.
  static IdfTable build(std::span<const std::string> documents, const text::Analyzer& analyzer, int threads,
                        std::vector<std::vector<std::string>>* doc_terms);

  size_t num_docs() const { return num_docs_; }
  uint32_t df(std::string_view term) const;  // 0 if absent
  // Absent terms get the df = 0 value, the largest possible.
  double idf(std::string_view term) const;
  static double idf_from_df(size_t num_docs, uint32_t df);

 private:
  size_t num_docs_ = 0;
  std::unordered_map<std::string, uint32_t> df_;
};

struct LexicalScores {
  double residuality = 0;  // psi
  double noncoverage = 0;
  bool empty_query = false;  // T(q) was empty; both scores are 0 by definition
};

// Interns analyzed terms and caches each text's term set, so a text that
// recurs across triples (a query with many negatives) is analyzed once.
// Not thread-safe (terms() mutates the caches).
class LexicalScorer {
 public:
  LexicalScorer(const IdfTable& idf, text::Analyzer analyzer);
  // Sorted unique term ids of T(text). Throws FormatError for invalid UTF-8.
  const std::vector<uint32_t>& terms(const std::string& text);
  // Analyzes the texts not cached yet on `threads` workers (the analyzer is
  // thread-safe), then interns their terms serially. A text the analyzer
  // rejects is left out, so terms() reports it later with its context.
  void prepare(std::span<const std::string* const> texts, int threads);
  // Texts whose analysis is already known (IdfTable::build's doc_terms): used
  // instead of analyzing them again. `texts` must outlive the scorer.
  void add_known_texts(std::span<const std::string> texts, std::vector<std::vector<std::string>> terms);
  LexicalScores score(std::span<const uint32_t> query_terms,
                      std::span<const uint32_t> negative_terms) const;
  LexicalScores score(const std::string& query, const std::string& negative);
  double idf_of(uint32_t term_id) const { return idf_[term_id]; }

 private:
  // Sorted unique ids of `tokens`, interning new terms (and their idf).
  std::vector<uint32_t> intern(std::span<const std::string> tokens);

  const IdfTable& idf_table_;
  text::Analyzer analyzer_;
  std::unordered_map<std::string, uint32_t> term_ids_;
  std::vector<double> idf_;
  std::unordered_map<std::string, std::vector<uint32_t>> text_terms_;
  std::unordered_map<std::string_view, std::vector<std::string>> known_;  // sorted unique terms
  std::vector<std::string> scratch_;
};

}  // namespace verity::diagnose
