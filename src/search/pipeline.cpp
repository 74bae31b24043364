#include "search/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <unordered_map>

#include "core/error.hpp"
#include "core/io.hpp"
#include "encode/registry.hpp"
#include "index/bm25.hpp"
#include "index/dense_index.hpp"
#include "index/doc_store.hpp"
#include "index/index_dir.hpp"
#include "index/token_store.hpp"
#include "search/stored_rows.hpp"
#include "verify/bf16_maps.hpp"
#include "verify/pair_scoring.hpp"
#include "verify/similarity_map.hpp"
#include "core/log.hpp"
#include "verify/verifier.hpp"

namespace verity::search {
namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Candidate {
  uint32_t doc;
  double score;
};

// Min-max normalization over one result list; a constant list maps to 1.
std::unordered_map<uint32_t, double> minmax(const std::vector<Candidate>& list) {
  std::unordered_map<uint32_t, double> out;
  if (list.empty()) return out;
  double lo = list.front().score, hi = lo;
  for (const auto& c : list) lo = std::min(lo, c.score), hi = std::max(hi, c.score);
  for (const auto& c : list) out[c.doc] = hi > lo ? (c.score - lo) / (hi - lo) : 1.0;
  return out;
}

// Sorts by score descending; ties go to the lower document index.
void sort_candidates(std::vector<Candidate>& c) {
  std::sort(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score > b.score : a.doc < b.doc;
  });
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

void check_verifier_encoder(const verify::Verifier& verifier, const encode::Encoder& encoder, std::string* identity) {
  if (verifier.encoder().empty()) return;  // skips hashing the encoder's weights
  std::string own;
  std::string& known = identity ? *identity : own;
  if (known.empty()) known = encode::encoder_identity(encoder);
  verify::check_trained_encoder(verifier, known, encoder.spec());
}

std::unique_ptr<verify::Verifier> open_verifier_for(std::string& spec, const encode::Encoder& encoder,
                                                   std::string* identity) {
  if (spec != "auto") {
    auto verifier = verify::make_verifier(spec);
    check_verifier_encoder(*verifier, encoder, identity);
    return verifier;
  }
  // The default verifier where it can read these maps; else F1, which reads any encoder's.
  try {
    auto verifier = verify::make_verifier("default");  // a missing file is a ConfigError too
    check_verifier_encoder(*verifier, encoder, identity);
    spec = "default";
    return verifier;
  } catch (const ConfigError& e) {
    log("verifier auto: F1, not the default verifier: ", e.what());
    spec = "f1";
    return verify::make_verifier("f1");
  }
}

std::vector<UnreadOptions> unread_options(const PipelineOptions& o, bool per_request) {
  std::vector<UnreadOptions> out;
  if (!per_request && o.stage1 != "hybrid") out.push_back({{"fusion", "rrf_k", "dense_weight"}, "stage1", "hybrid"});
  if (o.fusion != "rrf") out.push_back({{"rrf_k"}, "fusion", "rrf"});
  if (o.fusion != "weighted") out.push_back({{"dense_weight"}, "fusion", "weighted"});
  if (!per_request && o.verifier == "none")
    out.push_back({{"combine", "verifier_weight", "penalty_beta", "penalty_tau"}, "verifier", ""});
  if (o.combine != "weighted") out.push_back({{"verifier_weight"}, "combine", "weighted"});
  if (o.combine != "penalty") out.push_back({{"penalty_beta", "penalty_tau"}, "combine", "penalty"});
  return out;
}

void validate(const PipelineOptions& o) {
  VERITY_CHECK(o.stage1 == "bm25" || o.stage1 == "dense" || o.stage1 == "hybrid" || o.stage1 == "auto",
               ConfigError, "unknown stage1 '", o.stage1, "' (valid: bm25, dense, hybrid, auto)");
  VERITY_CHECK(o.fusion == "rrf" || o.fusion == "weighted", ConfigError, "unknown fusion '",
               o.fusion, "' (valid: rrf, weighted)");
  VERITY_CHECK(o.combine == "rerank" || o.combine == "weighted" || o.combine == "penalty",
               ConfigError, "unknown combine '", o.combine, "' (valid: rerank, weighted, penalty)");
  VERITY_CHECK(o.candidates > 0, ConfigError, "candidates (K) must be positive");
  VERITY_CHECK(o.rrf_k > 0, ConfigError, "rrf_k must be positive");
  VERITY_CHECK(o.dense_weight >= 0 && o.dense_weight <= 1, ConfigError,
               "dense_weight must be in [0, 1], got ", o.dense_weight);
  VERITY_CHECK(o.verifier_weight >= 0 && o.verifier_weight <= 1, ConfigError,
               "verifier_weight must be in [0, 1], got ", o.verifier_weight);
  VERITY_CHECK(!o.reject_below || o.verifier != "none", ConfigError,
               "--reject-below needs a verifier (stage 2)");
}

PipelineOptions resolve_auto_parts(const index::IndexManifest& manifest, PipelineOptions o) {
  if (o.stage1 == "auto") {
    const bool dense = manifest.parts.count("dense"), bm25 = manifest.parts.count("bm25");
    o.stage1 = dense ? (bm25 ? "hybrid" : "dense") : "bm25";
  }
  if (o.verifier == "auto" && !manifest.parts.count("tokens")) o.verifier = "none";
  return o;
}

struct Pipeline::Impl {
  PipelineOptions opt;
  std::string dir;
  index::IndexManifest manifest;
  std::unique_ptr<index::DocStore> docs;
  std::optional<index::Bm25Index> bm25;
  std::unique_ptr<index::DenseIndex> dense;
  std::unique_ptr<index::TokenStore> tokens;
  std::shared_ptr<const encode::Encoder> encoder;
  std::shared_ptr<const verify::Verifier> verifier;
  std::optional<TextVerifier> text_verifier;  // Pipeline::verify

  bool needs_bm25() const { return opt.stage1 != "dense"; }
  bool needs_dense() const { return opt.stage1 != "bm25"; }
  bool needs_stage2() const { return opt.verifier != "none"; }

  encode::EncodeOptions encode_options(bool with_tokens) const {
    encode::EncodeOptions eo;
    eo.with_tokens = with_tokens;
    eo.threads = opt.threads;
    return eo;
  }

  std::vector<Candidate> stage1(const std::string& query, const encode::Encoded* q) const {
    // No list is longer than the corpus, however large a K was asked for.
    const size_t K = std::min(opt.candidates, docs->size());
    std::vector<Candidate> lexical, semantic;
    if (needs_bm25())
      for (const auto& h : bm25->search(query, K)) lexical.push_back({h.doc, h.score});
    if (needs_dense()) {
      auto res = dense->search(q->pooled, K);
      auto ids = res.ids_of(0);
      auto scores = res.scores_of(0);
      for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] >= 0) semantic.push_back({uint32_t(ids[i]), scores[i]});
    }
    if (opt.stage1 == "bm25") return lexical;
    if (opt.stage1 == "dense") return semantic;
    std::unordered_map<uint32_t, double> fused;
    if (opt.fusion == "rrf") {
      for (const auto* list : {&lexical, &semantic})
        for (size_t r = 0; r < list->size(); ++r)
          fused[(*list)[r].doc] += 1.0 / (opt.rrf_k + double(r + 1));
    } else {
      auto nl = minmax(lexical), ns = minmax(semantic);
      for (const auto& [doc, s] : nl) fused[doc] += (1.0 - opt.dense_weight) * s;
      for (const auto& [doc, s] : ns) fused[doc] += opt.dense_weight * s;
    }
    std::vector<Candidate> out;
    out.reserve(fused.size());
    for (const auto& [doc, s] : fused) out.push_back({doc, s});
    sort_candidates(out);
    if (out.size() > K) out.resize(K);
    return out;
  }

  // Maps of the query against stored documents: bf16 products read straight
  // from the stored codes where the CPU allows (verify/bf16_maps.hpp), else
  // the exact fp32 kernel on decoded rows.
  // Bounds of the verifier's scores: probabilities for calibrated verifiers,
  // cosine-like similarities otherwise.
  std::pair<double, double> verifier_range() const {
    return verifier->default_threshold() ? std::pair{0.0, 1.0} : std::pair{-1.0, 1.0};
  }

  std::vector<double> verify_docs(const encode::Encoded& q, const std::vector<Candidate>& cands) const {
    const size_t dim = tokens->dim();
    const auto query_tokens = q.token_block(0);
    std::vector<verify::SimilarityMap> maps;
    if (verify::use_bf16_maps())
      maps = verify::similarity_maps_bf16(query_tokens, cands.size(), dim,
                                          [&](size_t c) { return stored_rows(*tokens, cands[c].doc); });
    else
      maps = verify::SimilarityMap::compute_streamed(query_tokens, cands.size(), dim,
                                                     [&](size_t c, std::vector<float>& rows) {
                                                       const size_t n = tokens->num_tokens(cands[c].doc);
                                                       rows.resize(n * dim);
                                                       tokens->decode(cands[c].doc, rows);
                                                       return n;
                                                     });
    std::vector<verify::PairContext> context(cands.size());
    std::vector<uint32_t> query_ids;
    if (verifier->uses_context()) {
      query_ids = verify::token_identities(q.token_strings[0]);
      for (size_t c = 0; c < cands.size(); ++c) {
        context[c].query_ids = query_ids;
        context[c].candidate_ids = tokens->ids(cands[c].doc);
        if (tokens->has_pooled()) {
          context[c].query_pooled = q.pooled_row(0), context[c].candidate_pooled = tokens->pooled(cands[c].doc);
          context[c].pooled_cosine = verify::cosine(context[c].query_pooled, context[c].candidate_pooled);
        }
      }
    }
    return score_maps(maps, context);
  }

  std::vector<double> score_maps(std::vector<verify::SimilarityMap>& maps,
                                 const std::vector<verify::PairContext>& context) const {
    std::vector<double> out(maps.size(), 0.0);
    std::vector<verify::SimilarityMap> scorable;
    std::vector<verify::PairContext> scorable_context;
    std::vector<size_t> where;
    for (size_t i = 0; i < maps.size(); ++i) {
      if (maps[i].empty()) continue;  // no tokens on one side: nothing to verify, score 0
      scorable.push_back(std::move(maps[i]));
      scorable_context.push_back(context[i]);
      where.push_back(i);
    }
    auto s = verifier->score_pairs(scorable, scorable_context);
    for (size_t i = 0; i < where.size(); ++i) out[where[i]] = s[i];
    return out;
  }

  // The verdict threshold: the caller's, else the verifier's calibrated one.
  std::optional<double> threshold() const {
    return verifier ? search::verdict_threshold(opt.reject_below, *verifier) : opt.reject_below;
  }

  std::string verdict(double score) const {
    const auto t = threshold();
    if (!t) return "";
    return score >= *t ? "match" : "near-miss";
  }
};

Pipeline::Pipeline(const std::string& index_dir, PipelineOptions options)
    : impl_(std::make_unique<Impl>()) {
  validate(options);
  auto& m = *impl_;
  m.dir = index_dir;
  m.manifest = index::read_index_manifest(index_dir);
  m.opt = resolve_auto_parts(m.manifest, std::move(options));
  VERITY_CHECK(!m.opt.reject_below || m.opt.verifier != "none", ConfigError, index_dir,
               ": a verdict threshold needs a verifier, and the index has no token vectors (rebuild it with --tokens)");
  m.docs = std::make_unique<index::DocStore>(index::index_part_path(index_dir, m.manifest, "docs"));
  VERITY_CHECK(m.docs->size() == m.manifest.docs, FormatError, index_dir, ": manifest says ",
               m.manifest.docs, " documents, docs part has ", m.docs->size());
  auto check_count = [&](size_t n, const char* part) {
    VERITY_CHECK(n == m.docs->size(), FormatError, index_dir, ": ", part, " part has ", n,
                 " documents, the document store ", m.docs->size());
  };
  if (m.needs_bm25()) {
    m.bm25.emplace(index::Bm25Index::load(index::index_part_path(index_dir, m.manifest, "bm25")));
    check_count(m.bm25->num_docs(), "bm25");
  }
  bool need_encoder = m.needs_dense() || m.needs_stage2();
  // The encoder's identity hashes its model files: computed once, for the
  // index's record and a trained verifier's alike.
  std::string identity;
  if (need_encoder) {
    std::string spec = m.opt.encoder;
    if (spec.empty()) {
      auto it = m.manifest.specs.find("encoder");
      VERITY_CHECK(it != m.manifest.specs.end(), ConfigError, index_dir,
                   ": the index records no encoder; rebuild with --dense/--tokens or pass --encoder");
      spec = it->second;
    }
    m.encoder = encode::make_encoder(spec);
    // Vectors from another encoder of the same width would be searched without any error.
    if (auto built = m.manifest.specs.find("encoder_identity"); built != m.manifest.specs.end()) {
      identity = encode::encoder_identity(*m.encoder);
      const auto& given = identity;
      VERITY_CHECK(given == built->second, ConfigError, index_dir, ": the index was built with encoder ",
                   spec_for_report(m.manifest.specs["encoder"]), " (", built->second, "), but the encoder here is ",
                   spec_for_report(m.encoder->spec()), " (", given,
                   "); rebuild the index with this encoder, or open it with its own");
    }
  }
  if (m.needs_dense()) {
    m.dense = index::load_dense_index(index::index_part_path(index_dir, m.manifest, "dense"));
    check_count(m.dense->size(), "dense");
    VERITY_CHECK(m.dense->dim() == m.encoder->dim(), ConfigError, index_dir, ": dense part has dim ",
                 m.dense->dim(), " but encoder ", m.encoder->spec(), " gives ", m.encoder->dim());
  }
  if (m.needs_stage2()) {
    m.verifier = open_verifier_for(m.opt.verifier, *m.encoder, &identity);
    m.text_verifier.emplace(m.encoder, m.verifier, m.threshold(), m.opt.threads);
    m.tokens = std::make_unique<index::TokenStore>(index::index_part_path(index_dir, m.manifest, "tokens"));
    check_count(m.tokens->num_documents(), "tokens");
    VERITY_CHECK(m.tokens->dim() == m.encoder->dim(), ConfigError, index_dir,
                 ": token vectors have dim ", m.tokens->dim(), " but encoder ", m.encoder->spec(),
                 " gives ", m.encoder->dim());
    if (m.verifier->uses_context() && (!m.tokens->has_ids() || !m.tokens->has_pooled()))
      log("warning: ", index_dir, ": the token store has no token identities or pooled vectors (an older index); ",
          m.verifier->spec(), " verifies without exact matches; rebuild the index with --tokens for full accuracy");
  }
}

Pipeline::~Pipeline() = default;
Pipeline::Pipeline(Pipeline&&) noexcept = default;

const index::DocStore& Pipeline::docs() const { return *impl_->docs; }
const PipelineOptions& Pipeline::options() const { return impl_->opt; }
std::optional<double> Pipeline::verdict_threshold() const { return impl_->threshold(); }

std::string Pipeline::describe() const {
  const auto& o = impl_->opt;
  std::string s = "stage1=" + o.stage1;
  if (o.stage1 == "hybrid")
    s += o.fusion == "rrf" ? cat(",fusion=rrf:k=", o.rrf_k) : cat(",fusion=weighted:w=", o.dense_weight);
  s += cat(",K=", o.candidates, ",verifier=", o.verifier);
  if (o.verifier != "none") {
    s += ",combine=" + o.combine;
    if (o.combine == "weighted") s += cat(":a=", o.verifier_weight);
    if (o.combine == "penalty") s += cat(":beta=", o.penalty_beta, ",tau=", o.penalty_tau);
  }
  if (impl_->encoder) s += ",encoder=" + impl_->encoder->spec();
  return s;
}

std::vector<SearchHit> Pipeline::search(const std::string& query, size_t k,
                                        StageTimings* timings) const {
  const auto& m = *impl_;
  VERITY_CHECK(k > 0, ConfigError, "k must be positive");
  StageTimings t;
  auto start = Clock::now();
  std::optional<encode::Encoded> q;
  if (m.encoder) {
    auto te = Clock::now();
    std::vector<std::string> one{query};
    q = m.encoder->encode(one, m.encode_options(m.needs_stage2()));
    t.encode_ms = ms_since(te);
  }
  auto t1 = Clock::now();
  auto cands = m.stage1(query, q ? &*q : nullptr);
  t.stage1_ms = ms_since(t1);

  std::vector<SearchHit> hits(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) {
    hits[i].doc = cands[i].doc;
    hits[i].stage1_score = cands[i].score;
    hits[i].score = cands[i].score;
  }
  if (m.needs_stage2() && !cands.empty()) {
    auto t2 = Clock::now();
    auto base = minmax(cands);
    const bool rerank = m.opt.combine == "rerank", weighted = m.opt.combine == "weighted";
    auto combined = [&](double b, double v) {
      if (rerank) return v;
      if (weighted) return (1 - m.opt.verifier_weight) * b + m.opt.verifier_weight * v;
      return b - m.opt.penalty_beta * sigmoid(20 * (b - m.opt.penalty_tau)) * (1 - std::clamp(v, 0.0, 1.0));
    };
    // Verify only what the top k can hold: with the verifier's score in
    // [lo, hi], a candidate whose best possible final score is below the k-th
    // best worst-case score cannot reach the top k, so it is not verified.
    // The top k is the same as with every candidate verified.
    const auto [lo, hi] = m.verifier_range();
    std::vector<size_t> verify_at;
    if (!rerank && k < cands.size()) {
      std::vector<double> worst(cands.size());
      for (size_t i = 0; i < cands.size(); ++i) worst[i] = combined(base[cands[i].doc], lo);
      std::vector<double> sorted = worst;
      std::nth_element(sorted.begin(), sorted.begin() + long(k - 1), sorted.end(), std::greater<>());
      const double kth = sorted[k - 1];
      for (size_t i = 0; i < cands.size(); ++i)
        if (combined(base[cands[i].doc], hi) >= kth) verify_at.push_back(i);
    } else {
      for (size_t i = 0; i < cands.size(); ++i) verify_at.push_back(i);
    }
    std::vector<Candidate> to_verify;
    to_verify.reserve(verify_at.size());
    for (size_t i : verify_at) to_verify.push_back(cands[i]);
    const auto scores = m.verify_docs(*q, to_verify);
    std::vector<uint8_t> verified(hits.size(), 0);
    for (size_t j = 0; j < verify_at.size(); ++j) {
      auto& h = hits[verify_at[j]];
      const double v = scores[j];
      h.verifier_score = v;
      h.verdict = m.verdict(v);
      h.score = combined(base[h.doc], v);
      verified[verify_at[j]] = 1;
    }
    for (size_t i = 0; i < hits.size(); ++i)
      if (!verified[i]) hits[i].score = combined(base[hits[i].doc], hi);  // below the top k either way
    t.verified = verify_at.size();
    // stable_sort keeps stage-1 order among equal final scores.
    std::stable_sort(hits.begin(), hits.end(),
                     [](const SearchHit& a, const SearchHit& b) { return a.score > b.score; });
    t.stage2_ms = ms_since(t2);
  }
  if (hits.size() > k) hits.resize(k);
  for (auto& h : hits) h.id = std::string(m.docs->id(h.doc));
  t.total_ms = ms_since(start);
  if (timings) *timings = t;
  return hits;
}

std::vector<Verification> Pipeline::verify(const std::string& query,
                                           std::span<const std::string> candidates) const {
  VERITY_CHECK(impl_->text_verifier, ConfigError, "verification needs a verifier (got 'none')");
  return impl_->text_verifier->verify(query, candidates);
}

}  // namespace verity::search
