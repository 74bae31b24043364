#include "verify/alignment_features.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "verify/simple_verifiers.hpp"

namespace verity::verify {

IdfTable::IdfTable(size_t documents, std::unordered_map<uint32_t, uint32_t> document_frequency)
    : documents_(documents), df_(std::move(document_frequency)) {
  const double n = double(documents_);
  unseen_ = float(std::log((n + 1) / 2.0) + 1);
  max_idf_ = std::max(1.0f, unseen_);
  for (const auto& [token, df] : df_) max_idf_ = std::max(max_idf_, float(std::log((n + 1) / (df + 1.0)) + 1));
}

float IdfTable::idf(uint32_t token) const {
  auto it = df_.find(token);
  if (it == df_.end()) return unseen_;
  return float(std::log((double(documents_) + 1) / (it->second + 1.0)) + 1);
}

IdfTable build_idf_table(std::span<const std::vector<uint32_t>> texts) {
  std::unordered_map<uint32_t, uint32_t> df;
  std::vector<uint32_t> seen;
  for (const auto& ids : texts) {
    seen.assign(ids.begin(), ids.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (uint32_t t : seen) ++df[t];
  }
  return IdfTable(texts.size(), std::move(df));
}

namespace {

// The pieces a tokenizer may make of a whole word: bare (WordPiece, a
// sentence's first SentencePiece), with SentencePiece's word-start mark, and
// capitalized.
std::vector<std::string> piece_forms(const std::string& word) {
  std::string upper = word;
  if (!upper.empty() && upper[0] >= 'a' && upper[0] <= 'z') upper[0] = char(upper[0] - 'a' + 'A');
  std::vector<std::string> out;
  for (const std::string& w : {word, upper}) out.push_back(w), out.push_back("\u2581" + w);
  return out;
}

// Simple inflections, paired across a word pair (increased <-> decreased).
std::vector<std::string> inflections(const std::string& w) {
  const bool e = !w.empty() && w.back() == 'e';
  const std::string stem = e ? w.substr(0, w.size() - 1) : w;
  return {w, w + "s", e ? w + "d" : w + "ed", stem + "ing", e ? w + "r" : w + "er", e ? w + "st" : w + "est"};
}

uint64_t pair_key(uint32_t a, uint32_t b) {
  if (b < a) std::swap(a, b);
  return (uint64_t(a) << 32) | b;
}

}  // namespace

Lexicon::Lexicon(std::vector<std::pair<std::string, std::string>> antonyms) : words_(std::move(antonyms)) {
  // Every piece form of one inflected word maps to one key; antonymy is a
  // relation between keys, so each pair is stored once, not once per form.
  std::unordered_map<std::string, uint32_t> keys;
  auto key_of = [&](const std::string& form) {
    auto [it, added] = keys.emplace(form, uint32_t(keys.size()));
    if (added)
      for (const auto& piece : piece_forms(form)) form_key_.emplace(token_identity(piece), it->second);
    return it->second;
  };
  for (const auto& [a, b] : words_) {
    const auto fa = inflections(a), fb = inflections(b);
    for (size_t k = 0; k < fa.size(); ++k) {
      const uint32_t ka = key_of(fa[k]), kb = key_of(fb[k]);
      if (ka != kb) pairs_.insert(pair_key(ka, kb));
    }
  }
}

bool Lexicon::antonyms(uint32_t a, uint32_t b) const {
  const auto x = form_key_.find(a), y = form_key_.find(b);
  return x != form_key_.end() && y != form_key_.end() && x->second != y->second &&
         pairs_.count(pair_key(x->second, y->second)) != 0;
}

bool Lexicon::is_digits(uint32_t token) {
  static const std::unordered_set<uint32_t> digits = [] {
    std::unordered_set<uint32_t> set;
    for (int len = 1; len <= 4; ++len) {
      int limit = 1;
      for (int k = 0; k < len; ++k) limit *= 10;
      for (int v = 0; v < limit; ++v) {
        std::string d = std::to_string(v);
        d.insert(0, size_t(len) - d.size(), '0');
        for (const char* mark : {"", "\u2581", "##"}) set.insert(token_identity(mark + d));
      }
    }
    return set;
  }();
  return digits.count(token) != 0;
}

namespace {

struct DirectionSummary {
  double maxsim = 0, idf_maxsim = 0, exact = 0, idf_exact = 0, tau = 0, kept = 0, worst_missing = 0;
  size_t unmatched_digits = 0, antonyms = 0;
};

// X has n rows of cell(i, j) over Y's m columns, row-major in `cells`.
DirectionSummary read_direction(std::span<const float> cells, size_t n, size_t m, std::span<const uint32_t> x_ids,
                                std::span<const uint32_t> y_ids, const IdfTable& idf, const Lexicon& lexicon,
                                DirectionFeatures& out) {
  const bool known = !x_ids.empty() && !y_ids.empty();
  const float idf_max = idf.max_idf();
  out.length = n;
  out.tokens.assign(n * kTokenFeatures, 0.0f);
  out.ids.assign(n, 0);
  std::vector<uint32_t> y_sorted(y_ids.begin(), y_ids.end());
  std::sort(y_sorted.begin(), y_sorted.end());
  std::vector<float> y_idf(m, 1.0f);
  for (size_t j = 0; j < m && known; ++j) y_idf[j] = idf.idf(y_ids[j]) / idf_max;
  std::vector<long> target(n, 0);
  std::vector<uint8_t> exact_at_target(n, 0);
  DirectionSummary s;
  double idf_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const float* row = cells.data() + i * m;
    float* f = out.tokens.data() + i * kTokenFeatures;
    const uint32_t id = known ? x_ids[i] : 0;
    out.ids[i] = id;
    const bool exact = known && std::binary_search(y_sorted.begin(), y_sorted.end(), id);
    float best = -1.0f, bonus_best = -1e30f;
    size_t arg = 0;
    for (size_t j = 0; j < m; ++j) {
      best = std::max(best, row[j]);
      const float v = row[j] + (known && y_ids[j] == id ? 0.5f : 0.0f);
      if (v > bonus_best) bonus_best = v, arg = j;
    }
    double z = 0, soft = 0;
    for (size_t j = 0; j < m; ++j) {
      const double w = std::exp((double(row[j]) - best) / 0.1);
      z += w, soft += w * row[j];
    }
    const float w_idf = known ? idf.idf(id) / idf_max : 1.0f;
    target[i] = long(arg);
    exact_at_target[i] = known && y_ids[arg] == id;
    f[0] = best;
    f[1] = float(soft / z);
    f[2] = exact ? 1.0f : 0.0f;
    f[3] = w_idf;
    f[4] = n > 1 ? float(i) / float(n - 1) : 0.5f;
    f[5] = m > 1 ? float(arg) / float(m - 1) : 0.5f;
    f[6] = f[5] - f[4];
    f[10] = best * (1.0f - f[2]);
    f[11] = 1.0f - best;
    f[12] = y_idf[arg];
    if (known && !exact && Lexicon::is_digits(id)) f[13] = 1.0f, ++s.unmatched_digits;
    if (known && lexicon.has_antonyms(id))
      for (size_t j = 0; j < m; ++j)
        if (lexicon.antonyms(id, y_ids[j])) {
          f[14] = 1.0f, ++s.antonyms;
          break;
        }
    s.maxsim += best;
    s.idf_maxsim += w_idf * best;
    s.exact += f[2];
    s.idf_exact += w_idf * f[2];
    idf_sum += w_idf;
    s.worst_missing = std::max(s.worst_missing, double(w_idf) * (1.0 - best));
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    float* f = out.tokens.data() + i * kTokenFeatures;
    if (i > 0) {
      const long step = target[i] - target[i - 1];
      f[7] = float(std::clamp(step, -3L, 3L)) / 3.0f;
      f[8] = step == 1 ? 1.0f : 0.0f;
      kept += step == 1;
    }
    if (i + 1 < n) f[9] = target[i + 1] - target[i] == 1 ? 1.0f : 0.0f;
  }
  // Kendall tau between X positions and their exact-match targets.
  std::vector<size_t> matched;
  for (size_t i = 0; i < n; ++i)
    if (exact_at_target[i]) matched.push_back(i);
  if (matched.size() >= 2) {
    long agree = 0, pairs = 0;
    for (size_t p = 0; p < matched.size(); ++p)
      for (size_t q = p + 1; q < matched.size(); ++q) {
        const long d = target[matched[q]] - target[matched[p]];
        agree += d > 0 ? 1 : d < 0 ? -1 : 0;
        ++pairs;
      }
    s.tau = double(agree) / double(pairs);
  }
  s.maxsim /= double(n);
  s.exact /= double(n);
  s.idf_maxsim /= std::max(idf_sum, 1e-9);
  s.idf_exact /= std::max(idf_sum, 1e-9);
  s.kept = n > 1 ? double(kept) / double(n - 1) : 1.0;
  return s;
}

}  // namespace

AlignmentFeatures alignment_features(const SimilarityMap& map, const PairContext& context, const IdfTable& idf,
                                     const Lexicon& lexicon) {
  VERITY_CHECK(!map.empty(), ConfigError, "alignment features: empty map");
  const size_t n = map.rows(), m = map.cols();
  VERITY_CHECK(context.query_ids.empty() || context.query_ids.size() == n, ConfigError,
               "alignment features: ", context.query_ids.size(), " query token ids for a map of ", n, " rows");
  VERITY_CHECK(context.candidate_ids.empty() || context.candidate_ids.size() == m, ConfigError,
               "alignment features: ", context.candidate_ids.size(), " candidate token ids for a map of ", m,
               " columns");
  std::vector<float> transposed(n * m);
  const auto values = map.values();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < m; ++j) transposed[j * n + i] = values[i * m + j];
  AlignmentFeatures out;
  auto fwd = read_direction(values, n, m, context.query_ids, context.candidate_ids, idf, lexicon, out.forward);
  auto bwd = read_direction(transposed, m, n, context.candidate_ids, context.query_ids, idf, lexicon, out.backward);
  const SoftAlignVerifier f2;
  const float f2_fwd = f2.score(map), f2_bwd = f2.score(SimilarityMap(m, n, std::move(transposed)));
  const bool pooled_known = std::isfinite(context.pooled_cosine);
  auto mean = [](double x, double y) { return float((x + y) / 2); };
  auto low = [](double x, double y) { return float(std::min(x, y)); };
  out.pair = {pooled_known ? context.pooled_cosine : 0.0f,
              pooled_known ? 1.0f : 0.0f,
              mean(fwd.maxsim, bwd.maxsim),
              low(fwd.maxsim, bwd.maxsim),
              mean(fwd.idf_maxsim, bwd.idf_maxsim),
              low(fwd.idf_maxsim, bwd.idf_maxsim),
              mean(fwd.exact, bwd.exact),
              low(fwd.exact, bwd.exact),
              mean(fwd.idf_exact, bwd.idf_exact),
              low(fwd.idf_exact, bwd.idf_exact),
              float(std::abs(std::log(double(n) / double(m)))),
              float(std::log(1.0 + double(n + m)) / 5.0),
              mean(fwd.tau, bwd.tau),
              mean(fwd.kept, bwd.kept),
              mean(f2_fwd, f2_bwd),
              float(std::max(fwd.worst_missing, bwd.worst_missing)),
              mean(fwd.worst_missing, bwd.worst_missing),
              float(std::min<size_t>(std::max(fwd.unmatched_digits, bwd.unmatched_digits), 2)) / 2.0f,
              float(std::min<size_t>(std::max(fwd.antonyms, bwd.antonyms), 2)) / 2.0f};
  return out;
}

}  // namespace verity::verify
