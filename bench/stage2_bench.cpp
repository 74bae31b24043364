// Stage-2 cost on a real token store: for each simulated query (the first
// --query-tokens token vectors of a random document) and --k random candidate
// documents, time the parts of verification separately: decoding the stored
// vectors, building the similarity maps, and scoring them with each verifier.
// Verifiers that read token identities (F5) get the store's, as the pipeline
// passes them. Prints one JSON object on stdout; timings are medians over --queries.
//
//   verity_bench_stage2 TOKENS.vtok [--k 100] [--queries 200] [--query-tokens 16]
//                       [--threads 1] [--verifiers f1,f3,f4,default]
#include <torch/torch.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "core/error.hpp"
#include "index/token_store.hpp"
#include "search/stored_rows.hpp"
#include "verify/alignment_verifier.hpp"
#include "verify/bf16_maps.hpp"
#include "verify/detail/alignment_modules.hpp"
#include "verify/learned.hpp"
#include "verify/similarity_map.hpp"
#include "verify/verifier.hpp"

using namespace verity;
using json = nlohmann::json;

namespace {

struct Args {
  std::string store;
  size_t k = 100, queries = 200, query_tokens = 16;
  int threads = 1;
  std::vector<std::string> verifiers = {"f0", "f1", "f2", "f3", "f4"};
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> std::string {
      VERITY_CHECK(i + 1 < argc, ConfigError, s, " needs a value");
      return argv[++i];
    };
    if (s == "--k") a.k = std::stoul(value());
    else if (s == "--queries") a.queries = std::stoul(value());
    else if (s == "--query-tokens") a.query_tokens = std::stoul(value());
    else if (s == "--threads") a.threads = std::stoi(value());
    else if (s == "--verifiers") a.verifiers = bench::split_commas(value());
    else if (a.store.empty() && s.rfind("--", 0) != 0) a.store = s;
    else throw ConfigError(cat("unknown argument '", s, "'"));
  }
  VERITY_CHECK(!a.store.empty(), ConfigError, "usage: verity_bench_stage2 TOKENS.vtok [--k N] ...");
  return a;
}

double ms(bench::Clock::time_point a, bench::Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

json summary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto q = [&](double p) { return v[std::min(v.size() - 1, size_t(p * double(v.size())))]; };
  return {{"p50_ms", q(0.5)}, {"p95_ms", q(0.95)}};
}

std::unique_ptr<verify::Verifier> make_for_speed(const std::string& name) {
  // Untrained weights cost the same to run as trained ones.
  if (name == "f3") return verify::LearnedVerifier::untrained_cnn({}, 1);
  if (name == "f4") return verify::LearnedVerifier::untrained_vit({}, 1);
  return verify::make_verifier(name);
}

}  // namespace

int main(int argc, char** argv) {
  bench::reexec_with_passive_omp_wait(argv);
  try {
    Args a = parse_args(argc, argv);
    torch::set_num_threads(a.threads);
    index::TokenStore store(a.store);
    const size_t dim = store.dim();
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<size_t> pick(0, store.num_documents() - 1);

    json out = bench::provenance(argc, argv, VERITY_BUILD_TYPE);
    out["benchmark"] = "stage2";
    out["loadavg_start"] = bench::loadavg();
    out["store"] = {{"path", a.store}, {"precision", index::to_string(store.precision())},
                    {"documents", store.num_documents()}, {"tokens", store.num_tokens()}, {"dim", dim}};
    out["k"] = a.k;
    out["threads"] = a.threads;

    std::vector<double> t_decode, t_maps, t_total_f1, t_streamed, t_streamed_f1, t_bf16, t_bf16_f1, t_bf16_dots;
    const bool bf16 = verify::bf16_maps_supported();
    const auto products = bf16 ? verify::best_bf16_products() : verify::Bf16Products::avx512;
    std::map<std::string, std::vector<double>> t_score, t_f5_features, t_f5_network;
    std::map<std::string, std::unique_ptr<verify::Verifier>> verifiers;
    for (const auto& v : a.verifiers) verifiers[v] = make_for_speed(v);
    size_t candidate_tokens = 0;
    for (size_t qi = 0; qi < a.queries; ++qi) {
      const uint64_t qid = pick(rng);
      auto qdoc = store.get(qid);
      size_t nq = std::min(a.query_tokens, qdoc.size() / dim);
      qdoc.resize(nq * dim);
      std::vector<uint64_t> docs(a.k);
      for (auto& d : docs) d = pick(rng);
      // Token identities, as the pipeline passes them, where the store has them:
      // F5's lexicon lookups run only on known identities.
      std::vector<verify::PairContext> context(docs.size());
      if (store.has_ids()) {
        const auto query_ids = store.ids(qid).first(nq);
        for (size_t c = 0; c < docs.size(); ++c) context[c].query_ids = query_ids, context[c].candidate_ids = store.ids(docs[c]);
      }

      auto t0 = bench::Clock::now();
      std::vector<size_t> counts;
      size_t total = 0;
      for (auto d : docs) total += counts.emplace_back(store.num_tokens(d));
      std::vector<float> block(total * dim);
      for (size_t i = 0, off = 0; i < docs.size(); off += counts[i], ++i)
        store.decode(docs[i], std::span(block).subspan(off * dim, counts[i] * dim));
      auto t1 = bench::Clock::now();
      auto maps = verify::SimilarityMap::compute_many(qdoc, block, counts, dim);
      auto t2 = bench::Clock::now();
      t_decode.push_back(ms(t0, t1));
      t_maps.push_back(ms(t1, t2));
      // What the pipeline does: one candidate decoded at a time into a cached buffer.
      auto s0 = bench::Clock::now();
      auto streamed = verify::SimilarityMap::compute_streamed(
          qdoc, docs.size(), dim, [&](size_t c, std::vector<float>& rows) {
            size_t n = store.num_tokens(docs[c]);
            rows.resize(n * dim);
            store.decode(docs[c], rows);
            return n;
          });
      auto s1 = bench::Clock::now();
      t_streamed.push_back(ms(s0, s1));
      if (verifiers.count("f1")) {
        verifiers["f1"]->score_batch(streamed);
        t_streamed_f1.push_back(ms(s0, bench::Clock::now()));
      }
      // The pipeline's default where the CPU has AVX512-BF16: products read
      // straight from the stored codes.
      if (bf16) {
        auto b0 = bench::Clock::now();
        auto maps_bf16 = verify::similarity_maps_bf16(
            qdoc, docs.size(), dim, [&](size_t c) { return search::stored_rows(store, docs[c]); });
        auto b1 = bench::Clock::now();
        t_bf16.push_back(ms(b0, b1));
        if (verifiers.count("f1")) {
          verifiers["f1"]->score_batch(maps_bf16);
          t_bf16_f1.push_back(ms(b0, bench::Clock::now()));
        }
        // On AMX tiles, the AVX512-BF16 dot products beside them.
        if (products == verify::Bf16Products::amx) {
          auto d0 = bench::Clock::now();
          verify::similarity_maps_bf16(qdoc, docs.size(), dim,
                                       [&](size_t c) { return search::stored_rows(store, docs[c]); },
                                       verify::Bf16Products::avx512);
          t_bf16_dots.push_back(ms(d0, bench::Clock::now()));
        }
      }
      candidate_tokens += total;
      for (auto& [name, v] : verifiers) {
        if (name == "f4" && qi % 10 != 0) continue;  // the slow one: every 10th query
        auto s0 = bench::Clock::now();
        auto scores = v->uses_context() ? v->score_pairs(maps, context) : v->score_batch(maps);
        auto s1 = bench::Clock::now();
        t_score[name].push_back(ms(s0, s1));
        if (name == "f1") t_total_f1.push_back(ms(t0, s1));
        // F5's two parts: the per-token features (plain C++) and the network.
        if (const auto* f5 = dynamic_cast<const verify::AlignmentVerifier*>(v.get())) {
          std::vector<verify::AlignmentFeatures> features;
          auto f0 = bench::Clock::now();
          for (size_t c = 0; c < maps.size(); ++c)
            if (!maps[c].empty())
              features.push_back(verify::alignment_features(maps[c], context[c], f5->impl().tokens, f5->lexicon()));
          auto f1 = bench::Clock::now();
          t_f5_features[name].push_back(ms(f0, f1));
          const auto net = f5->impl().inference_net();
          for (const auto& f : features) net->logit(f);
          t_f5_network[name].push_back(ms(f1, bench::Clock::now()));
        }
      }
    }
    out["identities"] = store.has_ids();
    out["mean_candidate_tokens"] = double(candidate_tokens) / double(a.queries * a.k);
    out["decode"] = summary(t_decode);
    out["maps"] = summary(t_maps);
    json scoring;
    for (auto& [name, v] : t_score) {
      auto s = summary(v);
      s["pairs_per_s"] = double(a.k) / (s["p50_ms"].get<double>() / 1000.0);
      if (t_f5_features.count(name)) s["features"] = summary(t_f5_features[name]);
      if (t_f5_network.count(name)) s["network"] = summary(t_f5_network[name]);
      scoring[name] = s;
    }
    out["score"] = scoring;
    if (!t_total_f1.empty()) out["f1_rerank_total_batched"] = summary(t_total_f1);
    out["maps_streamed"] = summary(t_streamed);
    if (!t_streamed_f1.empty()) out["f1_rerank_total"] = summary(t_streamed_f1);
    out["bf16_supported"] = bf16;
    if (bf16) out["bf16_products"] = std::string(verify::bf16_products_name(products));
    if (!t_bf16.empty()) out["maps_bf16"] = summary(t_bf16);
    if (!t_bf16_dots.empty()) out["maps_bf16_avx512_dots"] = summary(t_bf16_dots);
    if (!t_bf16_f1.empty()) out["f1_rerank_total_bf16"] = summary(t_bf16_f1);
    out["loadavg_end"] = bench::loadavg();
    std::cout << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "verity_bench_stage2: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
