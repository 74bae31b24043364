#include "train/alignment_training.hpp"

#include <atomic>

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/section_file.hpp"
#include "encode/registry.hpp"
#include "eval/pair_eval.hpp"
#include "eval/pair_metrics.hpp"
#include "search/pipeline.hpp"
#include "text/case_folds.hpp"
#include "text/surface.hpp"
#include "verify/detail/alignment_modules.hpp"
#include "verify/pair_scoring.hpp"

namespace verity::train {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One (a, b) pair as the verifier sees it: the map, both texts' token
// identities (by text index) and the pooled cosine.
struct Sample {
  uint32_t a = 0, b = 0;
  verify::SimilarityMap map;
  float cosine = 0;
};

struct SampleSet {
  std::vector<std::string> texts;
  std::vector<std::vector<uint32_t>> ids;  // per text
  std::vector<Sample> samples;
  size_t dim = 0;             // of the pooled vectors
  std::vector<float> pooled;  // [texts × dim], per text as the encoder gave it
  std::span<const float> pooled_of(uint32_t text) const { return {pooled.data() + size_t(text) * dim, dim}; }
};

constexpr std::string_view kCacheMagic = "VPSC";

uint64_t pairs_fingerprint(const std::vector<std::pair<std::string, std::string>>& pairs, const std::string& encoder) {
  uint64_t h = fnv1a64(encoder.data(), encoder.size());
  for (const auto& [a, b] : pairs) {
    h = fnv1a64(a.data(), a.size(), h);
    h = fnv1a64("\x1f", 1, h);
    h = fnv1a64(b.data(), b.size(), h);
    h = fnv1a64("\x1e", 1, h);
  }
  return h;
}

// Version 2 adds the pooled vectors (POOL: texts × dim f32; dim is its size over the texts').
bool load_sample_cache(const std::string& path, uint64_t fingerprint, size_t expected, SampleSet& out) {
  if (path.empty() || !file_exists(path)) return false;
  SectionFile f(path, kCacheMagic, 2);
  if (!f.has("POOL")) {
    log("sample cache ", path, " predates pooled vectors (version ", f.version(), "); rebuilding it");
    return false;
  }
  auto conf = f.reader("CONF");
  if (conf.read<uint64_t>() != fingerprint) {
    log("sample cache ", path, " was made from other pairs or another encoder; rebuilding it");
    return false;
  }
  auto texts = f.reader("TEXT");
  const auto n_texts = texts.read<uint64_t>();
  auto ntok = f.array<uint32_t>("NTOK");
  auto ids = f.array<uint32_t>("IDS.");
  VERITY_CHECK(ntok.size() == n_texts, FormatError, path, ": NTOK has ", ntok.size(), " entries for ", n_texts,
               " texts");
  size_t off = 0;
  for (uint64_t t = 0; t < n_texts; ++t) {
    out.texts.push_back(texts.read_string());
    VERITY_CHECK(off + ntok[t] <= ids.size(), FormatError, path, ": IDS. ends inside text ", t);
    out.ids.emplace_back(ids.begin() + off, ids.begin() + off + ntok[t]);
    off += ntok[t];
  }
  const auto pooled = f.array<float>("POOL");
  VERITY_CHECK(n_texts > 0 && !pooled.empty() && pooled.size() % n_texts == 0, FormatError, path, ": POOL holds ",
               pooled.size(), " values, not one vector per text (", n_texts, " texts)");
  out.dim = pooled.size() / n_texts;
  out.pooled.assign(pooled.begin(), pooled.end());
  auto heads = f.array<uint32_t>("SAMP");
  auto cos = f.array<float>("COS.");
  auto maps = f.array<float>("MAPS");
  VERITY_CHECK(heads.size() == 2 * expected && cos.size() == expected, FormatError, path, ": holds ",
               heads.size() / 2, " samples, ", expected, " expected");
  off = 0;
  for (size_t s = 0; s < expected; ++s) {
    const uint32_t a = heads[2 * s], b = heads[2 * s + 1];
    VERITY_CHECK(a < n_texts && b < n_texts, FormatError, path, ": sample ", s, " names a text out of range");
    const size_t cells = out.ids[a].size() * out.ids[b].size();
    VERITY_CHECK(off + cells <= maps.size(), FormatError, path, ": MAPS ends inside sample ", s);
    out.samples.push_back({a, b,
                           verify::SimilarityMap(out.ids[a].size(), out.ids[b].size(),
                                                 std::vector<float>(maps.begin() + off, maps.begin() + off + cells)),
                           cos[s]});
    off += cells;
  }
  log("sample cache: ", expected, " pairs from ", path);
  return true;
}

void save_sample_cache(const std::string& path, uint64_t fingerprint, const SampleSet& set) {
  ByteWriter conf, texts;
  conf.write<uint64_t>(fingerprint);
  texts.write<uint64_t>(set.texts.size());
  std::vector<uint32_t> ntok, ids, heads;
  for (size_t t = 0; t < set.texts.size(); ++t) {
    texts.write_string(set.texts[t]);
    ntok.push_back(uint32_t(set.ids[t].size()));
    ids.insert(ids.end(), set.ids[t].begin(), set.ids[t].end());
  }
  std::vector<float> cos, maps;
  for (const auto& s : set.samples) {
    heads.push_back(s.a), heads.push_back(s.b), cos.push_back(s.cosine);
    maps.insert(maps.end(), s.map.values().begin(), s.map.values().end());
  }
  SectionWriter w(path, kCacheMagic, 2);
  w.add("CONF", conf);
  w.add("TEXT", texts);
  w.add_array("POOL", std::span<const float>(set.pooled));
  w.add_array("NTOK", std::span<const uint32_t>(ntok));
  w.add_array("IDS.", std::span<const uint32_t>(ids));
  w.add_array("SAMP", std::span<const uint32_t>(heads));
  w.add_array("COS.", std::span<const float>(cos));
  w.add_array("MAPS", std::span<const float>(maps));
  w.commit();
}

// Encodes every pair's texts (chunk by chunk) and keeps only maps and ids.
SampleSet build_samples(const std::vector<std::pair<std::string, std::string>>& pairs, const encode::Encoder& encoder,
                        size_t batch, const std::string& cache) {
  const auto fingerprint = pairs_fingerprint(pairs, encode::encoder_identity(encoder));
  SampleSet set;
  if (load_sample_cache(cache, fingerprint, pairs.size(), set)) return set;
  set = SampleSet();
  set.dim = encoder.dim();
  std::unordered_map<std::string, uint32_t> index;
  encode::EncodeOptions eo;
  eo.batch_size = batch;
  Progress progress("encoding pairs", pairs.size());
  const size_t chunk = 4 * batch;
  for (size_t begin = 0; begin < pairs.size(); begin += chunk) {
    check_interrupt();
    const size_t end = std::min(pairs.size(), begin + chunk);
    std::vector<std::string> texts;
    std::unordered_map<std::string, size_t> local;
    auto slot = [&](const std::string& s) {
      auto [it, fresh] = local.try_emplace(s, texts.size());
      if (fresh) texts.push_back(s);
      return it->second;
    };
    std::vector<std::pair<size_t, size_t>> ends;
    for (size_t i = begin; i < end; ++i) ends.push_back({slot(pairs[i].first), slot(pairs[i].second)});
    auto enc = encoder.encode(texts, eo);
    std::vector<uint32_t> global(texts.size());
    std::vector<std::vector<float>> blocks(texts.size());
    for (size_t t = 0; t < texts.size(); ++t) {
      auto [it, fresh] = index.try_emplace(texts[t], uint32_t(set.texts.size()));
      if (fresh) {
        set.texts.push_back(texts[t]);
        set.ids.push_back(verify::token_identities(enc.token_strings[t]));
        const auto p = enc.pooled_row(t);
        set.pooled.insert(set.pooled.end(), p.begin(), p.end());
      }
      global[t] = it->second;
      blocks[t] = enc.token_block(t);
    }
    for (auto [x, y] : ends)
      set.samples.push_back({global[x], global[y], verify::SimilarityMap::compute(blocks[x], blocks[y], enc.dim),
                             verify::cosine(enc.pooled_row(x), enc.pooled_row(y))});
    progress.add(end - begin);
  }
  progress.finish();
  if (!cache.empty()) {
    save_sample_cache(cache, fingerprint, set);
    log("sample cache: wrote ", set.samples.size(), " pairs to ", cache);
  }
  return set;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Platt scaling with per-item weights, by damped Newton steps on (a, b).
verify::Calibration fit_platt(const std::vector<float>& z, const std::vector<int>& y, const std::vector<double>& w) {
  double a = 1, b = 0;
  for (int it = 0; it < 100; ++it) {
    double ga = 0, gb = 0, haa = 1e-9, hab = 0, hbb = 1e-9;
    for (size_t i = 0; i < z.size(); ++i) {
      const double p = sigmoid(a * z[i] + b), r = w[i] * (p - y[i]), h = w[i] * std::max(p * (1 - p), 1e-12);
      ga += r * z[i], gb += r;
      haa += h * z[i] * z[i], hab += h * z[i], hbb += h;
    }
    const double det = haa * hbb - hab * hab;
    if (std::abs(det) < 1e-18) break;
    const double da = (hbb * ga - hab * gb) / det, db = (haa * gb - hab * ga) / det;
    a -= da, b -= db;
    a = std::max(a, 1e-3);
    if (std::abs(da) + std::abs(db) < 1e-9) break;
  }
  verify::Calibration fitted;
  fitted.scale = float(a), fitted.bias = float(b);
  return fitted;
}

}  // namespace

PooledTerm parse_pooled_term(const std::string& text) {
  if (text == "none" || text == "false") return PooledTerm::none;
  if (text == "penalty") return PooledTerm::penalty;
  if (text == "refit" || text == "true") return PooledTerm::refit;
  if (text == "gated") return PooledTerm::gated;
  throw ConfigError(cat("pooled term '", text, "' is unknown (valid: none, penalty, refit, gated)"));
}

const char* pooled_term_name(PooledTerm term) {
  switch (term) {
    case PooledTerm::penalty: return "penalty";
    case PooledTerm::refit: return "refit";
    case PooledTerm::gated: return "gated";
    case PooledTerm::none: break;
  }
  return "none";
}

ThresholdRule parse_threshold_rule(const std::string& text) {
  if (text == "best") return ThresholdRule::best;
  if (text == "plateau") return ThresholdRule::plateau;
  throw ConfigError(cat("threshold rule '", text, "' is unknown (valid: best, plateau)"));
}

const char* threshold_rule_name(ThresholdRule rule) { return rule == ThresholdRule::best ? "best" : "plateau"; }

double threshold_from_accuracy_curve(const std::vector<double>& curve, ThresholdRule rule) {
  constexpr int half_window = 5;
  const int steps = kLastThresholdStep - kFirstThresholdStep + 1;
  VERITY_CHECK(int(curve.size()) == steps, ConfigError, "threshold: an accuracy curve of ", curve.size(),
               " steps (expected ", steps, ")");
  const int reach = rule == ThresholdRule::plateau ? half_window : 0;
  int best = reach;
  double best_rank = -1;
  for (int k = reach; k + reach < steps; ++k) {
    double rank = 0;
    for (int j = k - reach; j <= k + reach; ++j) rank += curve[size_t(j)] / double(2 * reach + 1);
    if (rank > best_rank + 1e-12) best_rank = rank, best = k;
  }
  return (kFirstThresholdStep + best) / 100.0;
}

CalibrationFit fit_calibration(const std::vector<CalibrationGroup>& groups, PooledTerm term, ThresholdRule rule,
                               const std::optional<verify::CalibrationGate>& fixed_gate, double gate_band) {
  VERITY_CHECK(!groups.empty(), ConfigError, "f5 calibration: no dev groups");
  VERITY_CHECK(!fixed_gate || term == PooledTerm::gated, ConfigError,
               "f5 calibration: a fixed gate needs the gated pooled term, not '", pooled_term_name(term), "'");
  VERITY_CHECK(gate_band >= 0 && gate_band < 0.5, ConfigError, "f5 calibration: gate band ", gate_band,
               " must be in [0, 0.5)");
  VERITY_CHECK(gate_band == 0 || term == PooledTerm::gated, ConfigError,
               "f5 calibration: a gate band needs the gated pooled term, not '", pooled_term_name(term), "'");
  double w_sum = 0, z_mean = 0, z_sq = 0, c_mean = 0, c_sq = 0, c_w = 0;
  for (const auto& g : groups) {
    VERITY_CHECK(!g.logits.empty() && g.logits.size() == g.cosines.size() && g.logits.size() == g.labels.size(),
                 ConfigError, "f5 calibration: group ", g.name, " has ", g.logits.size(), " logits, ", g.cosines.size(),
                 " cosines and ", g.labels.size(), " labels");
    const double w = 1.0 / double(g.logits.size());
    for (size_t i = 0; i < g.logits.size(); ++i) {
      const double z = g.logits[i];
      w_sum += w, z_mean += w * z, z_sq += w * z * z;
      if (const double c = g.cosines[i]; std::isfinite(c)) c_w += w, c_mean += w * c, c_sq += w * c * c;
    }
  }
  z_mean /= w_sum;
  const double z_sd = std::sqrt(std::max(z_sq / w_sum - z_mean * z_mean, 1e-12));
  if (c_w > 0) c_mean /= c_w;
  const double c_sd = c_w > 0 ? std::sqrt(std::max(c_sq / c_w - c_mean * c_mean, 1e-12)) : 1.0;
  if (c_w == 0) term = PooledTerm::none;
  const bool linear = term == PooledTerm::gated;
  // The pooled term, standardized: the verifier's hinge (only a cosine below
  // the mean counts) or, gated, the plain difference; an unknown cosine adds nothing.
  auto pooled = [&](double c) {
    if (!std::isfinite(c)) return 0.0;
    return (linear ? c - c_mean : std::min(c - c_mean, 0.0)) / c_sd;
  };
  auto fused = [&](const CalibrationGroup& g, size_t i, double share) {
    return (1 - share) * g.logits[i] / z_sd + share * pooled(g.cosines[i]);
  };
  auto macro_auc_of = [&](auto&& score) {
    double macro = 0;
    for (const auto& g : groups) {
      std::vector<float> pos, neg;
      for (size_t i = 0; i < g.logits.size(); ++i) (g.labels[i] ? pos : neg).push_back(float(score(g, i)));
      macro += eval::roc_auc(pos, neg) / double(groups.size());
    }
    return macro;
  };
  std::vector<int> y;
  std::vector<double> w;
  for (const auto& g : groups)
    for (size_t i = 0; i < g.logits.size(); ++i) y.push_back(g.labels[i]), w.push_back(1.0 / double(g.logits.size()));
  // Platt scaling of the standardized sum, in the verifier's terms.
  auto platt_at = [&](double share) {
    std::vector<float> u;
    for (const auto& g : groups)
      for (size_t i = 0; i < g.logits.size(); ++i) u.push_back(float(fused(g, i, share)));
    const auto platt = fit_platt(u, y, w);
    verify::Calibration c;
    c.scale = float(platt.scale * (1 - share) / z_sd);
    c.pooled_weight = float(platt.scale * share / c_sd);
    c.pooled_center = float(c_mean);
    if (linear && share > 0) c.pooled_form = verify::Calibration::PooledForm::linear;
    c.bias = platt.bias;
    return c;
  };
  auto probability_of = [](const verify::Calibration& c) {
    return [&c](const CalibrationGroup& g, size_t i) {
      return g.probability(c, i);
    };
  };
  auto mean_accuracy_at = [&](const verify::Calibration& c, double t) {
    double mean = 0;
    for (const auto& g : groups) {
      size_t right = 0;
      for (size_t i = 0; i < g.logits.size(); ++i)
        right += (g.probability(c, i) >= t) == (g.labels[i] == 1);
      mean += double(right) / double(g.logits.size()) / double(groups.size());
    }
    return mean;
  };
  // The verdict threshold, read off the mean accuracy over the groups.
  auto choose_threshold = [&](verify::Calibration& c, double& accuracy) {
    std::vector<double> curve;
    for (int step = kFirstThresholdStep; step <= kLastThresholdStep; ++step)
      curve.push_back(mean_accuracy_at(c, step / 100.0));
    const double t = threshold_from_accuracy_curve(curve, rule);
    c.threshold = float(t);
    accuracy = curve[size_t(std::lround(t * 100)) - kFirstThresholdStep];
  };
  CalibrationFit fit;
  fit.term = term;
  fit.threshold_rule = rule;
  fit.network_macro_auc = fit.macro_auc = macro_auc_of([&](const CalibrationGroup& g, size_t i) { return fused(g, i, 0); });
  if (term == PooledTerm::refit)
    for (int step = 1; step <= 9; ++step)
      if (const double m = macro_auc_of([&](const CalibrationGroup& g, size_t i) { return fused(g, i, step / 10.0); });
          m > fit.macro_auc + 1e-12)
        fit.macro_auc = m, fit.pooled_share = step / 10.0;
  auto& c = fit.calibration;
  if (fixed_gate) {  // share 0 is the gate's own calibration, unchanged
    c.scale = fixed_gate->scale, c.bias = fixed_gate->bias, c.threshold = fixed_gate->threshold;
    c.pooled_center = float(c_mean);
    fit.mean_accuracy = mean_accuracy_at(c, c.threshold);
  } else {
    c = platt_at(fit.pooled_share);
    choose_threshold(c, fit.mean_accuracy);
  }
  if (term == PooledTerm::gated) {
    // The network's own fit (or the fixed gate) is the gate and its threshold
    // the verdict threshold, so the verdicts are the network's own: the pooled
    // term only orders pairs within each verdict (verify::CalibrationGate).
    // The share kept has the best dev macro AUC of the gated probability,
    // Platt scaling refitted for each.
    auto gate = fixed_gate.value_or(verify::CalibrationGate{c.scale, c.bias, c.threshold});
    gate.band = float(gate_band);
    for (int step = 1; step <= 9; ++step) {
      auto candidate = platt_at(step / 10.0);
      candidate.gate = gate;
      candidate.threshold = gate.threshold;
      if (const double m = macro_auc_of(probability_of(candidate)); m > fit.macro_auc + 1e-12)
        fit.macro_auc = m, fit.pooled_share = step / 10.0, c = candidate;
    }
    // Without a band fit.mean_accuracy stays the network's: the verdicts are the same.
    if (gate_band > 0 && c.gate) fit.mean_accuracy = mean_accuracy_at(c, c.threshold);
  }
  if (term == PooledTerm::penalty) {
    // The hinge's weight by weighted maximum likelihood (Newton steps, kept
    // >= 0) with the network's scale, bias and threshold fixed.
    double weight = 0;
    for (int it = 0; it < 100; ++it) {
      double grad = 0, hess = 1e-12;
      size_t k = 0;
      for (const auto& g : groups)
        for (size_t i = 0; i < g.logits.size(); ++i, ++k) {
          const double h = pooled(g.cosines[i]);
          const double p = sigmoid(double(c.scale) * g.logits[i] + c.bias + weight * h);
          grad += w[k] * (p - y[k]) * h, hess += w[k] * std::max(p * (1 - p), 1e-12) * h * h;
        }
      const double next = std::max(weight - grad / hess, 0.0);
      const bool done = std::abs(next - weight) < 1e-10;
      weight = next;
      if (done) break;
    }
    c.pooled_weight = float(weight / c_sd);
    const double macro = macro_auc_of(probability_of(c));
    if (macro > fit.network_macro_auc + 1e-12) {
      fit.macro_auc = macro;
      // In the standardized sum's terms, the share the hinge's weight amounts to.
      fit.pooled_share = weight / (weight + double(c.scale) * z_sd);
      fit.mean_accuracy = mean_accuracy_at(c, c.threshold);
    } else {
      c.pooled_weight = 0;  // the likelier fit ranks no better: the network alone
    }
  }
  return fit;
}

namespace {

// The network's logits of an F5 (or, with `signals`, 1 where a pair has an
// identity signal and 0 elsewhere), as a Verifier the pair scorer can run.
class LogitScorer final : public verify::Verifier {
 public:
  explicit LogitScorer(const verify::AlignmentVerifier& f5, bool signals = false) : f5_(f5), signals_(signals) {}
  float score(const verify::SimilarityMap& map) const override {
    const verify::PairContext none;
    return score_pairs({&map, 1}, {&none, 1})[0];
  }
  std::vector<float> score_pairs(std::span<const verify::SimilarityMap> maps,
                                 std::span<const verify::PairContext> context) const override {
    if (!signals_) return f5_.logits(maps, context);
    std::vector<uint8_t> flags;
    f5_.logits(maps, context, &flags);
    return std::vector<float>(flags.begin(), flags.end());
  }
  bool uses_context() const override { return true; }
  std::string encoder() const override { return f5_.encoder(); }
  std::string spec() const override { return f5_.spec(); }
  bool is_trained() const override { return f5_.is_trained(); }

 private:
  const verify::AlignmentVerifier& f5_;
  bool signals_;
};

std::map<std::string, SourceMetrics> metrics_at(const std::vector<CalibrationGroup>& groups,
                                                const verify::Calibration& c) {
  std::map<std::string, SourceMetrics> out;
  for (const auto& g : groups) {
    std::vector<float> p;
    for (size_t i = 0; i < g.logits.size(); ++i)
      p.push_back(float(g.probability(c, i)));
    auto m = eval::binary_metrics(p, g.labels, c.threshold);
    out[g.name] = {m.auc, *m.accuracy, m.best_accuracy, m.count};
  }
  return out;
}

}  // namespace

GateSource parse_gate_source(const std::string& text) {
  if (text == "refit") return GateSource::refit;
  if (text == "file") return GateSource::file;
  throw ConfigError(cat("gate '", text, "' is unknown (valid: refit, file)"));
}

const char* gate_source_name(GateSource source) { return source == GateSource::file ? "file" : "refit"; }

size_t spell_lexicon(verify::AlignmentVerifier& verifier, const encode::Encoder& encoder) {
  std::vector<std::string> texts;
  std::vector<uint8_t> capitalized;  // texts[i] is texts[i - 1] capitalized
  auto forms = verifier.lexicon().antonym_forms();
  const std::set<std::string> listed(forms.begin(), forms.end());
  for (const auto& number : verifier.lexicon().words().numbers)
    if (!number.empty() && listed.count(number) == 0) forms.push_back(number);
  for (const auto& form : forms) {
    texts.push_back(form), capitalized.push_back(0);
    if (form[0] >= 'a' && form[0] <= 'z')
      texts.push_back(std::string(1, char(form[0] - 'a' + 'A')) + form.substr(1)), capitalized.push_back(1);
  }
  verify::LexiconSpellings spellings;
  constexpr size_t kChunk = 4096;  // progress and interrupts between chunks
  Progress progress("spell lexicon", texts.size());
  for (size_t begin = 0; begin < texts.size(); begin += kChunk) {
    check_interrupt();
    const size_t end = std::min(texts.size(), begin + kChunk);
    auto pieces = encoder.pieces(std::span<const std::string>(texts).subspan(begin, end - begin));
    for (size_t i = begin; i < end; ++i) {
      auto& p = pieces[i - begin];
      // An uncased tokenizer writes "Disable" as "disable": one spelling is enough.
      const bool same_as_lower = capitalized[i] && !spellings.empty() && spellings.back().first == texts[i - 1] &&
                                 spellings.back().second == p;
      if (p.size() >= 2 && !same_as_lower) spellings.emplace_back(texts[i], std::move(p));
    }
    progress.add(end - begin);
  }
  progress.finish();
  const size_t count = spellings.size();
  verifier.set_spellings(std::move(spellings));
  return count;
}

PairRuleFits fit_pair_rules(const encode::Encoder& encoder, const std::vector<LabelledGroup>& groups, bool surface,
                            bool names, bool transpositions, bool numbers) {
  PairRuleFits fits;
  if (surface) fits.surface.emplace();
  if (names) fits.names.emplace();
  if (transpositions) fits.transpositions.emplace();
  if (numbers) fits.numbers.emplace();
  const auto spellings = text::registered_surface_spellings();  // the encoder's tokenizer registered its own
  const auto folds = text::registered_case_folds();
  // Adds a pair to its group's count and the total where the rule picks it.
  const auto count = [](auto& fit, const std::string& group, bool picked, int label) {
    if (!picked) return;
    auto& [pairs, same] = fit.by_group[group];
    ++pairs, ++fit.pairs;
    if (label == 1) ++same, ++fit.same;
  };
  constexpr size_t kChunk = 4096;  // pairs per batch: progress and interrupts between them
  size_t total = 0;
  for (const auto& g : groups) total += g.pairs.size();
  Progress progress("pair rules", total);
  for (const auto& g : groups) {
    if (fits.surface) fits.surface->by_group[g.name];  // every group listed, with or without pairs
    if (fits.names) fits.names->by_group[g.name];
    if (fits.transpositions) fits.transpositions->by_group[g.name];
    if (fits.numbers) fits.numbers->by_group[g.name];
    for (size_t begin = 0; begin < g.pairs.size(); begin += kChunk) {
      check_interrupt();
      const size_t end = std::min(g.pairs.size(), begin + kChunk);
      std::vector<std::string> texts;
      for (size_t i = begin; i < end; ++i) texts.push_back(g.pairs[i].a), texts.push_back(g.pairs[i].b);
      const auto pieces = encoder.pieces(texts);
      for (size_t i = begin; i < end; ++i) {
        const auto a = verify::token_identities(pieces[2 * (i - begin)]);
        const auto b = verify::token_identities(pieces[2 * (i - begin) + 1]);
        const int label = g.pairs[i].label;
        const auto read = spellings->readings(a, b, folds.get());
        if (fits.surface) count(*fits.surface, g.name, spellings->same_surface(a, b) || read.number_respelling, label);
        if (fits.names) count(*fits.names, g.name, read.name_swap || read.kind_swap, label);
        if (fits.transpositions) count(*fits.transpositions, g.name, read.transposition, label);
        if (fits.numbers) count(*fits.numbers, g.name, read.number_change, label);
      }
      progress.add(end - begin);
    }
  }
  progress.finish();
  const auto share = [](const auto& fit) { return double(fit.same + 1) / double(fit.pairs + 2); };
  if (fits.surface) fits.surface->floor = share(*fits.surface);
  if (fits.names) fits.names->cap = share(*fits.names);
  if (fits.transpositions) fits.transpositions->cap = share(*fits.transpositions);
  if (fits.numbers) fits.numbers->cap = share(*fits.numbers);
  return fits;
}

RecalibrationReport recalibrate(verify::AlignmentVerifier& verifier, const encode::Encoder& encoder,
                                const std::vector<LabelledGroup>& groups, const RecalibrateOptions& o) {
  VERITY_CHECK(!groups.empty(), ConfigError, "recalibrate: no labelled groups");
  search::check_verifier_encoder(verifier, encoder);
  const auto t0 = Clock::now();
  RecalibrationReport report;
  report.previous = verifier.calibration();
  VERITY_CHECK(!o.keep_calibration || report.previous.has_value(), ConfigError,
               "recalibrate: the file has no calibration to keep");
  VERITY_CHECK(!o.keep_calibration || o.fit_flip_cap || o.fit_surface_floor || o.fit_name_cap ||
                   o.fit_transposition_cap || o.fit_number_cap,
               ConfigError,
               "recalibrate: keeping the file's calibration fits only a flip cap, a surface floor, a name cap, a "
               "transposition cap or a number cap, and none was asked for");
  std::optional<verify::CalibrationGate> fixed_gate;
  if (o.gate_source == GateSource::file && !o.keep_calibration) {
    VERITY_CHECK(o.term == PooledTerm::gated, ConfigError,
                 "recalibrate: the file's gate needs --pooled-term gated, not '", pooled_term_name(o.term), "'");
    VERITY_CHECK(report.previous.has_value(), ConfigError,
                 "recalibrate: the file has no calibration to keep as the gate (use the refitted gate)");
    const auto& prev = *report.previous;
    if (prev.gate) fixed_gate = prev.gate;
    else {
      VERITY_CHECK(prev.pooled_weight == 0, ConfigError, "recalibrate: the file's calibration has a pooled term (weight ",
                   prev.pooled_weight, "), so its verdicts are not the network's alone and cannot be the gate");
      fixed_gate = verify::CalibrationGate{prev.scale, prev.bias, prev.threshold};
    }
  }
  // Fitted before any pair is scored: a floor with no surface match to stand on fails fast.
  if (o.fit_surface_floor || o.fit_name_cap || o.fit_transposition_cap || o.fit_number_cap) {
    auto fits = fit_pair_rules(encoder, o.rule_groups, o.fit_surface_floor, o.fit_name_cap, o.fit_transposition_cap,
                               o.fit_number_cap);
    report.surface = std::move(fits.surface), report.names = std::move(fits.names);
    report.transpositions = std::move(fits.transpositions), report.numbers = std::move(fits.numbers);
  }
  if (report.surface) {
    VERITY_CHECK(report.surface->pairs > 0, ConfigError,
                 "recalibrate: no dev pair is the same text on the surface (case, spacing, punctuation aside), so a "
                 "surface floor cannot be fitted");
  }
  if (report.names) {
    VERITY_CHECK(report.names->pairs > 0, ConfigError,
                 "recalibrate: no dev pair differs by a swapped name (one capitalized word inside the text), so a "
                 "name cap cannot be fitted");
  }
  if (report.transpositions) {
    VERITY_CHECK(report.transpositions->pairs > 0, ConfigError,
                 "recalibrate: no dev pair is the same text with two words trading places, so a transposition cap "
                 "cannot be fitted");
  }
  if (report.numbers) {
    VERITY_CHECK(report.numbers->pairs > 0, ConfigError,
                 "recalibrate: no dev pair is the same text but for numbers, so a number cap cannot be fitted");
  }
  const LogitScorer logits(verifier);
  const LogitScorer signals(verifier, true);
  // nullptr: the pooled cosine; the signals only where a band, a flip cap, a
  // surface floor or a cap (the new calibration's or the file's own) reads
  // them.
  std::vector<const verify::Verifier*> scorers = {&logits, nullptr};
  const auto& prev = report.previous;
  const bool read_signals =
      o.gate_band > 0 || o.fit_flip_cap || report.surface || report.names || report.transpositions ||
      report.numbers ||
      (prev && (prev->flip_cap < 1 || prev->surface_floor > 0 || prev->name_cap < 1 || prev->transposition_cap < 1 ||
                prev->number_cap < 1 || (prev->gate && prev->gate->band > 0)));
  if (read_signals) scorers.push_back(&signals);
  std::vector<CalibrationGroup> cgs;
  for (const auto& g : groups) {
    VERITY_CHECK(!g.pairs.empty(), ConfigError, "recalibrate: group ", g.name, " has no pairs");
    size_t same = 0;
    for (const auto& p : g.pairs) same += p.label == 1;
    VERITY_CHECK(same > 0 && same < g.pairs.size(), ConfigError, "recalibrate: group ", g.name,
                 " needs pairs of both labels (", same, " of ", g.pairs.size(), " are same-meaning)");
    log("recalibrate: scoring ", g.pairs.size(), " pairs of ", g.name);
    auto s = eval::score_labelled_pairs(g.pairs, encoder, scorers, o.chunk);
    CalibrationGroup cg{g.name, std::move(s[0]), {}, {}, {}};
    for (size_t i = 0; i < g.pairs.size(); ++i) {
      cg.cosines.push_back(s[1][i]);
      cg.labels.push_back(g.pairs[i].label);
      if (read_signals) cg.signals.push_back(uint8_t(s[2][i]));
    }
    report.pairs += g.pairs.size();
    cgs.push_back(std::move(cg));
  }
  auto summarize = [&](CalibrationFit& fit) {
    double macro = 0, accuracy = 0;
    for (const auto& [name, m] : metrics_at(cgs, fit.calibration)) macro += m.auc, accuracy += m.accuracy;
    fit.macro_auc = macro / double(cgs.size());
    fit.mean_accuracy = accuracy / double(cgs.size());
  };
  if (o.keep_calibration) {
    report.fit.calibration = *prev;
    report.fit.term = PooledTerm::none;
    double network = 0;
    for (const auto& g : cgs) network += eval::binary_metrics(g.logits, g.labels).auc;
    report.fit.network_macro_auc = network / double(cgs.size());  // summarized below, with the caps or floor
  } else {
    report.fit = fit_calibration(cgs, o.term, o.rule, fixed_gate, o.gate_band);
  }
  auto& c = report.fit.calibration;
  if (o.fit_flip_cap) {
    FlipCapFit flips;
    for (const auto& g : cgs) {
      auto& [pairs, same] = flips.by_group[g.name];
      for (size_t i = 0; i < g.logits.size(); ++i)
        if (g.minimal_flip(i)) ++pairs, same += g.labels[i] == 1;
      flips.pairs += pairs, flips.same += same;
    }
    VERITY_CHECK(flips.pairs > 0, ConfigError, "recalibrate: no dev pair differs only by a polarity flip, so a flip cap "
                 "cannot be fitted (give pairs or near-miss triples with negations or opposites)");
    flips.cap = double(flips.same + 1) / double(flips.pairs + 2);
    c.flip_cap = float(flips.cap);
    log("recalibrate: ", flips.pairs, " dev pairs differ only by a polarity flip, ", flips.same,
        " of them same-meaning: P of such a pair capped at ", flips.cap);
    report.flips = std::move(flips);
  }
  if (report.surface) {
    c.surface_floor = float(report.surface->floor);
    log("recalibrate: ", report.surface->pairs, " dev pairs are the same text on the surface, ", report.surface->same,
        " of them same-meaning: P of such a pair at least ", report.surface->floor);
  }
  if (report.names) {
    c.name_cap = float(report.names->cap);
    log("recalibrate: ", report.names->pairs, " dev pairs differ by a swapped name, ", report.names->same,
        " of them same-meaning: P of such a pair capped at ", report.names->cap);
  }
  if (report.transpositions) {
    c.transposition_cap = float(report.transpositions->cap);
    log("recalibrate: ", report.transpositions->pairs, " dev pairs are the same text with two words trading places, ",
        report.transpositions->same, " of them same-meaning: P of such a pair capped at ", report.transpositions->cap);
  }
  if (report.numbers) {
    c.number_cap = float(report.numbers->cap);
    log("recalibrate: ", report.numbers->pairs, " dev pairs are the same text but for numbers, ",
        report.numbers->same, " of them same-meaning: P of such a pair capped at ", report.numbers->cap);
  }
  if (o.fit_flip_cap || report.surface || report.names || report.transpositions || report.numbers)
    summarize(report.fit);  // the fit's figures with them
  report.dev = metrics_at(cgs, c);
  if (report.previous) report.previous_dev = metrics_at(cgs, *report.previous);
  verifier.set_calibration(c);
  report.seconds = seconds_since(t0);
  return report;
}

double scheduled_lr(const AlignmentTrainOptions& o, size_t step) {
  if (!o.cosine_lr) return o.lr;
  const double total = double(std::max<size_t>(1, o.epochs * o.steps_per_epoch));
  return o.lr * 0.5 * (1.0 + std::cos(std::numbers::pi * std::min(double(step), total) / total));
}

std::unique_ptr<verify::AlignmentVerifier> train_alignment_verifier(
    const verify::AlignmentConfig& requested, const encode::Encoder& encoder, const std::vector<PairSourceData>& sources,
    const std::vector<data::Triple>& train_triples, const std::vector<data::Triple>& dev_triples,
    const AlignmentTrainOptions& o, const std::string& provenance, AlignmentTrainReport& report) {
  VERITY_CHECK(!sources.empty() || !train_triples.empty(), ConfigError, "f5 training: no training pairs or triples");
  VERITY_CHECK(o.epochs > 0 && o.steps_per_epoch > 0, ConfigError, "f5 training: epochs and steps must be positive");
  // Every (a, b) the run needs, in a fixed order: per source train then dev,
  // then train triples (q, pos), (q, neg), then dev triples.
  std::vector<std::pair<std::string, std::string>> pairs;
  struct Group {
    std::string name;
    std::vector<size_t> items;
    std::vector<int> labels;
  };
  std::vector<Group> train_groups, dev_groups;
  for (const auto& s : sources) {
    Group tr{s.name, {}, {}}, dv{s.name, {}, {}};
    for (const auto& p : s.train) tr.items.push_back(pairs.size()), tr.labels.push_back(p.label), pairs.push_back({p.a, p.b});
    for (const auto& p : s.dev) dv.items.push_back(pairs.size()), dv.labels.push_back(p.label), pairs.push_back({p.a, p.b});
    VERITY_CHECK(!tr.items.empty(), ConfigError, "f5 training: source ", s.name, " has no training pairs");
    report.train_pairs += tr.items.size(), report.dev_pairs += dv.items.size();
    train_groups.push_back(std::move(tr));
    if (!dv.items.empty()) dev_groups.push_back(std::move(dv));
  }
  std::vector<double> source_weight(train_groups.size(), 1.0);
  for (const auto& [name, w] : o.source_weights) {
    // A named copy: clang before 16 cannot capture a structured binding.
    auto it = std::find_if(train_groups.begin(), train_groups.end(),
                           [&source = name](const Group& g) { return g.name == source; });
    VERITY_CHECK(it != train_groups.end(), ConfigError, "f5 training: source weight for '", name,
                 "', which is not a pair source");
    VERITY_CHECK(std::isfinite(w) && w > 0, ConfigError, "f5 training: source weight for '", name,
                 "' must be positive, got ", w);
    source_weight[size_t(it - train_groups.begin())] = w;
  }
  struct TripleItem {
    size_t pos, neg;
    std::string type;
  };
  auto add_triples = [&](const std::vector<data::Triple>& ts) {
    std::vector<TripleItem> out;
    for (const auto& t : ts) {
      out.push_back({pairs.size(), pairs.size() + 1, t.type.empty() ? "unknown" : t.type});
      pairs.push_back({t.query, t.positive});
      pairs.push_back({t.query, t.negative});
    }
    return out;
  };
  const auto train_trip = add_triples(train_triples), dev_trip = add_triples(dev_triples);
  report.train_triples = train_trip.size(), report.dev_triples = dev_trip.size();

  const auto t_encode = Clock::now();
  SampleSet set = build_samples(pairs, encoder, o.encode_batch, o.sample_cache);
  report.encode_seconds = seconds_since(t_encode);
  // A pooled head reads vectors of the encoder's dimension.
  verify::AlignmentConfig config = requested;
  if (config.pooled_head > 0) {
    VERITY_CHECK(config.pooled_dim == 0 || config.pooled_dim == set.dim, ConfigError, "f5 training: pooled_dim ",
                 config.pooled_dim, " for an encoder of dimension ", set.dim);
    config.pooled_dim = set.dim;
  }

  // A fold_case verifier reads every identity folded through its encoder's
  // case folds (registered when the encoder's tokenizer was made); teachers
  // keep reading set.ids, as they fold for themselves.
  text::CaseFolds folds;
  std::vector<std::vector<uint32_t>> folded_ids;
  if (config.fold_case) {
    folds = *text::registered_case_folds();
    log("f5: identities read ignoring case, ", folds.size(), " pieces of the vocabulary fold");
    folded_ids.reserve(set.ids.size());
    for (const auto& ids : set.ids) folded_ids.push_back(folds.fold_all(ids));
  }
  const auto& feature_ids = config.fold_case ? folded_ids : set.ids;

  // IDF over the distinct training texts.
  std::vector<uint8_t> is_train_text(set.texts.size(), 0);
  for (const auto& g : train_groups)
    for (size_t i : g.items) is_train_text[set.samples[i].a] = is_train_text[set.samples[i].b] = 1;
  for (const auto& t : train_trip)
    for (size_t i : {t.pos, t.neg}) is_train_text[set.samples[i].a] = is_train_text[set.samples[i].b] = 1;
  std::vector<std::vector<uint32_t>> train_ids;
  for (size_t t = 0; t < set.texts.size(); ++t)
    if (is_train_text[t]) train_ids.push_back(feature_ids[t]);
  auto idf = verify::build_idf_table(train_ids);
  log("f5: idf over ", idf.documents(), " training texts, ", idf.document_frequency().size(), " distinct tokens");

  const verify::Lexicon lexicon(o.antonyms, o.lexicon_words);
  const verify::TokenTable token_table(idf, lexicon);
  const auto spellings = config.whole_words ? text::registered_surface_spellings() : nullptr;
  const text::SurfaceSpellings* whole_words = spellings.get();
  std::vector<verify::AlignmentFeatures> features(set.samples.size());
  {
    Progress progress("alignment features", set.samples.size());
    std::atomic<size_t> done{0};
    at::parallel_for(0, int64_t(set.samples.size()), 256, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) {
        const auto& s = set.samples[size_t(k)];
        verify::PairContext ctx{feature_ids[s.a], feature_ids[s.b], s.cosine};
        if (s.map.empty()) continue;
        auto& f = features[size_t(k)];
        f = verify::alignment_features(s.map, ctx, token_table, lexicon, nullptr, whole_words);
        if (config.pooled_head > 0) f.pooled = verify::pooled_comparison(set.pooled_of(s.a), set.pooled_of(s.b));
      }
      done += size_t(hi - lo);
    });
    progress.add(done);
    progress.finish();
  }
  std::vector<double> cosine_of(set.samples.size());
  for (size_t k = 0; k < set.samples.size(); ++k) cosine_of[k] = set.samples[k].cosine;
  // Soft targets of the training items (NaN: the label alone); the maps are
  // moved out, as they are dropped right after.
  std::vector<float> teacher_p(set.samples.size(), std::numeric_limits<float>::quiet_NaN());
  if (!o.teachers.empty()) {
    VERITY_CHECK(o.distill_weight > 0 && o.distill_weight <= 1, ConfigError,
                 "f5 training: the distillation weight must lie in (0, 1], got ", o.distill_weight);
    const auto identity = encode::encoder_identity(encoder);
    for (const auto* t : o.teachers) {
      VERITY_CHECK(t && t->is_trained(), ConfigError, "f5 training: a teacher is not a trained F5 verifier");
      VERITY_CHECK(t->encoder() == identity, ConfigError, "f5 training: teacher ", t->spec(), " was trained on encoder '",
                   t->encoder(), "', this run encodes with '", identity, "'");
    }
    // Every item is its own sample (one per pair and triple side), so no repeats.
    std::vector<size_t> need;
    for (const auto& g : train_groups) need.insert(need.end(), g.items.begin(), g.items.end());
    for (const auto& t : train_trip) need.push_back(t.pos), need.push_back(t.neg);
    std::erase_if(need, [&](size_t k) { return set.samples[k].map.empty(); });
    std::vector<double> logit_sum(need.size(), 0.0);
    Progress progress("distillation targets", need.size());
    constexpr size_t kChunk = 1024;
    for (size_t lo = 0; lo < need.size(); lo += kChunk) {
      check_interrupt();
      const size_t hi = std::min(need.size(), lo + kChunk);
      std::vector<verify::SimilarityMap> maps;
      std::vector<verify::PairContext> ctx;
      for (size_t k = lo; k < hi; ++k) {
        auto& s = set.samples[need[k]];
        maps.push_back(std::move(s.map));
        ctx.push_back({set.ids[s.a], set.ids[s.b], s.cosine, set.pooled_of(s.a), set.pooled_of(s.b)});
      }
      for (const auto* t : o.teachers) {
        const auto p = t->score_pairs(maps, ctx);
        for (size_t k = lo; k < hi; ++k) {
          const double q = std::clamp(double(p[k - lo]), 1e-6, 1.0 - 1e-6);
          logit_sum[k] += std::log(q / (1.0 - q));
        }
      }
      progress.add(hi - lo);
    }
    progress.finish();
    for (size_t k = 0; k < need.size(); ++k)
      teacher_p[need[k]] = float(sigmoid(logit_sum[k] / double(o.teachers.size())));
    log("f5: distillation targets from ", o.teachers.size(), " teacher(s) for ", need.size(), " training pairs, weight ",
        o.distill_weight);
  }
  // The training target of item k with label y.
  auto target = [&](size_t k, float y) {
    const float p = teacher_p[k];
    return std::isnan(p) ? y : float((1.0 - o.distill_weight) * y + o.distill_weight * p);
  };
  set.samples.clear();

  auto model = verify::AlignmentVerifier::untrained(config, idf, o.seed, lexicon);
  model->set_case_folds(std::move(folds));
  auto& net = model->impl().net;
  torch::manual_seed(o.seed);
  torch::optim::AdamW opt(net->parameters(), torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ULL + 1);

  auto batch_of = [&](const std::vector<size_t>& items) {
    std::vector<const verify::AlignmentFeatures*> ptrs;
    for (size_t i : items) ptrs.push_back(&features[i]);
    return verify::detail::make_alignment_batch(ptrs, config);
  };
  auto logits_of = [&](const std::vector<size_t>& items) {
    std::vector<float> out;
    torch::NoGradGuard no_grad;
    net->eval();
    for (size_t b = 0; b < items.size(); b += 256) {
      std::vector<size_t> chunk(items.begin() + b, items.begin() + std::min(items.size(), b + 256));
      auto z = net->forward(batch_of(chunk)).contiguous();
      out.insert(out.end(), z.data_ptr<float>(), z.data_ptr<float>() + z.numel());
    }
    return out;
  };
  // Per-type buckets of the training triples.
  std::map<std::string, std::vector<size_t>> by_type;
  for (size_t k = 0; k < train_trip.size(); ++k) by_type[train_trip[k].type].push_back(k);

  // Dev groups for the epoch choice and the calibration: every source, and
  // the near-miss triples as pairs, each weighing the same.
  std::vector<Group> calib = dev_groups;
  if (!dev_trip.empty()) {
    Group g{"nearmiss", {}, {}};
    for (const auto& t : dev_trip) g.items.push_back(t.pos), g.labels.push_back(1), g.items.push_back(t.neg), g.labels.push_back(0);
    calib.push_back(std::move(g));
  }
  struct DevScores {
    std::map<std::string, double> auc;  // of the network's logit, per group
    double macro = 0, network_macro = 0;  // macro of the calibrated score, of the logit alone
    std::optional<CalibrationFit> fit;
    std::vector<CalibrationGroup> groups;
  };
  // The epoch is chosen by the dev macro AUC of the score the file will
  // give: the calibrated one, with its pooled term.
  auto dev_pass = [&] {
    DevScores d;
    for (const auto& g : calib) {
      CalibrationGroup cg{g.name, logits_of(g.items), {}, g.labels, {}};
      for (size_t i : g.items) cg.cosines.push_back(cosine_of[i]);
      std::vector<float> pos, neg;
      for (size_t i = 0; i < cg.logits.size(); ++i) (g.labels[i] ? pos : neg).push_back(cg.logits[i]);
      d.auc[g.name] = eval::roc_auc(pos, neg);
      d.groups.push_back(std::move(cg));
    }
    for (const auto& [k, v] : d.auc) d.network_macro += v / double(d.auc.size());
    d.macro = d.network_macro;
    if (!d.groups.empty()) {
      d.fit = fit_calibration(d.groups, o.pooled_term, o.threshold_rule);
      d.macro = d.fit->macro_auc;
    }
    return d;
  };

  std::vector<torch::Tensor> best_state;
  std::optional<DevScores> best_dev;  // the kept epoch's dev pass: its logits are the kept weights'
  auto snapshot = [&] {
    best_state.clear();
    for (const auto& p : net->parameters()) best_state.push_back(p.detach().clone());
  };
  const auto t_train = Clock::now();
  size_t since_best = 0;
  report.best_dev_macro_auc = -1;
  auto set_lr = [&](double lr) {
    for (auto& g : opt.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
  };
  for (size_t epoch = 1; epoch <= o.epochs; ++epoch) {
    const auto t_epoch = Clock::now();
    net->train();
    double loss_sum = 0;
    Progress progress(cat("f5 epoch ", epoch), o.steps_per_epoch);
    for (size_t step = 0; step < o.steps_per_epoch; ++step) {
      check_interrupt();
      set_lr(scheduled_lr(o, report.steps));
      torch::Tensor loss = torch::zeros({});
      if (!train_groups.empty()) {
        std::vector<size_t> items;
        std::vector<float> labels, weights;
        for (size_t s = 0; s < train_groups.size(); ++s)
          for (size_t k = 0; k < o.pairs_per_source; ++k) {
            const auto& g = train_groups[s];
            const size_t j = std::uniform_int_distribution<size_t>(0, g.items.size() - 1)(rng);
            items.push_back(g.items[j]);
            labels.push_back(target(g.items[j], float(g.labels[j])));
            weights.push_back(float(source_weight[s]));
          }
        auto batch = batch_of(items);
        std::bernoulli_distribution drop(o.pooled_dropout);
        for (size_t r = 0; r < items.size(); ++r)
          if (drop(rng)) {
            batch.pair[int64_t(r)].slice(0, 0, 2).zero_();
            if (batch.pooled.defined()) batch.pooled[int64_t(r)].zero_();
          }
        auto z = net->forward(batch);
        // Without weights the plain mean, so such runs reproduce earlier files exactly.
        if (o.source_weights.empty()) {
          loss = loss + torch::binary_cross_entropy_with_logits(z, torch::tensor(labels));
        } else {
          const auto w = torch::tensor(weights);
          const auto per_pair = torch::binary_cross_entropy_with_logits(z, torch::tensor(labels), {}, {},
                                                                        torch::Reduction::None);
          loss = loss + (per_pair * w).sum() / w.sum();
        }
      }
      if (!train_trip.empty() && o.triple_weight > 0) {
        std::vector<size_t> items_pos, items_neg;
        const size_t per_type = std::max<size_t>(1, o.triples_per_step / by_type.size());
        for (const auto& [type, ks] : by_type)
          for (size_t k = 0; k < per_type; ++k) {
            const auto& t = train_trip[ks[std::uniform_int_distribution<size_t>(0, ks.size() - 1)(rng)]];
            items_pos.push_back(t.pos), items_neg.push_back(t.neg);
          }
        auto zp = net->forward(batch_of(items_pos)), zn = net->forward(batch_of(items_neg));
        std::vector<float> yp, yn;  // 1 and 0 without teachers
        for (size_t i : items_pos) yp.push_back(target(i, 1.0f));
        for (size_t i : items_neg) yn.push_back(target(i, 0.0f));
        auto l = torch::softplus(zn - zp).mean() + torch::binary_cross_entropy_with_logits(zp, torch::tensor(yp)) +
                 torch::binary_cross_entropy_with_logits(zn, torch::tensor(yn));
        loss = loss + o.triple_weight * l / 3.0;
      }
      opt.zero_grad();
      loss.backward();
      opt.step();
      loss_sum += loss.item<double>();
      ++report.steps;
      progress.add(1);
    }
    progress.finish();
    auto d = dev_pass();
    AlignmentEpoch e{epoch, loss_sum / double(o.steps_per_epoch), d.macro, seconds_since(t_epoch), d.auc};
    e.dev_network_macro_auc = d.network_macro;
    std::string per;
    for (const auto& [k, v] : d.auc) per += cat(" ", k, "=", std::round(v * 1000) / 1000);
    log("f5 epoch ", epoch, ": loss ", e.train_loss, ", dev macro AUC ", d.macro, " (network alone ", d.network_macro,
        ":", per, " )");
    report.epochs.push_back(e);
    if (d.auc.empty() || d.macro > report.best_dev_macro_auc) {
      report.best_dev_macro_auc = d.macro, report.best_epoch = epoch, since_best = 0;
      snapshot();
      best_dev = std::move(d);
    } else if (o.patience && ++since_best >= o.patience) {
      log("f5: no dev gain for ", o.patience, " epochs; stopping");
      break;
    }
  }
  {
    torch::NoGradGuard no_grad;
    auto params = net->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(best_state[i]);
  }
  net->eval();
  report.train_seconds = seconds_since(t_train);

  // Calibration on dev (fit_calibration), for the weights kept: the kept
  // epoch's dev pass already holds their logits and fit.
  if (best_dev && best_dev->fit) {
    const auto& fit = *best_dev->fit;
    const auto& c = fit.calibration;
    model->set_calibration(c);
    report.fit = fit;
    report.dev = metrics_at(best_dev->groups, c);
    log("f5: calibration with pooled term ", pooled_term_name(fit.term), ", share ", fit.pooled_share, " (dev macro AUC ", fit.macro_auc,
        ", network alone ", fit.network_macro_auc, "): scale ", c.scale, ", pooled weight ", c.pooled_weight,
        ", bias ", c.bias, ", threshold ", c.threshold, " (rule ", threshold_rule_name(fit.threshold_rule),
        ", mean dev accuracy ", fit.mean_accuracy, ")");
  }
  if (!dev_trip.empty() && best_dev) {
    // Pairwise accuracy of the final (calibrated) score, from the near-miss
    // group's logits (pairs in triple order: positive, then near-miss).
    const auto& g = best_dev->groups.back();
    const auto& c = report.fit.calibration;
    std::map<std::string, std::pair<size_t, size_t>> acc;
    for (size_t k = 0; k < dev_trip.size(); ++k) {
      auto& a = acc[dev_trip[k].type];
      a.first += g.probability(c, 2 * k) > g.probability(c, 2 * k + 1);
      ++a.second;
    }
    for (const auto& [type, a] : acc) report.dev_nearmiss_by_type[type] = double(a.first) / double(a.second);
  }
  model->set_encoder(encode::encoder_identity(encoder));
  model->mark_trained(provenance);
  return model;
}

}  // namespace verity::train
