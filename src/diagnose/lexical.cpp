#include "diagnose/lexical.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "diagnose/detail/parallel.hpp"

namespace verity::diagnose {

IdfTable::IdfTable(size_t num_docs, std::unordered_map<std::string, uint32_t> df)
    : num_docs_(num_docs), df_(std::move(df)) {
  for (const auto& [term, count] : df_)
    VERITY_CHECK(count <= num_docs_, ConfigError, "idf table: df(\"", term, "\") = ", count,
                 " exceeds the ", num_docs_, " documents");
}

IdfTable IdfTable::build(std::span<const std::string> documents, const text::Analyzer& analyzer, int threads,
                         std::vector<std::vector<std::string>>* doc_terms) {
  std::vector<std::vector<std::string>> terms(documents.size());
  std::vector<std::string> errors(documents.size());
  detail::parallel_for(documents.size(), threads, [&](size_t i) {
    try {
      analyzer.analyze(documents[i], terms[i]);
    } catch (const FormatError& e) {
      errors[i] = e.what();
      return;
    }
    std::sort(terms[i].begin(), terms[i].end());
    terms[i].erase(std::unique(terms[i].begin(), terms[i].end()), terms[i].end());
  });
  for (size_t i = 0; i < documents.size(); ++i)
    VERITY_CHECK(errors[i].empty(), FormatError, "idf corpus document ", i + 1, ": ", errors[i]);
  std::unordered_map<std::string, uint32_t> df;
  for (const auto& t : terms)
    for (const auto& term : t) ++df[term];
  if (doc_terms) *doc_terms = std::move(terms);
  return IdfTable(documents.size(), std::move(df));
}

IdfTable IdfTable::build(std::span<const std::string> documents, const text::Analyzer& analyzer) {
  return build(documents, analyzer, 1, nullptr);
}

uint32_t IdfTable::df(std::string_view term) const {
  auto it = df_.find(std::string(term));
  return it == df_.end() ? 0 : it->second;
}

double IdfTable::idf_from_df(size_t num_docs, uint32_t df) {
  double n = double(num_docs), d = double(df);
  return std::log(1.0 + (n - d + 0.5) / (d + 0.5));
}

double IdfTable::idf(std::string_view term) const { return idf_from_df(num_docs_, df(term)); }

LexicalScorer::LexicalScorer(const IdfTable& idf, text::Analyzer analyzer)
    : idf_table_(idf), analyzer_(std::move(analyzer)) {}

const std::vector<uint32_t>& LexicalScorer::terms(const std::string& text) {
  auto found = text_terms_.find(text);
  if (found != text_terms_.end()) return found->second;
  scratch_.clear();
  analyzer_.analyze(text, scratch_);
  return text_terms_.emplace(text, intern(scratch_)).first->second;
}

std::vector<uint32_t> LexicalScorer::intern(std::span<const std::string> tokens) {
  std::vector<uint32_t> ids;
  ids.reserve(tokens.size());
  for (const auto& token : tokens) {
    auto [it, inserted] = term_ids_.try_emplace(token, uint32_t(idf_.size()));
    if (inserted) idf_.push_back(idf_table_.idf(token));
    ids.push_back(it->second);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void LexicalScorer::add_known_texts(std::span<const std::string> texts,
                                    std::vector<std::vector<std::string>> terms) {
  VERITY_CHECK(texts.size() == terms.size(), ConfigError, "lexical: ", terms.size(), " term lists for ",
               texts.size(), " texts");
  for (size_t i = 0; i < texts.size(); ++i) known_.try_emplace(texts[i], std::move(terms[i]));
}

void LexicalScorer::prepare(std::span<const std::string* const> texts, int threads) {
  std::vector<const std::string*> pending;
  std::unordered_map<std::string_view, bool> queued;
  for (const std::string* t : texts)
    if (!text_terms_.count(*t) && queued.emplace(*t, true).second) pending.push_back(t);
  std::vector<std::vector<std::string>> tokens(pending.size());
  std::vector<char> ok(pending.size(), 0);
  detail::parallel_for(pending.size(), threads, [&](size_t i) {
    if (known_.count(*pending[i])) {  // analyzed by the IDF pass: interned below
      ok[i] = 1;
      return;
    }
    try {
      analyzer_.analyze(*pending[i], tokens[i]);
    } catch (const Error&) {
      return;  // terms() will throw with the caller's context
    }
    std::sort(tokens[i].begin(), tokens[i].end());
    tokens[i].erase(std::unique(tokens[i].begin(), tokens[i].end()), tokens[i].end());
    ok[i] = 1;
  });
  for (size_t i = 0; i < pending.size(); ++i) {
    if (!ok[i]) continue;
    auto k = known_.find(*pending[i]);
    text_terms_.emplace(*pending[i], intern(k != known_.end() ? k->second : tokens[i]));
  }
}

LexicalScores LexicalScorer::score(std::span<const uint32_t> q, std::span<const uint32_t> n) const {
  LexicalScores s;
  if (q.empty()) {
    s.empty_query = true;
    return s;
  }
  double total = 0, residual = 0;
  size_t missing = 0;
  auto it = n.begin();
  for (uint32_t t : q) {  // both sorted: one merge pass
    while (it != n.end() && *it < t) ++it;
    bool covered = it != n.end() && *it == t;
    total += idf_[t];
    if (!covered) {
      residual += idf_[t];
      ++missing;
    }
  }
  s.residuality = residual / total;  // idf > 0 for every term, so total > 0
  s.noncoverage = double(missing) / double(q.size());
  return s;
}

LexicalScores LexicalScorer::score(const std::string& query, const std::string& negative) {
  const auto& q = terms(query);  // unordered_map references survive rehashing
  return score(q, terms(negative));
}

}  // namespace verity::diagnose
