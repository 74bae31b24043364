#include "mine/miner.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "core/crc32c.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "encode/registry.hpp"
#include "eval/retrieval_eval.hpp"
#include "index/bm25.hpp"
#include "index/dense_index.hpp"
#include "index/index_dir.hpp"
#include "index/token_store.hpp"
#include "nearmiss/evaluate.hpp"
#include "nearmiss/text_utils.hpp"
#include "perturb/perturber.hpp"
#include "search/index_builder.hpp"
#include "verify/similarity_map.hpp"
#include "verify/verifier.hpp"

namespace verity::mine {
namespace fs = std::filesystem;
namespace {

uint64_t hash_of(const std::string& s) { return fnv1a64(s.data(), s.size()); }

struct Scored {
  uint32_t doc;
  double score;
};

// Highest score first, ties to the lower document index (as the pipeline).
void sort_scored(std::vector<Scored>& v) {
  std::sort(v.begin(), v.end(), [](const Scored& a, const Scored& b) {
    return a.score != b.score ? a.score > b.score : a.doc < b.doc;
  });
}

// One query's ranking by the source's scorer, plus the scorer's value for any
// document (so a positive outside the ranking still gets its score).
struct QueryRanking {
  std::vector<Scored> ranked;          // top range_max, best first
  std::unordered_map<uint32_t, double> score_of;  // documents with a non-zero entry
  double score(uint32_t doc) const {
    auto it = score_of.find(doc);
    return it == score_of.end() ? 0.0 : it->second;
  }
};

std::string ensure_index(const data::BeirDataset& ds, const MineOptions& opt, bool dense, bool tokens) {
  search::IndexBuildOptions b;
  b.bm25 = true;
  b.dense = dense;
  b.tokens = tokens;
  b.analyzer = opt.analyzer;
  b.k1 = opt.k1;
  b.b = opt.b;
  b.encoder = opt.encoder;
  b.dense_index = "flat";  // exhaustive cosine: exact ranks and exact positive scores
  b.batch_size = opt.batch_size;
  std::string root = opt.cache_dir.empty() ? eval::default_cache_dir() : opt.cache_dir;
  make_directories(root);
  std::string dir = root + "/" + eval::index_cache_key(ds, b);
  bool usable = false;
  if (file_exists(dir + "/manifest.json")) {
    try {
      auto m = index::read_index_manifest(dir);
      usable = m.corpus_hash == ds.corpus.content_hash && m.docs == ds.corpus.size() &&
               m.parts.count("bm25") && (!dense || m.parts.count("dense")) && (!tokens || m.parts.count("tokens"));
      if (usable && dense) usable = m.specs.count("dense") && m.specs.at("dense") == "flat";
      // Keep the parts a rebuild would otherwise drop.
      b.dense = b.dense || m.parts.count("dense");
      b.tokens = b.tokens || m.parts.count("tokens");
    } catch (const Error& e) {
      log("mine: cache entry ", dir, " is unreadable, rebuilding: ", e.what());
    }
  }
  if (usable) {
    log("mine: using cached index ", dir);
  } else {
    b.created_by = "verity mine (cache)";
    log("mine: building index ", dir);
    search::build_index(ds.corpus, dir, b);
  }
  return dir;
}

std::vector<Scored> bm25_full(const index::Bm25Index& bm25, const std::string& query) {
  std::vector<Scored> out;
  for (const auto& h : bm25.search(query, bm25.num_docs())) out.push_back({h.doc, h.score});
  return out;  // already best first, ties by lower index
}

// Fuses two full rankings the way search::Pipeline does over its top-K lists
// (K = depth): weighted min-max or RRF; a document absent from a list gets 0
// from it. The fused value is defined for every document, in or out of the lists.
std::unordered_map<uint32_t, double> fuse(const std::vector<Scored>& lexical,
                                          const std::vector<Scored>& semantic, size_t depth,
                                          const MineOptions& opt) {
  std::unordered_map<uint32_t, double> fused;
  auto add_list = [&](const std::vector<Scored>& full, double weight) {
    size_t n = std::min(depth, full.size());
    if (n == 0) return;
    double lo = full[0].score, hi = lo;
    for (size_t r = 0; r < n; ++r) lo = std::min(lo, full[r].score), hi = std::max(hi, full[r].score);
    for (size_t r = 0; r < n; ++r) {
      if (opt.fusion == "rrf") {
        fused[full[r].doc] += 1.0 / (opt.rrf_k + double(r + 1));
      } else {
        double norm = hi > lo ? (full[r].score - lo) / (hi - lo) : 1.0;
        fused[full[r].doc] += weight * norm;
      }
    }
  };
  add_list(lexical, 1.0 - opt.dense_weight);
  add_list(semantic, opt.dense_weight);
  return fused;
}

// Token vectors of each text, [n_i × dim] row-major.
std::vector<std::vector<float>> encode_tokens(const encode::Encoder& encoder,
                                              const std::vector<std::string>& texts, size_t batch_size) {
  encode::EncodeOptions eo;
  eo.with_tokens = true;
  eo.batch_size = batch_size;
  auto enc = encoder.encode(texts, eo);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < texts.size(); ++i) out.push_back(enc.token_block(i));
  return out;
}

// Work item: one (query, positive) pair and its candidates.
struct Pair {
  std::string query_id, query_text;
  std::string positive_id, positive_text;
  double positive_score = 0;
  std::vector<Candidate> candidates;
  std::vector<int64_t> relevant_docs;
  std::vector<std::string> relevant_texts;
};

std::string basename_of(const std::string& path) { return fs::path(path).filename().string(); }

}  // namespace

void validate(const MineOptions& o) {
  const bool file = o.source.rfind("file:", 0) == 0;
  VERITY_CHECK(file || o.source == "bm25" || o.source == "dense" || o.source == "hybrid" ||
                   o.source == "generated",
               ConfigError, "--source: unknown '", o.source,
               "' (valid: bm25, dense, hybrid, generated, file:PATH)");
  VERITY_CHECK(!file || o.source.size() > 5, ConfigError, "--source file: needs a path (file:PATH)");
  VERITY_CHECK(o.range_min >= 1, ConfigError, "--range-min must be >= 1 (ranks are 1-based), got ",
               o.range_min);
  VERITY_CHECK(o.range_max >= o.range_min, ConfigError, "--range-max (", o.range_max,
               ") must be >= --range-min (", o.range_min, ")");
  VERITY_CHECK(o.num_negatives >= 1, ConfigError, "--num-negatives must be >= 1");
  VERITY_CHECK(o.sampling == "top" || o.sampling == "random", ConfigError, "--sampling: unknown '",
               o.sampling, "' (valid: top, random)");
  VERITY_CHECK(o.fusion == "weighted" || o.fusion == "rrf", ConfigError, "--fusion: unknown '",
               o.fusion, "' (valid: weighted, rrf)");
  VERITY_CHECK(o.dense_weight >= 0 && o.dense_weight <= 1, ConfigError,
               "--dense-weight must be in [0, 1], got ", o.dense_weight);
  VERITY_CHECK(o.rrf_k > 0, ConfigError, "--rrf-k must be positive");
  VERITY_CHECK(!o.absolute_margin || std::isfinite(*o.absolute_margin), ConfigError,
               "--absolute-margin must be finite");
  VERITY_CHECK(!o.relative_margin || (*o.relative_margin >= 0 && *o.relative_margin <= 1),
               ConfigError, "--relative-margin must be in [0, 1], got ", o.relative_margin.value_or(0));
  VERITY_CHECK(!o.max_score || std::isfinite(*o.max_score), ConfigError, "--max-score must be finite");
  VERITY_CHECK(o.filter_verifier != "none", ConfigError,
               "--filter-verifier none: leave the option out to disable the filter");
  VERITY_CHECK(!o.generators.empty() || o.source != "generated", ConfigError,
               "--generators: at least one generator is needed for --source generated");
  VERITY_CHECK(o.batch_size >= 1, ConfigError, "--batch-size must be >= 1");
}

ScoreSummary summarize_scores(std::vector<double> v) {
  ScoreSummary s;
  s.count = v.size();
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / double(v.size()));
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.q50 = eval::percentile(std::move(v), 50);
  return s;
}

double bm25_text_score(const index::Bm25Index& idx, const std::vector<std::string>& query_terms,
                       std::string_view text) {
  auto terms = idx.query_terms(text);
  std::unordered_map<std::string, uint32_t> tf;
  for (auto& t : terms) ++tf[t];
  const double dl = double(terms.size());
  const double k1 = idx.params().k1, b = idx.params().b;
  const double avgdl = idx.avgdl();
  double score = 0;
  for (const auto& t : query_terms) {  // repeats count again, as in the index
    auto it = tf.find(t);
    if (it == tf.end()) continue;
    double f = it->second;
    score += idx.idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl));
  }
  return score;
}

std::vector<Candidate> filter_candidates(std::vector<Candidate> candidates,
                                         const std::vector<int64_t>& relevant_docs,
                                         const std::vector<std::string>& relevant_texts,
                                         double pos, const MineOptions& opt, RemovalCounts& removed) {
  std::vector<Candidate> kept;
  kept.reserve(candidates.size());
  for (auto& c : candidates) {
    bool labelled = c.doc >= 0 ? std::find(relevant_docs.begin(), relevant_docs.end(), c.doc) !=
                                     relevant_docs.end()
                               : std::find(relevant_texts.begin(), relevant_texts.end(), c.text) !=
                                     relevant_texts.end();
    if (labelled) {
      ++removed.labelled_positive;
    } else if (c.rank && (*c.rank < int64_t(opt.range_min) || *c.rank > int64_t(opt.range_max))) {
      ++removed.range;
    } else if (opt.absolute_margin && !(c.score <= pos - *opt.absolute_margin)) {
      ++removed.absolute_margin;
    } else if (opt.relative_margin && !(c.score <= pos * (1 - *opt.relative_margin))) {
      ++removed.relative_margin;
    } else if (opt.max_score && !(c.score <= *opt.max_score)) {
      ++removed.max_score;
    } else {
      kept.push_back(std::move(c));
    }
  }
  return kept;
}

std::vector<size_t> sampling_order(size_t n, const std::string& sampling, uint64_t seed,
                                   const std::string& key) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (sampling == "random") {
    perturb::Rng rng(seed ^ hash_of(key));
    for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  }
  return order;
}

std::vector<FileNegative> read_negative_file(const std::string& path, const data::BeirDataset& ds) {
  std::unordered_map<std::string, const data::Query*> by_id, by_text;
  for (const auto& q : ds.queries) {
    by_id.emplace(q.id, &q);
    by_text.emplace(q.text, &q);
  }
  std::vector<FileNegative> out;
  VERITY_CHECK(file_exists(path), ConfigError, "--source file: no such file '", path, "'");
  for_each_line(path, [&](std::string_view line, size_t lineno) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(cat(path, ":", lineno, ": invalid JSON: ", e.what()));
    }
    VERITY_CHECK(j.is_object(), FormatError, path, ":", lineno, ": expected a JSON object");
    auto text_field = [&](const char* name, bool required) -> std::string {
      auto it = j.find(name);
      if (it == j.end() || it->is_null()) {
        VERITY_CHECK(!required, FormatError, path, ":", lineno, ": missing field \"", name, "\"");
        return "";
      }
      VERITY_CHECK(it->is_string() && !it->get<std::string>().empty(), FormatError, path, ":",
                   lineno, ": field \"", name, "\" must be a non-empty string");
      return it->get<std::string>();
    };
    FileNegative n;
    n.line = lineno;
    std::string query = text_field("query", true);
    n.negative = text_field("negative", true);
    n.positive = text_field("positive", false);
    n.type = text_field("type", false);
    if (auto it = j.find("rank"); it != j.end() && !it->is_null()) {
      VERITY_CHECK(it->is_number_integer(), FormatError, path, ":", lineno,
                   ": field \"rank\" must be an integer");
      n.rank = it->get<int64_t>();
    }
    const data::Query* q = nullptr;
    if (auto it = by_id.find(query); it != by_id.end()) q = it->second;
    else if (auto it2 = by_text.find(query); it2 != by_text.end()) q = it2->second;
    if (q) {
      n.query_id = q->id;
      n.query_text = q->text;
    } else {
      VERITY_CHECK(!n.positive.empty(), FormatError, path, ":", lineno, ": field \"query\": '",
                   query, "' is neither a query id nor a query text of ", ds.name,
                   " (give \"positive\" to use it as is)");
      n.query_text = query;
    }
    out.push_back(std::move(n));
  });
  return out;
}

MineResult mine(const data::BeirDataset& ds, const MineOptions& opt) {
  validate(opt);
  MineResult result;
  result.source = opt.source;
  const bool file_source = opt.source.rfind("file:", 0) == 0;
  const bool ranked = opt.source == "bm25" || opt.source == "dense" || opt.source == "hybrid";
  const bool needs_dense = opt.source == "dense" || opt.source == "hybrid";
  const std::string source_name = file_source ? basename_of(opt.source.substr(5)) : opt.source;

  // The false-negative filter reads corpus documents' token vectors from the
  // index (as stage 2 of the pipeline does) instead of re-encoding them.
  const bool filter = !opt.filter_verifier.empty();
  result.index_dir = ensure_index(ds, opt, needs_dense, filter && ranked);
  auto manifest = index::read_index_manifest(result.index_dir);
  auto bm25 = index::Bm25Index::load(index::index_part_path(result.index_dir, manifest, "bm25"));
  std::unique_ptr<index::DenseIndex> dense;
  std::unique_ptr<encode::Encoder> encoder;
  if (needs_dense || !opt.filter_verifier.empty()) encoder = encode::make_encoder(opt.encoder);
  if (needs_dense) dense = index::load_dense_index(index::index_part_path(result.index_dir, manifest, "dense"));
  std::unique_ptr<verify::Verifier> verifier;
  std::unique_ptr<index::TokenStore> token_store;
  if (filter) {
    verifier = nearmiss::make_eval_verifier(opt.filter_verifier);
    if (ranked)
      token_store = std::make_unique<index::TokenStore>(index::index_part_path(result.index_dir, manifest, "tokens"));
  }

  const std::string bm25_name = cat("bm25(k1=", opt.k1, ",b=", opt.b, ")");
  if (opt.source == "dense") result.scorer = cat("cosine(", encoder->spec(), ")");
  else if (opt.source == "hybrid")
    result.scorer = opt.fusion == "rrf" ? cat("rrf(k=", opt.rrf_k, ";", bm25_name, ",cosine)")
                                        : cat("weighted(w=", opt.dense_weight, ";", bm25_name, ",cosine)");
  else result.scorer = bm25_name;

  // (query, positive) pairs from the qrels, in query file order.
  std::vector<Pair> pairs;
  std::unordered_map<std::string, std::vector<size_t>> pairs_of_query;
  std::vector<const data::Query*> mined_queries;
  for (const auto& q : ds.queries) {
    auto it = ds.qrels.find(q.id);
    if (it == ds.qrels.end()) continue;
    std::vector<int64_t> relevant;
    std::vector<std::string> relevant_ids;
    for (const auto& [doc_id, grade] : it->second) {
      if (grade <= 0) continue;
      if (auto d = ds.corpus.find(doc_id)) relevant.push_back(int64_t(*d)), relevant_ids.push_back(doc_id);
    }
    if (relevant.empty()) continue;
    mined_queries.push_back(&q);
    std::vector<std::string> relevant_texts;
    for (auto d : relevant) relevant_texts.push_back(ds.corpus.indexed_text(size_t(d)));
    for (size_t i = 0; i < relevant.size(); ++i) {
      Pair p;
      p.query_id = q.id;
      p.query_text = q.text;
      p.positive_id = relevant_ids[i];
      p.positive_text = relevant_texts[i];
      p.relevant_docs = relevant;
      p.relevant_texts = relevant_texts;
      pairs_of_query[q.id].push_back(pairs.size());
      pairs.push_back(std::move(p));
    }
  }

  if (ranked) {
    const size_t depth = opt.range_max;
    const size_t chunk = 256;
    Progress progress("mine " + opt.source, mined_queries.size());
    for (size_t start = 0; start < mined_queries.size(); start += chunk) {
      check_interrupt();
      const size_t end = std::min(mined_queries.size(), start + chunk);
      index::DenseSearchResult dense_res;
      if (dense) {
        std::vector<std::string> texts;
        for (size_t i = start; i < end; ++i) texts.push_back(mined_queries[i]->text);
        encode::EncodeOptions eo;
        eo.with_tokens = false;
        eo.batch_size = opt.batch_size;
        auto enc = encoder->encode(texts, eo);
        dense_res = dense->search(enc.pooled, dense->size());
      }
      for (size_t i = start; i < end; ++i) {
        const auto& q = *mined_queries[i];
        std::vector<Scored> lexical, semantic;
        if (opt.source != "dense") lexical = bm25_full(bm25, q.text);
        if (dense) {
          auto ids = dense_res.ids_of(i - start);
          auto scores = dense_res.scores_of(i - start);
          for (size_t r = 0; r < ids.size(); ++r)
            if (ids[r] >= 0) semantic.push_back({uint32_t(ids[r]), scores[r]});
        }
        QueryRanking ranking;
        if (opt.source == "hybrid") {
          auto fused = fuse(lexical, semantic, depth, opt);
          for (const auto& [doc, s] : fused) ranking.ranked.push_back({doc, s});
          ranking.score_of = std::move(fused);
        } else {
          ranking.ranked = opt.source == "bm25" ? std::move(lexical) : std::move(semantic);
          for (const auto& s : ranking.ranked) ranking.score_of[s.doc] = s.score;
        }
        sort_scored(ranking.ranked);
        if (ranking.ranked.size() > depth) ranking.ranked.resize(depth);
        for (size_t pi : pairs_of_query[q.id]) {
          auto& p = pairs[pi];
          p.positive_score = ranking.score(uint32_t(*ds.corpus.find(p.positive_id)));
          for (size_t r = 0; r < ranking.ranked.size(); ++r) {
            Candidate c;
            c.doc = ranking.ranked[r].doc;
            c.rank = int64_t(r + 1);
            c.score = ranking.ranked[r].score;
            c.type = "retrieval";
            p.candidates.push_back(std::move(c));
          }
        }
        progress.add();
      }
    }
    progress.finish();
  } else if (opt.source == "generated") {
    std::vector<std::unique_ptr<perturb::Perturber>> generators;
    for (const auto& g : opt.generators) generators.push_back(perturb::make_perturber(g));
    Progress progress("mine generated", pairs.size());
    for (auto& p : pairs) {
      check_interrupt();
      auto qterms = bm25.query_terms(p.query_text);
      p.positive_score = bm25_text_score(bm25, qterms, p.positive_text);
      auto sentences = nearmiss::split_sentences(p.positive_text);
      const std::string key = p.query_id + "\t" + p.positive_id;
      auto order = sampling_order(sentences.size(), "random", opt.seed, key);
      for (size_t g = 0; g < generators.size(); ++g) {
        perturb::Rng rng(opt.seed ^ hash_of(key + "\t" + opt.generators[g]));
        size_t tries = 0;
        for (size_t si : order) {
          if (tries >= opt.max_sentence_tries) break;
          const auto& sentence = sentences[si];
          std::string reason;
          if (!nearmiss::usable_prose_sentence(sentence, 5, 40, &reason)) continue;
          ++tries;
          auto edit = generators[g]->apply(sentence, rng);
          if (!edit) {
            ++result.generator_skips[cat(opt.generators[g], ": ", perturb::Perturber::skip_reason())];
            continue;
          }
          size_t at = p.positive_text.find(sentence);
          if (at == std::string::npos) {
            ++result.generator_skips[cat(opt.generators[g], ": sentence not verbatim in the positive")];
            continue;
          }
          Candidate c;
          c.text = p.positive_text.substr(0, at) + edit->text + p.positive_text.substr(at + sentence.size());
          c.score = bm25_text_score(bm25, qterms, c.text);
          c.type = edit->type;
          p.candidates.push_back(std::move(c));
          break;
        }
      }
      progress.add();
    }
    progress.finish();
  } else {  // file:PATH
    const std::string path = opt.source.substr(5);
    auto negatives = read_negative_file(path, ds);
    // Lines naming their own positive form their own pairs; the others join
    // the qrels pairs of their query.
    std::vector<Pair> file_pairs;
    std::map<std::pair<std::string, std::string>, size_t> file_pair_index;
    std::unordered_set<std::string> used_queries;
    for (auto& n : negatives) {
      Candidate c;
      c.text = n.negative;
      c.rank = n.rank;
      c.type = n.type;
      if (n.positive.empty()) {
        auto it = pairs_of_query.find(n.query_id);
        VERITY_CHECK(it != pairs_of_query.end(), FormatError, path, ":", n.line, ": query '",
                     n.query_id, "' has no relevant document in ", ds.name, " split ", ds.split,
                     " (give \"positive\")");
        for (size_t pi : it->second) pairs[pi].candidates.push_back(c);
        used_queries.insert(n.query_text);
        continue;
      }
      auto key = std::make_pair(n.query_text, n.positive);
      auto [it, added] = file_pair_index.emplace(key, file_pairs.size());
      if (added) {
        Pair p;
        p.query_id = n.query_id;
        p.query_text = n.query_text;
        p.positive_text = n.positive;
        p.positive_id = cat("line ", n.line);
        if (auto q = pairs_of_query.find(n.query_id); q != pairs_of_query.end()) {
          p.relevant_docs = pairs[q->second.front()].relevant_docs;
          p.relevant_texts = pairs[q->second.front()].relevant_texts;
        }
        file_pairs.push_back(std::move(p));
      }
      file_pairs[it->second].candidates.push_back(std::move(c));
      used_queries.insert(n.query_text);
    }
    std::erase_if(pairs, [](const Pair& p) { return p.candidates.empty(); });
    for (auto& p : file_pairs) pairs.push_back(std::move(p));
    for (auto& p : pairs) {
      auto qterms = bm25.query_terms(p.query_text);
      p.positive_score = bm25_text_score(bm25, qterms, p.positive_text);
      for (auto& c : p.candidates) c.score = bm25_text_score(bm25, qterms, c.text);
    }
    result.queries = used_queries.size();
  }
  if (!file_source) result.queries = mined_queries.size();

  // Filters, then sampling (with the false-negative filter checked lazily in
  // sampling order, so the verifier only scores candidates that could be kept).
  Progress progress("mine filter", pairs.size());
  for (auto& p : pairs) {
    check_interrupt();
    ++result.pairs;
    result.positive_scores.push_back(p.positive_score);
    auto kept = filter_candidates(std::move(p.candidates), p.relevant_docs, p.relevant_texts,
                                  p.positive_score, opt, result.removed);
    auto order = sampling_order(kept.size(), opt.sampling, opt.seed, p.query_id + "\t" + p.positive_id);
    auto text_of = [&](const Candidate& c) {
      return c.doc >= 0 ? ds.corpus.indexed_text(size_t(c.doc)) : c.text;
    };
    std::vector<size_t> taken;
    std::vector<float> query_rows;  // encoded on first use
    if (verifier) {  // the positive's verifier score, to calibrate filter_threshold against
      query_rows = encode_tokens(*encoder, {p.query_text}, opt.batch_size)[0];
      auto pos_doc = p.relevant_docs.empty() ? std::nullopt : ds.corpus.find(p.positive_id);
      auto rows = pos_doc && token_store ? token_store->get(uint64_t(*pos_doc))
                                         : encode_tokens(*encoder, {p.positive_text}, opt.batch_size)[0];
      std::vector<verify::SimilarityMap> one{verify::SimilarityMap::compute(query_rows, rows, encoder->dim())};
      result.filter_positive_scores.push_back(verifier->score_batch(one)[0]);
    }
    size_t next = 0;
    while (taken.size() < opt.num_negatives && next < order.size()) {
      const size_t want = opt.num_negatives - taken.size();
      const size_t n = verifier ? std::min(order.size() - next, std::max<size_t>(want * 2, 4)) : want;
      const size_t stop = std::min(order.size(), next + n);
      std::vector<float> fn_scores;
      if (verifier) {
        if (query_rows.empty()) query_rows = encode_tokens(*encoder, {p.query_text}, opt.batch_size)[0];
        std::vector<std::string> texts;  // candidates not in the corpus
        for (size_t i = next; i < stop; ++i)
          if (kept[order[i]].doc < 0) texts.push_back(kept[order[i]].text);
        auto encoded = texts.empty() ? std::vector<std::vector<float>>{}
                                     : encode_tokens(*encoder, texts, opt.batch_size);
        std::vector<verify::SimilarityMap> maps;
        size_t next_text = 0;
        for (size_t i = next; i < stop; ++i) {
          const auto& c = kept[order[i]];
          auto rows = c.doc >= 0 ? token_store->get(uint64_t(c.doc)) : std::move(encoded[next_text++]);
          maps.push_back(verify::SimilarityMap::compute(query_rows, rows, encoder->dim()));
        }
        fn_scores = verifier->score_batch(maps);
        result.filter_candidate_scores.insert(result.filter_candidate_scores.end(), fn_scores.begin(),
                                              fn_scores.end());
      }
      for (size_t i = next; i < stop && taken.size() < opt.num_negatives; ++i, ++next) {
        if (verifier && fn_scores[i - (stop - n)] >= opt.filter_threshold) {
          ++result.removed.false_negative_filter;
          continue;
        }
        taken.push_back(order[i]);
      }
    }
    result.unsampled += order.size() - next;
    if (taken.empty()) ++result.pairs_without_negative;
    for (size_t k : taken) {
      auto& c = kept[k];
      data::Triple t;
      t.query = p.query_text;
      t.positive = p.positive_text;
      t.negative = text_of(c);
      t.type = c.type;
      t.source = source_name;
      t.rank = c.rank;
      t.score = c.score;
      result.negative_scores.push_back(c.score);
      result.triples.push_back(std::move(t));
    }
    progress.add();
  }
  progress.finish();
  return result;
}

}  // namespace verity::mine
