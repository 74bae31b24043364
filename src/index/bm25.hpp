#pragma once
// Lucene-style BM25 over an inverted index (term dictionary, postings with
// document index + term frequency, document lengths):
//   idf(t)  = ln(1 + (N - df + 0.5) / (df + 0.5))
//   score   = sum over query terms t (repeats count again, as in a Lucene
//             BooleanQuery) of idf(t) * tf*(k1+1) / (tf + k1*(1 - b + b*dl/avgdl))
// Unlike Lucene, document lengths are exact (Lucene quantizes them to a byte).
//
// File format ("VBM2", version 1, a SectionFile; every array little-endian):
//   PARM  f64 k1, f64 b, u64 num_docs N, u64 num_terms T, u64 num_postings P,
//         u64 total_length (sum of document lengths)
//   ANLZ  u32 length + analyzer spec (text::Analyzer::from_spec)
//   DIDO  u64[N+1] offsets into DIDS       DIDS  concatenated document ids
//   DLEN  u32[N]   document lengths in analyzed tokens
//   TRMO  u64[T+1] offsets into TRMS       TRMS  terms, sorted bytewise, unique
//   POFF  u64[T+1] posting offsets per term (df = POFF[t+1] - POFF[t] >= 1)
//   POST  Posting[P]: {u32 doc, u32 tf}, doc strictly increasing within a term
// load() maps the file and uses DLEN/TRMS/POST in place after checking every
// count, offset and posting for consistency.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/analyzer.hpp"

namespace verity::index {

struct Bm25Params {
  double k1 = 0.9;
  double b = 0.4;
};

struct Hit {
  uint32_t doc;  // document index (see Bm25Index::doc_id)
  float score;
};

class Bm25Index {
 public:
  struct Posting {
    uint32_t doc;
    uint32_t tf;
  };

  // Analyzes texts[i] (document doc_ids[i]) on `threads` threads (<= 0: all
  // cores). Throws ConfigError for mismatched spans, empty or duplicate ids or
  // bad params; FormatError naming the document for invalid UTF-8; Interrupted
  // on SIGINT. The result is independent of the thread count.
  static Bm25Index build(std::span<const std::string> doc_ids, std::span<const std::string> texts,
                         const text::Analyzer& analyzer, Bm25Params params = {}, int threads = 1);
  // Atomic write (temp file + rename).
  void save(const std::string& path) const;
  // Maps path; FormatError naming the file for any damage or inconsistency.
  static Bm25Index load(const std::string& path);

  Bm25Index(Bm25Index&&) noexcept;
  Bm25Index& operator=(Bm25Index&&) noexcept;
  ~Bm25Index();

  // Top k documents, highest score first, ties by lower document index.
  // Documents matching no query term are never returned (so fewer than k
  // hits is normal). Safe to call from many threads at once.
  std::vector<Hit> search(std::string_view query, size_t k) const;
  // Same with k1/b overridden for this call.
  std::vector<Hit> search(std::string_view query, size_t k, const Bm25Params& params) const;
  // Same for already analyzed terms (e.g. query_terms() output).
  std::vector<Hit> search_terms(std::span<const std::string> terms, size_t k,
                                const Bm25Params& params) const;
  // results[i] == search(queries[i], k), computed on `threads` threads (<= 0: all cores).
  std::vector<std::vector<Hit>> search_batch(std::span<const std::string> queries, size_t k,
                                             int threads) const;
  std::vector<std::vector<Hit>> search_batch(std::span<const std::string> queries, size_t k,
                                             int threads, const Bm25Params& params) const;

  // ---- statistics; `term` arguments are analyzed terms (query_terms()) ----
  size_t num_docs() const;
  size_t num_terms() const;
  uint64_t num_postings() const;
  uint64_t total_length() const;
  double avgdl() const;
  const Bm25Params& params() const;
  const text::Analyzer& analyzer() const;
  // The stored analyzer applied to text.
  std::vector<std::string> query_terms(std::string_view text) const;
  uint32_t df(std::string_view term) const;  // 0 if absent
  // idf from df(term); an absent term gets the df = 0 value (the maximum).
  double idf(std::string_view term) const;
  uint32_t doc_length(uint32_t doc) const;   // throws std::out_of_range
  std::string_view doc_id(uint32_t doc) const;  // throws std::out_of_range
  std::optional<uint32_t> term_id(std::string_view term) const;
  std::string_view term(uint32_t term_id) const;           // terms are sorted by id
  std::span<const Posting> postings(uint32_t term_id) const;

 private:
  struct Impl;
  explicit Bm25Index(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::index
