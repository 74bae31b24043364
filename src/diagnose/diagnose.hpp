#pragma once
// Hard-negative source diagnostics (docs/DIAGNOSTICS.md): per-triple lexical
// residuality and frozen-encoder statistics, gates, the log-det source score,
// agreement with observed transfer (Kendall tau-b / Spearman with bootstrap
// CIs), and matched-sample analysis on lexical residuality.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "data/triples.hpp"
#include "diagnose/embedding_cache.hpp"
#include "diagnose/lexical.hpp"
#include "diagnose/statistics.hpp"

namespace verity::diagnose {

struct DiagnoseOptions {
  double tau = 0.05;           // gate temperature
  double gamma = 1.0;          // log-det scale
  size_t mnrl_batch = 32;      // triples per in-batch MNRL batch
  double mnrl_scale = 20;      // cosine scale inside the MNRL softmax
  size_t s0_docs = 500;        // random corpus documents for s0
  uint64_t seed = 13;          // s0 sample, MNRL batch order, bootstrap, matching
  int threads = 2;             // bootstrap / matching workers; results do not depend on it
};

struct SourceInput {
  std::string name;
  std::vector<data::Triple> triples;
  size_t skipped = 0;  // invalid lines of the file(s) this source came from
  std::map<std::string, size_t> skipped_by_reason;
};

// Groups triples by their "source" field (the file's stem when empty).
// A file's skipped lines are charged to its source when the file yields
// exactly one source; otherwise to none (they stay in the file's counts).
std::vector<SourceInput> group_sources(std::span<const data::TripleFile> files);

// Aggregates over one sample of a source's triples.
struct SourceStats {
  Summary lexical_residuality, noncoverage, cos_qp, cos_qn, cos_pn, margin, rho, eta, w;
  double ambiguity_rate = 0;  // share with cos(q,n) >= cos(q,p)
  double mnrl_loss = 0;
  double eci_sem = 0;         // exact log det
  double eci_sem_linear = 0;  // gamma * mean(w)
  size_t count = 0;
};

struct SourceReport {
  std::string name;
  SourceStats stats;
  size_t skipped = 0;
  std::map<std::string, size_t> skipped_by_reason;
  size_t empty_query_terms = 0;     // T(q) empty: psi = noncoverage = 0
  size_t degenerate_directions = 0; // e_p == e_n: r_k = 0, no log-det contribution
};

// Names of the diagnostics compared with transfer, in report order.
const std::vector<std::string>& diagnostic_names();
// The value of diagnostic `name` (a mean for per-triple statistics).
double diagnostic_value(const SourceStats& s, const std::string& name);

// source -> observed transfer metric, read from "source,metric" CSV.
struct TransferTable {
  std::vector<std::string> sources;
  std::vector<double> metric;
};
TransferTable read_transfer_csv(const std::string& path);

struct Interval {
  double value = 0, low = 0, high = 0;  // point estimate and 95% percentile CI
  size_t undefined = 0;                 // replicates where the correlation was undefined
};
struct Agreement {
  std::string diagnostic;
  Interval kendall, spearman;
};
struct AgreementReport {
  std::vector<std::string> sources;  // common to diagnostics and transfer, in transfer order
  std::vector<std::string> unmatched;  // in only one of the two
  size_t bootstrap = 0;
  std::vector<Agreement> rows;
};

struct MatchedRow {
  std::string diagnostic;
  double mean_kendall = 0;       // over the defined repetitions
  double concordant_rate = 0;    // share of repetitions with tau_b = +1 (observed order recovered)
  double reversed_rate = 0;      // share with tau_b = -1 (recovered reversed)
  size_t undefined = 0;
};
struct MatchedResolution {
  size_t bins = 0;
  std::vector<double> mean_matched_count;  // per source (AgreementReport order)
  size_t empty_repetitions = 0;            // no bin had triples in every source
  std::vector<MatchedRow> rows;
};
struct MatchedReport {
  std::vector<std::string> sources;
  size_t repetitions = 0;
  std::vector<MatchedResolution> resolutions;
};

struct Timings {
  double lexical_s = 0, encode_s = 0, semantic_s = 0;
  double bootstrap_s = 0, matched_s = 0;
};

class Diagnoser {
 public:
  explicit Diagnoser(DiagnoseOptions options = {});
  ~Diagnoser();
  Diagnoser(const Diagnoser&) = delete;
  Diagnoser& operator=(const Diagnoser&) = delete;
  Diagnoser(Diagnoser&&) noexcept;
  Diagnoser& operator=(Diagnoser&&) noexcept;

  // Computes every per-triple value and each source's SourceStats. random_docs
  // are the corpus documents s0 is estimated from (a seeded sample of
  // options.s0_docs of them is used). Throws ConfigError for an empty source
  // list or an empty random_docs, FormatError naming source and line for text
  // the analyzer rejects.
  void run(std::vector<SourceInput> sources, LexicalScorer& lexical, EmbeddingCache& embeddings,
           std::span<const std::string> random_docs);

  const std::vector<SourceReport>& reports() const;
  double s0() const;
  const Timings& timings() const;

  // Needs at least two sources present in both; others are listed as unmatched.
  AgreementReport agreement(const TransferTable& transfer, size_t bootstrap) const;
  MatchedReport matched(const TransferTable& transfer, std::span<const size_t> resolutions,
                        size_t repetitions) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::diagnose
