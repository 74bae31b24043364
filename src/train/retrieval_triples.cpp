#include "train/retrieval_triples.hpp"

#include <random>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "index/bm25.hpp"
#include "text/analyzer.hpp"

namespace verity::train {

bool held_out_query(const std::string& id, double fraction) {
  VERITY_CHECK(fraction >= 0 && fraction <= 1, ConfigError, "held-out fraction ", fraction,
               " must be in [0, 1]");
  return double(fnv1a64(id.data(), id.size()) % 1000000) < fraction * 1000000.0;
}

RetrievalTriples bm25_retrieval_triples(const data::BeirDataset& dataset,
                                        const RetrievalTripleOptions& options) {
  VERITY_CHECK(options.top > 0, ConfigError, "retrieval triples: top must be > 0");
  const auto& corpus = dataset.corpus;
  std::vector<std::string> ids, texts;
  ids.reserve(corpus.size());
  texts.reserve(corpus.size());
  for (size_t i = 0; i < corpus.size(); ++i) {
    ids.push_back(corpus.docs[i].id);
    texts.push_back(corpus.indexed_text(i));
  }
  const auto bm25 = index::Bm25Index::build(ids, texts, text::Analyzer::from_spec(options.analyzer),
                                            index::Bm25Params{}, options.threads);
  RetrievalTriples out;
  std::mt19937_64 rng(options.seed ^ 0x5deece66dULL);
  for (const auto& q : dataset.queries) {
    auto judged = dataset.qrels.find(q.id);
    if (judged == dataset.qrels.end()) continue;
    std::vector<size_t> relevant;
    for (const auto& [doc, grade] : judged->second)
      if (grade > 0)
        if (auto pos = corpus.find(doc)) relevant.push_back(*pos);
    if (relevant.empty()) continue;
    ++out.queries;
    std::vector<std::pair<size_t, size_t>> negatives;  // (doc, 1-based rank)
    const auto hits = bm25.search(q.text, options.top);
    for (size_t r = 0; r < hits.size(); ++r) {
      const auto doc = std::string(bm25.doc_id(hits[r].doc));
      auto grade = judged->second.find(doc);
      if (grade == judged->second.end() || grade->second <= 0) negatives.emplace_back(hits[r].doc, r + 1);
    }
    if (negatives.empty()) {
      ++out.no_negative;
      continue;
    }
    for (size_t pos : relevant) {
      const auto [neg, rank] = negatives[std::uniform_int_distribution<size_t>(0, negatives.size() - 1)(rng)];
      data::Triple t;
      t.query = q.text;
      t.positive = corpus.indexed_text(pos);
      t.negative = corpus.indexed_text(neg);
      t.type = "retrieval";
      t.source = "bm25";
      t.rank = int64_t(rank);
      out.triples.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace verity::train
