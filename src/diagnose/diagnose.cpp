#include "diagnose/diagnose.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "diagnose/detail/kernels.hpp"
#include "diagnose/detail/parallel.hpp"
#include "diagnose/log_det.hpp"

namespace verity::diagnose {
namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

using detail::dot;  // SIMD, in double
using detail::parallel_for;

// Deterministic per-task stream: the same (seed, a, b) always gives the same
// numbers, whichever thread runs the task.
std::mt19937_64 rng_for(uint64_t seed, uint64_t a, uint64_t b = 0) {
  std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(a), uint32_t(a >> 32), uint32_t(b),
                    uint32_t(b >> 32)};
  return std::mt19937_64(seq);
}

// Sources larger than this compute MNRL similarities on the fly instead of
// from a precomputed n x n table (which makes bootstrap resamples cheap).
constexpr size_t kMaxSimilarityTable = 3000;

// Per-triple values of one source, computed once.
struct TripleValues {
  std::vector<double> psi, noncov, cos_qp, cos_qn, cos_pn, margin, rho, eta, w;
  std::vector<uint32_t> q, p, n;  // rows of the embedding matrix
  std::vector<double> r;          // unit directions (e_p - e_n)/||.||, count x dim
  std::vector<float> sim_qp, sim_qn;  // count x count, empty for big sources
  size_t count() const { return psi.size(); }
};

struct Embeddings {
  size_t dim = 0;
  std::vector<float> rows;
  const float* row(uint32_t i) const { return rows.data() + size_t(i) * dim; }
};
}  // namespace

struct Diagnoser::Impl {
  DiagnoseOptions opt;
  std::vector<SourceReport> reports;
  mutable std::vector<TripleValues> values;  // similarity tables are filled lazily
  Embeddings emb;
  double s0 = 0;
  mutable Timings timings;

  double mnrl_loss(const TripleValues& v, std::span<const uint32_t> idx) const;
  double eci_sem(const TripleValues& v, std::span<const uint32_t> idx) const;
  SourceStats stats(const TripleValues& v, std::span<const uint32_t> idx, bool full) const;
  void build_similarity_tables() const;
};

// Only resampling needs them: one MNRL pass over a source reads just its
// batch-local similarities, so the n x n tables would cost more than they save.
void Diagnoser::Impl::build_similarity_tables() const {
  const size_t d = emb.dim;
  for (auto& v : values) {
    size_t n = v.count();
    if (n > kMaxSimilarityTable || !v.sim_qp.empty()) continue;
    v.sim_qp.resize(n * n);
    v.sim_qn.resize(n * n);
    parallel_for(n, opt.threads, [&](size_t i) {
      for (size_t j = 0; j < n; ++j) {
        v.sim_qp[i * n + j] = float(dot(emb.row(v.q[i]), emb.row(v.p[j]), d));
        v.sim_qn[i * n + j] = float(dot(emb.row(v.q[i]), emb.row(v.n[j]), d));
      }
    });
  }
}

namespace {
std::string file_stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }
}  // namespace

std::vector<SourceInput> group_sources(std::span<const data::TripleFile> files) {
  std::vector<SourceInput> out;
  std::map<std::string, size_t> position;
  for (const auto& f : files) {
    std::set<std::string> names;
    for (const auto& t : f.triples) {
      std::string name = t.source.empty() ? file_stem(f.path) : t.source;
      names.insert(name);
      auto [it, inserted] = position.try_emplace(name, out.size());
      if (inserted) out.push_back(SourceInput{name, {}, 0, {}});
      out[it->second].triples.push_back(t);
    }
    if (names.size() == 1) {
      auto& s = out[position.at(*names.begin())];
      s.skipped += f.skipped;
      for (const auto& [reason, n] : f.skipped_by_reason) s.skipped_by_reason[reason] += n;
    }
  }
  return out;
}

const std::vector<std::string>& diagnostic_names() {
  static const std::vector<std::string> names = {
      "lexical_residuality", "noncoverage", "cos_qn", "cos_pn", "margin", "ambiguity_rate",
      "mnrl_loss", "rho", "eta", "w", "eci_sem", "eci_sem_linear"};
  return names;
}

double diagnostic_value(const SourceStats& s, const std::string& name) {
  if (name == "lexical_residuality") return s.lexical_residuality.mean;
  if (name == "noncoverage") return s.noncoverage.mean;
  if (name == "cos_qn") return s.cos_qn.mean;
  if (name == "cos_pn") return s.cos_pn.mean;
  if (name == "margin") return s.margin.mean;
  if (name == "ambiguity_rate") return s.ambiguity_rate;
  if (name == "mnrl_loss") return s.mnrl_loss;
  if (name == "rho") return s.rho.mean;
  if (name == "eta") return s.eta.mean;
  if (name == "w") return s.w.mean;
  if (name == "eci_sem") return s.eci_sem;
  if (name == "eci_sem_linear") return s.eci_sem_linear;
  throw ConfigError(cat("unknown diagnostic \"", name, "\""));
}

TransferTable read_transfer_csv(const std::string& path) {
  TransferTable t;
  std::set<std::string> seen;
  bool header = true;
  for_each_line(path, [&](std::string_view line, size_t line_no) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) return;
    auto comma = line.find(',');
    VERITY_CHECK(comma != std::string_view::npos && line.find(',', comma + 1) == std::string_view::npos,
                 FormatError, path, ":", line_no, ": expected two comma-separated fields \"source,metric\"");
    std::string source(line.substr(0, comma)), value(line.substr(comma + 1));
    if (header) {
      header = false;
      VERITY_CHECK(source == "source" && value == "metric", FormatError, path, ":", line_no,
                   ": expected the header \"source,metric\"");
      return;
    }
    VERITY_CHECK(!source.empty(), FormatError, path, ":", line_no, ": empty source name");
    double metric = 0;
    size_t used = 0;
    try {
      metric = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    VERITY_CHECK(used == value.size() && used > 0 && std::isfinite(metric), FormatError, path, ":",
                 line_no, ": metric \"", value, "\" is not a finite number");
    VERITY_CHECK(seen.insert(source).second, FormatError, path, ":", line_no, ": source \"", source,
                 "\" appears twice");
    t.sources.push_back(source);
    t.metric.push_back(metric);
  });
  VERITY_CHECK(!header, FormatError, path, ": empty file (expected the header \"source,metric\")");
  return t;
}

Diagnoser::Diagnoser(DiagnoseOptions options) : impl_(std::make_unique<Impl>()) {
  VERITY_CHECK(options.tau > 0, ConfigError, "--tau must be positive (got ", options.tau, ")");
  VERITY_CHECK(options.gamma > 0, ConfigError, "--gamma must be positive (got ", options.gamma, ")");
  VERITY_CHECK(options.mnrl_batch >= 1, ConfigError, "MNRL batch size must be at least 1");
  impl_->opt = options;
}
Diagnoser::~Diagnoser() = default;
Diagnoser::Diagnoser(Diagnoser&&) noexcept = default;
Diagnoser& Diagnoser::operator=(Diagnoser&&) noexcept = default;
const std::vector<SourceReport>& Diagnoser::reports() const { return impl_->reports; }
double Diagnoser::s0() const { return impl_->s0; }
const Timings& Diagnoser::timings() const { return impl_->timings; }

void Diagnoser::run(std::vector<SourceInput> sources, LexicalScorer& lexical, EmbeddingCache& cache,
                    std::span<const std::string> random_docs) {
  auto& I = *impl_;
  VERITY_CHECK(!sources.empty(), ConfigError, "no sources to diagnose");
  VERITY_CHECK(!random_docs.empty(), ConfigError, "no corpus documents to estimate s0 from");
  for (const auto& s : sources)
    VERITY_CHECK(!s.triples.empty(), ConfigError, "source \"", s.name, "\" has no valid triples");
  I.reports.clear();
  I.values.assign(sources.size(), {});

  // 1. Lexical residuality (each distinct query and negative analyzed once, in parallel).
  auto t0 = Clock::now();
  {
    std::vector<const std::string*> texts;
    for (const auto& s : sources)
      for (const auto& t : s.triples) {
        texts.push_back(&t.query);
        texts.push_back(&t.negative);
      }
    lexical.prepare(texts, I.opt.threads);
  }
  for (size_t si = 0; si < sources.size(); ++si) {
    auto& v = I.values[si];
    SourceReport rep;
    rep.name = sources[si].name;
    rep.skipped = sources[si].skipped;
    rep.skipped_by_reason = sources[si].skipped_by_reason;
    for (const auto& t : sources[si].triples) {
      LexicalScores ls;
      try {
        ls = lexical.score(t.query, t.negative);
      } catch (const FormatError& e) {
        throw FormatError(cat("source \"", rep.name, "\" line ", t.line, ": ", e.what()));
      }
      v.psi.push_back(ls.residuality);
      v.noncov.push_back(ls.noncoverage);
      rep.empty_query_terms += ls.empty_query;
    }
    I.reports.push_back(std::move(rep));
  }
  I.timings.lexical_s = seconds_since(t0);

  // 2. Embeddings of every distinct text, plus the s0 documents.
  auto t1 = Clock::now();
  std::vector<std::string> texts;
  std::unordered_map<std::string, uint32_t> row_of;
  auto row = [&](const std::string& s) {
    auto [it, inserted] = row_of.try_emplace(s, uint32_t(texts.size()));
    if (inserted) texts.push_back(s);
    return it->second;
  };
  std::vector<uint32_t> query_rows;
  std::set<uint32_t> query_set;
  for (size_t si = 0; si < sources.size(); ++si) {
    auto& v = I.values[si];
    for (const auto& t : sources[si].triples) {
      v.q.push_back(row(t.query));
      v.p.push_back(row(t.positive));
      v.n.push_back(row(t.negative));
      if (query_set.insert(v.q.back()).second) query_rows.push_back(v.q.back());
    }
  }
  std::vector<uint32_t> doc_rows;
  {
    std::vector<size_t> order(random_docs.size());
    std::iota(order.begin(), order.end(), 0);
    auto rng = rng_for(I.opt.seed, 0x5e0);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(std::min(order.size(), std::max<size_t>(1, I.opt.s0_docs)));
    for (size_t i : order) doc_rows.push_back(row(random_docs[i]));
  }
  I.emb.dim = cache.dim();
  I.emb.rows = cache.embed(texts);
  cache.save();
  I.timings.encode_s = seconds_since(t1);

  // 3. s0, per-triple cosines, gates and directions.
  auto t2 = Clock::now();
  const size_t d = I.emb.dim;
  // mean over (q, doc) of <e_q, e_doc> = <mean e_q, mean e_doc>: one pass over
  // each side instead of |Q|·|D| dot products.
  std::vector<double> mean_q(d, 0.0), mean_doc(d, 0.0);
  for (uint32_t q : query_rows)
    for (size_t i = 0; i < d; ++i) mean_q[i] += I.emb.row(q)[i];
  for (uint32_t doc : doc_rows)
    for (size_t i = 0; i < d; ++i) mean_doc[i] += I.emb.row(doc)[i];
  double s0_sum = 0;
  for (size_t i = 0; i < d; ++i) s0_sum += mean_q[i] * mean_doc[i];
  I.s0 = s0_sum / double(query_rows.size() * doc_rows.size());
  const double tau = I.opt.tau;
  // Sources are independent: one per worker (each writes only its own slots,
  // so results do not depend on the thread count).
  parallel_for(sources.size(), I.opt.threads, [&](size_t si) {
    auto& v = I.values[si];
    size_t n = v.count();
    v.r.assign(n * d, 0.0);
    for (size_t k = 0; k < n; ++k) {
      const float *eq = I.emb.row(v.q[k]), *ep = I.emb.row(v.p[k]), *en = I.emb.row(v.n[k]);
      double qp = dot(eq, ep, d), qn = dot(eq, en, d), pn = dot(ep, en, d);
      v.cos_qp.push_back(qp);
      v.cos_qn.push_back(qn);
      v.cos_pn.push_back(pn);
      v.margin.push_back(qp - qn);
      double rho = sigmoid((qp - qn) / tau), eta = sigmoid((qn - I.s0) / tau);
      v.rho.push_back(rho);
      v.eta.push_back(eta);
      v.w.push_back(rho * eta * v.psi[k]);
      double* rk = &v.r[k * d];
      double norm = 0;
      for (size_t i = 0; i < d; ++i) {
        rk[i] = double(ep[i]) - double(en[i]);
        norm += rk[i] * rk[i];
      }
      if (norm == 0) {
        ++I.reports[si].degenerate_directions;  // same text or identical embedding: r_k = 0
        continue;
      }
      double inv = 1.0 / std::sqrt(norm);
      for (size_t i = 0; i < d; ++i) rk[i] *= inv;
    }
    std::vector<uint32_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    auto rng = rng_for(I.opt.seed, 0xba7c4, si);
    std::shuffle(all.begin(), all.end(), rng);  // MNRL batches: a seeded shuffle, not file order
    I.reports[si].stats = I.stats(v, all, true);
  });
  I.timings.semantic_s = seconds_since(t2);
}

// In-batch MNRL: consecutive chunks of idx form the batches; for triple i the
// candidates are every positive and negative in its batch (logits scale*cos),
// except copies of i's own positive text at other positions.
double Diagnoser::Impl::mnrl_loss(const TripleValues& v, std::span<const uint32_t> idx) const {
  if (idx.empty()) return 0;
  const size_t n = v.count(), d = emb.dim, batch = opt.mnrl_batch;
  const bool table = !v.sim_qp.empty();
  double total = 0;
  std::vector<double> logits;
  for (size_t start = 0; start < idx.size(); start += batch) {
    size_t end = std::min(idx.size(), start + batch);
    for (size_t a = start; a < end; ++a) {
      uint32_t i = idx[a];
      logits.clear();
      double own = 0;
      for (size_t b = start; b < end; ++b) {
        uint32_t j = idx[b];
        double qp = table ? v.sim_qp[size_t(i) * n + j] : dot(emb.row(v.q[i]), emb.row(v.p[j]), d);
        double qn = table ? v.sim_qn[size_t(i) * n + j] : dot(emb.row(v.q[i]), emb.row(v.n[j]), d);
        if (b == a) {
          own = opt.mnrl_scale * qp;
          logits.push_back(own);
        } else if (v.p[j] != v.p[i]) {
          logits.push_back(opt.mnrl_scale * qp);
        }
        if (v.n[j] != v.p[i]) logits.push_back(opt.mnrl_scale * qn);
      }
      double mx = *std::max_element(logits.begin(), logits.end()), sum = 0;
      for (double l : logits) sum += std::exp(l - mx);
      total += (mx + std::log(sum)) - own;
    }
  }
  return total / double(idx.size());
}

// Exact log det over the sample; repeated triples are merged into one row of
// weight count * w so a bootstrap resample costs a factorization of its
// distinct rows only. The scale stays gamma / (sample size).
double Diagnoser::Impl::eci_sem(const TripleValues& v, std::span<const uint32_t> idx) const {
  if (idx.empty()) return 0;
  const size_t d = emb.dim;
  std::vector<uint32_t> sorted(idx.begin(), idx.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> rows, weights;
  for (size_t a = 0; a < sorted.size();) {
    size_t b = a;
    while (b < sorted.size() && sorted[b] == sorted[a]) ++b;
    double wk = v.w[sorted[a]] * double(b - a);
    if (wk > 0) {
      rows.insert(rows.end(), v.r.begin() + size_t(sorted[a]) * d, v.r.begin() + size_t(sorted[a] + 1) * d);
      weights.push_back(wk);
    }
    a = b;
  }
  return log_det_scaled(rows, weights.size(), d, weights, opt.gamma / double(idx.size()));
}

SourceStats Diagnoser::Impl::stats(const TripleValues& v, std::span<const uint32_t> idx, bool full) const {
  SourceStats s;
  s.count = idx.size();
  if (idx.empty()) return s;
  auto pick = [&](const std::vector<double>& x) {
    std::vector<double> out;
    out.reserve(idx.size());
    for (uint32_t i : idx) out.push_back(x[i]);
    return out;
  };
  auto summary = [&](const std::vector<double>& x) {
    auto sample = pick(x);
    if (full) return summarize(sample);
    Summary m;
    m.mean = mean(sample);
    return m;
  };
  s.lexical_residuality = summary(v.psi);
  s.noncoverage = summary(v.noncov);
  s.cos_qp = summary(v.cos_qp);
  s.cos_qn = summary(v.cos_qn);
  s.cos_pn = summary(v.cos_pn);
  s.margin = summary(v.margin);
  s.rho = summary(v.rho);
  s.eta = summary(v.eta);
  s.w = summary(v.w);
  size_t ambiguous = 0;
  for (uint32_t i : idx) ambiguous += v.cos_qn[i] >= v.cos_qp[i];
  s.ambiguity_rate = double(ambiguous) / double(idx.size());
  s.mnrl_loss = mnrl_loss(v, idx);
  s.eci_sem = eci_sem(v, idx);
  s.eci_sem_linear = opt.gamma * s.w.mean;
  return s;
}

namespace {
// Indices of `transfer` sources found among the reports, in transfer order.
struct Alignment {
  std::vector<size_t> report_index;
  std::vector<double> observed;
  std::vector<std::string> names, unmatched;
};
Alignment align(const std::vector<SourceReport>& reports, const TransferTable& transfer) {
  Alignment a;
  std::map<std::string, size_t> where;
  for (size_t i = 0; i < reports.size(); ++i) where[reports[i].name] = i;
  std::set<std::string> used;
  for (size_t i = 0; i < transfer.sources.size(); ++i) {
    auto it = where.find(transfer.sources[i]);
    if (it == where.end()) {
      a.unmatched.push_back(transfer.sources[i]);
      continue;
    }
    used.insert(it->first);
    a.report_index.push_back(it->second);
    a.observed.push_back(transfer.metric[i]);
    a.names.push_back(it->first);
  }
  for (const auto& r : reports)
    if (!used.count(r.name)) a.unmatched.push_back(r.name);
  VERITY_CHECK(a.report_index.size() >= 2, ConfigError, "agreement needs at least two sources present in "
               "both the triples and the transfer CSV; found ", a.report_index.size());
  return a;
}

Interval percentile_interval(double value, std::vector<double> replicates, size_t total) {
  Interval iv;
  iv.value = value;
  std::vector<double> defined;
  for (double x : replicates)
    if (std::isfinite(x)) defined.push_back(x);
  iv.undefined = total - defined.size();
  if (defined.empty()) {
    iv.low = iv.high = std::numeric_limits<double>::quiet_NaN();
    return iv;
  }
  iv.low = quantile(defined, 0.025);
  iv.high = quantile(defined, 0.975);
  return iv;
}
}  // namespace

AgreementReport Diagnoser::agreement(const TransferTable& transfer, size_t bootstrap) const {
  const auto& I = *impl_;
  auto t0 = Clock::now();
  auto a = align(I.reports, transfer);
  I.build_similarity_tables();
  const auto& names = diagnostic_names();
  const size_t m = a.report_index.size(), nd = names.size();
  AgreementReport out;
  out.sources = a.names;
  out.unmatched = a.unmatched;
  out.bootstrap = bootstrap;
  // replicate b -> diagnostic -> (tau, rho)
  std::vector<double> taus(bootstrap * nd), rhos(bootstrap * nd);
  parallel_for(bootstrap, I.opt.threads, [&](size_t b) {
    std::vector<std::vector<double>> value(nd, std::vector<double>(m));
    for (size_t s = 0; s < m; ++s) {
      const auto& v = I.values[a.report_index[s]];
      auto rng = rng_for(I.opt.seed, 0xb0075 + b, a.report_index[s]);
      std::uniform_int_distribution<uint32_t> pick(0, uint32_t(v.count() - 1));
      std::vector<uint32_t> idx(v.count());
      for (auto& i : idx) i = pick(rng);
      auto st = I.stats(v, idx, false);
      for (size_t k = 0; k < nd; ++k) value[k][s] = diagnostic_value(st, names[k]);
    }
    for (size_t k = 0; k < nd; ++k) {
      taus[b * nd + k] = kendall_tau_b(value[k], a.observed);
      rhos[b * nd + k] = spearman_rho(value[k], a.observed);
    }
  });
  for (size_t k = 0; k < nd; ++k) {
    std::vector<double> point(m), tk(bootstrap), rk(bootstrap);
    for (size_t s = 0; s < m; ++s) point[s] = diagnostic_value(I.reports[a.report_index[s]].stats, names[k]);
    for (size_t b = 0; b < bootstrap; ++b) {
      tk[b] = taus[b * nd + k];
      rk[b] = rhos[b * nd + k];
    }
    out.rows.push_back({names[k], percentile_interval(kendall_tau_b(point, a.observed), tk, bootstrap),
                        percentile_interval(spearman_rho(point, a.observed), rk, bootstrap)});
  }
  I.timings.bootstrap_s = seconds_since(t0);
  return out;
}

MatchedReport Diagnoser::matched(const TransferTable& transfer, std::span<const size_t> resolutions,
                                 size_t repetitions) const {
  const auto& I = *impl_;
  auto t0 = Clock::now();
  auto a = align(I.reports, transfer);
  I.build_similarity_tables();
  const size_t m = a.report_index.size();
  std::vector<std::string> names;  // psi is matched by construction: only the others
  for (const auto& n : diagnostic_names())
    if (n != "lexical_residuality" && n != "noncoverage") names.push_back(n);
  const size_t nd = names.size();
  MatchedReport out;
  out.sources = a.names;
  out.repetitions = repetitions;
  for (size_t bins : resolutions) {
    VERITY_CHECK(bins >= 1, ConfigError, "matched-sample bins must be at least 1");
    // source -> bin -> triple indices
    std::vector<std::vector<std::vector<uint32_t>>> by_bin(m, std::vector<std::vector<uint32_t>>(bins));
    for (size_t s = 0; s < m; ++s) {
      const auto& v = I.values[a.report_index[s]];
      for (uint32_t k = 0; k < v.count(); ++k) {
        size_t bin = std::min(bins - 1, size_t(std::floor(std::clamp(v.psi[k], 0.0, 1.0) * double(bins))));
        by_bin[s][bin].push_back(k);
      }
    }
    std::vector<size_t> take(bins, std::numeric_limits<size_t>::max());
    for (size_t bin = 0; bin < bins; ++bin)
      for (size_t s = 0; s < m; ++s) take[bin] = std::min(take[bin], by_bin[s][bin].size());
    size_t matched_count = std::accumulate(take.begin(), take.end(), size_t(0));
    MatchedResolution res;
    res.bins = bins;
    res.mean_matched_count.assign(m, double(matched_count));  // same count from every source
    std::vector<double> taus(repetitions * nd, std::numeric_limits<double>::quiet_NaN());
    if (matched_count == 0) {
      res.empty_repetitions = repetitions;
    } else {
      parallel_for(repetitions, I.opt.threads, [&](size_t rep) {
        std::vector<std::vector<double>> value(nd, std::vector<double>(m));
        for (size_t s = 0; s < m; ++s) {
          auto rng = rng_for(I.opt.seed, 0x3a7c0000 + bins, rep * 1000 + s);
          std::vector<uint32_t> idx;
          for (size_t bin = 0; bin < bins; ++bin) {
            auto pool = by_bin[s][bin];
            for (size_t k = 0; k < take[bin]; ++k) {  // partial Fisher-Yates: sample without replacement
              std::uniform_int_distribution<size_t> pick(k, pool.size() - 1);
              std::swap(pool[k], pool[pick(rng)]);
              idx.push_back(pool[k]);
            }
          }
          std::shuffle(idx.begin(), idx.end(), rng);  // MNRL batches mix bins
          auto st = I.stats(I.values[a.report_index[s]], idx, false);
          for (size_t k = 0; k < nd; ++k) value[k][s] = diagnostic_value(st, names[k]);
        }
        for (size_t k = 0; k < nd; ++k) taus[rep * nd + k] = kendall_tau_b(value[k], a.observed);
      });
    }
    for (size_t k = 0; k < nd; ++k) {
      MatchedRow row;
      row.diagnostic = names[k];
      size_t defined = 0, concordant = 0, reversed = 0;
      double sum = 0;
      for (size_t rep = 0; rep < repetitions; ++rep) {
        double t = taus[rep * nd + k];
        if (!std::isfinite(t)) continue;
        ++defined;
        sum += t;
        concordant += t > 1 - 1e-12;
        reversed += t < -1 + 1e-12;
      }
      row.undefined = repetitions - defined;
      row.mean_kendall = defined ? sum / double(defined) : std::numeric_limits<double>::quiet_NaN();
      row.concordant_rate = repetitions ? double(concordant) / double(repetitions) : 0;
      row.reversed_rate = repetitions ? double(reversed) / double(repetitions) : 0;
      res.rows.push_back(row);
    }
    out.resolutions.push_back(std::move(res));
  }
  I.timings.matched_s = seconds_since(t0);
  return out;
}

}  // namespace verity::diagnose
