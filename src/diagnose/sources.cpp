#include "diagnose/sources.hpp"

#include <algorithm>
#include <random>
#include <unordered_map>

#include "core/error.hpp"
#include "index/bm25.hpp"

namespace verity::diagnose {
namespace {

struct Pair {
  size_t query;  // index into ds.queries
  size_t doc;    // index into ds.corpus.docs
};

// Relevant (grade > 0) documents of each query, in qrels (doc id) order.
std::vector<std::vector<size_t>> relevant_docs(const data::BeirDataset& ds) {
  std::vector<std::vector<size_t>> rel(ds.queries.size());
  for (size_t qi = 0; qi < ds.queries.size(); ++qi) {
    auto it = ds.qrels.find(ds.queries[qi].id);
    if (it == ds.qrels.end()) continue;
    for (const auto& [doc_id, grade] : it->second)
      if (grade > 0)
        if (auto d = ds.corpus.find(doc_id)) rel[qi].push_back(*d);
  }
  return rel;
}

std::vector<Pair> pairs_of(const std::vector<std::vector<size_t>>& rel) {
  std::vector<Pair> pairs;
  for (size_t qi = 0; qi < rel.size(); ++qi)
    for (size_t d : rel[qi]) pairs.push_back({qi, d});
  return pairs;
}

data::Triple triple(const data::BeirDataset& ds, const Pair& p, size_t negative, std::string source,
                    std::string type) {
  data::Triple t;
  t.query = ds.queries[p.query].text;
  t.positive = ds.corpus.indexed_text(p.doc);
  t.negative = ds.corpus.indexed_text(negative);
  t.source = std::move(source);
  t.type = std::move(type);
  return t;
}

bool contains(const std::vector<size_t>& v, size_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
}  // namespace

BuiltSource make_unrelated_source(const data::BeirDataset& ds, uint64_t seed) {
  auto rel = relevant_docs(ds);
  BuiltSource out;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, ds.corpus.size() - 1);
  VERITY_CHECK(ds.corpus.size() > 0, ConfigError, ds.dir, ": empty corpus");
  for (const auto& p : pairs_of(rel)) {
    ++out.pairs;
    if (rel[p.query].size() >= ds.corpus.size()) {
      ++out.dropped;  // every document is relevant: nothing unrelated exists
      continue;
    }
    size_t neg;
    do neg = pick(rng);
    while (contains(rel[p.query], neg));
    out.triples.push_back(triple(ds, p, neg, "unrelated", "random-document"));
  }
  return out;
}

BuiltSource make_false_negative_source(const data::BeirDataset& ds, LexicalScorer& lexical, uint64_t seed) {
  auto rel = relevant_docs(ds);
  BuiltSource out;
  std::mt19937_64 rng(seed);
  // For queries with a single relevant document: the other query whose terms
  // overlap this one's most (sum of idf over shared terms), ties to the first.
  std::vector<const std::vector<uint32_t>*> terms(ds.queries.size());
  for (size_t qi = 0; qi < ds.queries.size(); ++qi) terms[qi] = &lexical.terms(ds.queries[qi].text);
  auto overlap = [&](size_t a, size_t b) {
    double s = 0;
    auto it = terms[b]->begin();
    for (uint32_t t : *terms[a]) {
      while (it != terms[b]->end() && *it < t) ++it;
      if (it != terms[b]->end() && *it == t) s += lexical.idf_of(t);
    }
    return s;
  };
  for (const auto& p : pairs_of(rel)) {
    ++out.pairs;
    std::vector<size_t> others;
    for (size_t d : rel[p.query])
      if (d != p.doc) others.push_back(d);
    if (!others.empty()) {
      std::uniform_int_distribution<size_t> pick(0, others.size() - 1);
      out.triples.push_back(triple(ds, p, others[pick(rng)], "false-negative", "known-relevant"));
      continue;
    }
    double best = 0;
    size_t best_doc = SIZE_MAX;
    for (size_t qj = 0; qj < ds.queries.size(); ++qj) {
      if (qj == p.query || rel[qj].empty()) continue;
      double s = overlap(p.query, qj);
      if (s <= best) continue;
      for (size_t d : rel[qj])
        if (d != p.doc) {
          best = s;
          best_doc = d;
          break;
        }
    }
    if (best_doc == SIZE_MAX) {
      ++out.dropped;
      continue;
    }
    out.triples.push_back(triple(ds, p, best_doc, "false-negative", "overlapping-query-positive"));
  }
  return out;
}

BuiltSource make_bm25_source(const data::BeirDataset& ds, const index::Bm25Index& bm25, size_t depth) {
  auto rel = relevant_docs(ds);
  BuiltSource out;
  std::unordered_map<std::string, size_t> doc_of;  // the index's document ids -> corpus position
  for (size_t i = 0; i < ds.corpus.size(); ++i) doc_of.emplace(ds.corpus.docs[i].id, i);
  for (size_t qi = 0; qi < rel.size(); ++qi) {
    if (rel[qi].empty()) continue;
    auto hits = bm25.search(ds.queries[qi].text, depth);
    std::optional<size_t> negative;
    size_t rank = 0;
    float score = 0;
    for (size_t h = 0; h < hits.size() && !negative; ++h) {
      auto it = doc_of.find(std::string(bm25.doc_id(hits[h].doc)));
      VERITY_CHECK(it != doc_of.end(), ConfigError, "bm25 index document \"", bm25.doc_id(hits[h].doc),
                   "\" is not in ", ds.corpus.path);
      if (contains(rel[qi], it->second)) continue;
      negative = it->second;
      rank = h + 1;
      score = hits[h].score;
    }
    for (size_t d : rel[qi]) {
      ++out.pairs;
      if (!negative) {
        ++out.dropped;
        continue;
      }
      auto t = triple(ds, {qi, d}, *negative, "bm25", "");
      t.rank = int64_t(rank);
      t.score = score;
      out.triples.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace verity::diagnose
