// Throughput of `verity diagnose` excluding encoding (issue 7 target: at least
// 10,000 triples/s). Synthetic sources with SciFact-like shapes: ~10-word
// queries, ~200-word documents as positives and negatives, a hashed random
// "encoder" (dim 512, like use-lite) whose cost is excluded, exactly as the
// command excludes encoding. Each repeat builds a fresh LexicalScorer, so the
// first analysis of every text is part of the measured time.
// Prints one JSON object on stdout.
//
//   verity_bench_diagnose [--sources 3] [--triples 1000] [--dim 512] [--docs
//   3000]
//       [--doc-words 200] [--query-words 10] [--repeat 3] [--threads 2]
//       [--bootstrap 0]
#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "diagnose/diagnose.hpp"

using namespace verity;
using json = nlohmann::json;

namespace {

// Gaussian vector seeded by the text's hash: deterministic, no model needed.
class RandomEncoder : public encode::Encoder {
 public:
  explicit RandomEncoder(size_t dim) : dim_(dim) {}
  std::string spec() const override { return "bench-random"; }
  size_t dim() const override { return dim_; }
  encode::Encoded encode(std::span<const std::string> texts, const encode::EncodeOptions &) const override {
    encode::Encoded e;
    e.batch = texts.size();
    e.dim = dim_;
    e.pooled.resize(e.batch * dim_);
    for (size_t b = 0; b < texts.size(); ++b) {
      std::mt19937_64 rng(fnv1a64(texts[b].data(), texts[b].size()));
      std::normal_distribution<float> g;
      float *row = &e.pooled[b * dim_];
      double norm = 0;
      for (size_t i = 0; i < dim_; ++i) norm += double(row[i] = g(rng)) * row[i];
      for (size_t i = 0; i < dim_; ++i) row[i] = float(row[i] / std::sqrt(norm));
    }
    return e;
  }

 private:
  size_t dim_;
};

// Pronounceable letter-only words (the analyzer stems and filters them like
// prose).
std::vector<std::string> make_vocabulary(size_t n, std::mt19937_64 &rng) {
  static const char *onset[] = {"b", "c", "d", "f", "g", "l",  "m",  "n",
                                "p", "r", "s", "t", "v", "tr", "st", "pl"};
  static const char *vowel[] = {"a", "e", "i", "o", "u", "ai", "ou"};
  std::uniform_int_distribution<size_t> o(0, 15), v(0, 6), syl(2, 4);
  std::vector<std::string> words;
  for (size_t i = 0; i < n; ++i) {
    std::string w;
    for (size_t s = syl(rng); s > 0; --s) w += std::string(onset[o(rng)]) + vowel[v(rng)];
    words.push_back(w);
  }
  return words;
}

// Zipf-like word choice so idf varies as in real text.
std::string make_text(size_t words, const std::vector<std::string> &vocab, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::string out;
  for (size_t i = 0; i < words; ++i) {
    size_t k = std::min(vocab.size() - 1, size_t(std::pow(double(vocab.size()), u(rng))) - 1);
    if (!out.empty()) out += ' ';
    out += vocab[k];
  }
  return out + ".";
}

}  // namespace

int main(int argc, char **argv) {
  try {
    size_t n_sources = 3, n_triples = 1000, dim = 512, n_docs = 3000, doc_words = 200, query_words = 10;
    size_t bootstrap = 0;
    bool share = true;
    int repeat = 3, threads = 2;
    for (int i = 1; i < argc; ++i) {
      std::string s = argv[i];
      auto value = [&]() -> std::string {
        VERITY_CHECK(i + 1 < argc, ConfigError, s, " needs a value");
        return argv[++i];
      };
      if (s == "--sources")
        n_sources = std::stoul(value());
      else if (s == "--triples")
        n_triples = std::stoul(value());
      else if (s == "--dim")
        dim = std::stoul(value());
      else if (s == "--docs")
        n_docs = std::stoul(value());
      else if (s == "--doc-words")
        doc_words = std::stoul(value());
      else if (s == "--query-words")
        query_words = std::stoul(value());
      else if (s == "--repeat")
        repeat = std::stoi(value());
      else if (s == "--threads")
        threads = std::stoi(value());
      else if (s == "--no-share")
        share = false;
      else if (s == "--bootstrap")
        bootstrap = std::stoul(value());
      else
        throw ConfigError(cat("unknown argument '", s, "'"));
    }
    VERITY_CHECK(n_sources >= 1 && n_triples >= 1 && dim >= 1 && n_docs >= 2 && repeat >= 1, ConfigError,
                 "sizes must be positive");
    std::mt19937_64 rng(7);
    auto vocab = make_vocabulary(20000, rng);
    std::vector<std::string> corpus;
    for (size_t i = 0; i < n_docs; ++i) corpus.push_back(make_text(doc_words, vocab, rng));
    // One query per ~1.1 triples (SciFact train: 919 pairs over 809 queries).
    std::vector<diagnose::SourceInput> sources;
    std::uniform_int_distribution<size_t> doc(0, n_docs - 1);
    for (size_t s = 0; s < n_sources; ++s) {
      diagnose::SourceInput src;
      src.name = cat("source", s);
      std::string query;
      for (size_t t = 0; t < n_triples; ++t) {
        if (t % 10 != 9) query = make_text(query_words, vocab, rng);
        data::Triple tr;
        tr.query = query;
        tr.positive = corpus[doc(rng)];
        tr.negative = corpus[doc(rng)];
        src.triples.push_back(std::move(tr));
      }
      sources.push_back(std::move(src));
    }
    text::Analyzer analyzer;
    // The IDF pass (once per corpus, not per triple): analyzes every document on
    // `threads` workers and keeps their term sets for negatives that are corpus
    // documents, as `verity diagnose` does.
    std::vector<std::vector<std::string>> doc_terms;
    double idf0 = bench::process_cpu_seconds();
    auto idf_t0 = bench::Clock::now();
    auto idf = diagnose::IdfTable::build(corpus, analyzer, threads, &doc_terms);
    double idf_wall = std::chrono::duration<double>(bench::Clock::now() - idf_t0).count();
    double idf_cpu = bench::process_cpu_seconds() - idf0;
    RandomEncoder encoder(dim);
    diagnose::EmbeddingCache cache(encoder, "");
    diagnose::DiagnoseOptions opt;
    opt.threads = threads;

    std::vector<double> lexical_s, semantic_s, encode_s, bootstrap_s, rate, cpu_rate;
    double eci = 0;
    for (int r = 0; r < repeat + 1; ++r) {  // run 0 fills the embedding cache (untimed)
      diagnose::Diagnoser d(opt);
      diagnose::LexicalScorer lexical(idf, analyzer);
      if (share) lexical.add_known_texts(corpus, doc_terms);
      double cpu0 = bench::process_cpu_seconds();
      d.run(sources, lexical, cache, corpus);
      double cpu_s = bench::process_cpu_seconds() - cpu0;  // includes the (cached) embedding lookups
      if (bootstrap > 0) {
        diagnose::TransferTable transfer;
        for (size_t s = 0; s < n_sources; ++s) {
          transfer.sources.push_back(cat("source", s));
          transfer.metric.push_back(double(s));
        }
        d.agreement(transfer, bootstrap);
      }
      if (r == 0) continue;
      const auto &t = d.timings();
      lexical_s.push_back(t.lexical_s);
      semantic_s.push_back(t.semantic_s);
      encode_s.push_back(t.encode_s);
      bootstrap_s.push_back(t.bootstrap_s);
      rate.push_back(double(n_sources * n_triples) / (t.lexical_s + t.semantic_s));
      cpu_rate.push_back(double(n_sources * n_triples) / cpu_s);
      eci = d.reports()[0].stats.eci_sem;
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    json out = bench::provenance(argc, argv, VERITY_BUILD_TYPE);
    out["loadavg"] = bench::loadavg();
    out["config"] = {
        {"sources", n_sources},   {"triples_per_source", n_triples}, {"dim", dim},       {"docs", n_docs},
        {"doc_words", doc_words}, {"query_words", query_words},      {"repeat", repeat}, {"threads", threads},
        {"bootstrap", bootstrap}};
    out["idf_pass_s"] = idf_wall;
    out["idf_pass_cpu_s"] = idf_cpu;
    out["share_corpus_analysis"] = share;
    out["lexical_s"] = lexical_s;
    out["semantic_s"] = semantic_s;
    out["lookup_s"] = encode_s;  // cache lookups only (every text cached by run 0)
    out["triples_per_s_excluding_encoding"] = rate;
    out["median_triples_per_s_excluding_encoding"] = median(rate);
    // Per CPU-second of the whole run() (all threads): less sensitive to other
    // processes on a shared machine than the wall-clock rate.
    out["triples_per_cpu_s"] = cpu_rate;
    out["median_triples_per_cpu_s"] = median(cpu_rate);
    out["target_triples_per_s"] = 10000;
    out["target_met"] = median(rate) >= 10000;
    if (bootstrap > 0) out["bootstrap_s_per_replicate"] = median(bootstrap_s) / double(bootstrap);
    out["eci_sem_source0"] = eci;  // checksum: optimizations must not change it
    std::cout << out.dump(2) << std::endl;
    return 0;
  } catch (const std::exception &e) {
    std::cerr << "verity_bench_diagnose: " << e.what() << "\n";
    return 1;
  }
}
