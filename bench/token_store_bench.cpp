// Token-store precision report on real token vectors: encodes --docs documents
// of a BEIR corpus, stores them as fp32, fp16 and int8, and reports bytes per
// document and per token vector, the reconstruction error of the vectors, and
// what that error does to stage 2: the largest change of a similarity-map cell
// and of the F1 (MaxSim) score over query/document pairs.
// Prints one JSON object on stdout.
//
//   verity_bench_tokens DATASET_DIR [--encoder use-lite] [--docs 300] [--queries 50]
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "core/error.hpp"
#include "data/beir.hpp"
#include "encode/registry.hpp"
#include "index/token_store.hpp"
#include "verify/similarity_map.hpp"
#include "verify/verifier.hpp"

using namespace verity;
using json = nlohmann::json;

int main(int argc, char** argv) {
  bench::reexec_with_passive_omp_wait(argv);
  try {
    std::string dataset, encoder = "use-lite";
    size_t n_docs = 300, n_queries = 50;
    for (int i = 1; i < argc; ++i) {
      std::string s = argv[i];
      auto value = [&]() -> std::string {
        VERITY_CHECK(i + 1 < argc, ConfigError, s, " needs a value");
        return argv[++i];
      };
      if (s == "--encoder") encoder = value();
      else if (s == "--docs") n_docs = std::stoul(value());
      else if (s == "--queries") n_queries = std::stoul(value());
      else if (dataset.empty() && s.rfind("--", 0) != 0) dataset = s;
      else throw ConfigError(cat("unknown argument '", s, "'"));
    }
    VERITY_CHECK(!dataset.empty(), ConfigError, "usage: verity_bench_tokens DATASET_DIR [options]");
    torch::set_num_threads(2);
    auto ds = data::load_beir(dataset, "test");
    auto enc = encode::make_encoder(encoder);
    std::vector<std::string> docs, queries;
    for (size_t i = 0; i < std::min(n_docs, ds.corpus.size()); ++i) docs.push_back(ds.corpus.indexed_text(i));
    for (size_t i = 0; i < std::min(n_queries, ds.queries.size()); ++i) queries.push_back(ds.queries[i].text);
    encode::EncodeOptions eo;
    auto d = enc->encode(docs, eo);
    auto q = enc->encode(queries, eo);
    std::vector<std::vector<float>> doc_rows, query_rows;
    for (size_t b = 0; b < docs.size(); ++b) doc_rows.push_back(d.token_block(b));
    for (size_t b = 0; b < queries.size(); ++b) query_rows.push_back(q.token_block(b));
    const size_t dim = d.dim;
    auto f1 = verify::make_verifier("f1");

    json out = bench::provenance(argc, argv, VERITY_BUILD_TYPE);
    out["benchmark"] = "token_store";
    out["encoder"] = enc->spec();
    out["docs"] = docs.size();
    out["queries"] = queries.size();
    auto tmp = std::filesystem::temp_directory_path();
    // fp32 maps and F1 scores are the reference.
    std::vector<std::vector<float>> ref_f1(queries.size());
    for (size_t qi = 0; qi < queries.size(); ++qi)
      for (size_t di = 0; di < docs.size(); ++di)
        ref_f1[qi].push_back(f1->score(verify::SimilarityMap::compute(query_rows[qi], doc_rows[di], dim)));
    for (auto precision : {index::TokenPrecision::fp32, index::TokenPrecision::fp16, index::TokenPrecision::int8}) {
      index::TokenStoreBuilder builder(dim, precision);
      for (const auto& r : doc_rows) builder.add_document(r);
      auto path = (tmp / cat("verity_bench_tokens_", index::to_string(precision), ".vtok")).string();
      builder.save(path);
      index::TokenStore store(path);
      double max_abs = 0, sum_rel = 0, max_cell = 0, max_f1 = 0, sum_f1 = 0;
      size_t vectors = 0, pairs = 0;
      for (size_t di = 0; di < docs.size(); ++di) {
        auto got = store.get(di);
        const auto& want = doc_rows[di];
        for (size_t t = 0; t < want.size() / dim; ++t) {
          double err2 = 0, norm2 = 0;
          for (size_t c = 0; c < dim; ++c) {
            double e = double(got[t * dim + c]) - want[t * dim + c];
            max_abs = std::max(max_abs, std::abs(e));
            err2 += e * e;
            norm2 += double(want[t * dim + c]) * want[t * dim + c];
          }
          if (norm2 > 0) sum_rel += std::sqrt(err2 / norm2), ++vectors;
        }
        for (size_t qi = 0; qi < queries.size(); ++qi) {
          auto m_ref = verify::SimilarityMap::compute(query_rows[qi], want, dim);
          auto m = verify::SimilarityMap::compute(query_rows[qi], got, dim);
          for (size_t i = 0; i < m.values().size(); ++i)
            max_cell = std::max(max_cell, double(std::abs(m.values()[i] - m_ref.values()[i])));
          double e = std::abs(double(f1->score(m)) - ref_f1[qi][di]);
          max_f1 = std::max(max_f1, e);
          sum_f1 += e;
          ++pairs;
        }
      }
      size_t bytes = std::filesystem::file_size(path);
      out[std::string(index::to_string(precision))] = {
          {"file_bytes", bytes},
          {"bytes_per_doc", double(bytes) / double(docs.size())},
          {"bytes_per_token_vector", index::bytes_per_token_vector(precision, dim)},
          {"tokens_per_doc", double(store.num_tokens()) / double(docs.size())},
          {"max_abs_error", max_abs},
          {"mean_relative_l2_error", vectors ? sum_rel / double(vectors) : 0.0},
          {"max_map_cell_error", max_cell},
          {"max_f1_error", max_f1},
          {"mean_f1_error", pairs ? sum_f1 / double(pairs) : 0.0}};
      std::filesystem::remove(path);
    }
    std::cout << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "verity_bench_tokens: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
