// HNSW against exact flat search on real embeddings: for each (M, efConstruction)
// the build time, the file size, and for each efSearch the recall@10 against
// flat and the single-query latency. The corpus vectors come from a flat index
// file (e.g. the one `verity eval --retriever dense` caches); the queries are a
// BEIR dataset's queries encoded with the same encoder.
// Prints one JSON object on stdout.
//
//   verity_bench_dense FLAT.vdns DATASET_DIR [--encoder use-lite] [--split test]
//                      [--M 16,32] [--efc 200] [--ef 20,50,100,200] [--threads 2]
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "core/error.hpp"
#include "data/beir.hpp"
#include "encode/registry.hpp"
#include "index/dense_flat.hpp"
#include "index/dense_hnsw.hpp"
#include "index/dense_index.hpp"

using namespace verity;
using json = nlohmann::json;

namespace {

std::vector<size_t> parse_list(const std::string& s) {
  std::vector<size_t> out;
  for (const auto& item : bench::split_commas(s)) out.push_back(std::stoul(item));
  return out;
}

double ms_since(bench::Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(bench::Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  bench::reexec_with_passive_omp_wait(argv);
  try {
    std::vector<std::string> pos;
    std::string encoder = "use-lite", split = "test";
    std::vector<size_t> Ms = {16, 32}, efcs = {200}, efs = {20, 50, 100, 200};
    size_t threads = 2;
    for (int i = 1; i < argc; ++i) {
      std::string s = argv[i];
      auto value = [&]() -> std::string {
        VERITY_CHECK(i + 1 < argc, ConfigError, s, " needs a value");
        return argv[++i];
      };
      if (s == "--encoder") encoder = value();
      else if (s == "--split") split = value();
      else if (s == "--M") Ms = parse_list(value());
      else if (s == "--efc") efcs = parse_list(value());
      else if (s == "--ef") efs = parse_list(value());
      else if (s == "--threads") threads = std::stoul(value());
      else if (s.rfind("--", 0) != 0) pos.push_back(s);
      else throw ConfigError(cat("unknown argument '", s, "'"));
    }
    VERITY_CHECK(pos.size() == 2, ConfigError, "usage: verity_bench_dense FLAT.vdns DATASET_DIR [options]");
    torch::set_num_threads(int(threads));
    auto loaded = index::load_dense_index(pos[0]);
    auto* flat = dynamic_cast<index::FlatIndex*>(loaded.get());
    VERITY_CHECK(flat != nullptr, ConfigError, pos[0], " is a '", loaded->spec(), "' index, not flat");
    const size_t dim = flat->dim();

    auto ds = data::load_beir(pos[1], split);
    std::vector<std::string> texts;
    for (const auto& q : ds.queries) texts.push_back(q.text);
    auto enc = encode::make_encoder(encoder);
    encode::EncodeOptions eo;
    eo.with_tokens = false;
    auto encoded = enc->encode(texts, eo);
    VERITY_CHECK(encoded.dim == dim, ConfigError, "encoder dim ", encoded.dim, " != index dim ", dim);
    const size_t nq = texts.size(), k = 10;

    json out = bench::provenance(argc, argv, VERITY_BUILD_TYPE);
    out["benchmark"] = "dense";
    out["loadavg_start"] = bench::loadavg();
    out["corpus_vectors"] = flat->size();
    out["dim"] = dim;
    out["queries"] = nq;
    out["threads_build"] = threads;

    auto single_query_p50 = [&](const index::DenseIndex& idx) {
      std::vector<double> t;
      for (size_t q = 0; q < nq; ++q) {
        auto t0 = bench::Clock::now();
        idx.search(std::span(encoded.pooled).subspan(q * dim, dim), k);
        t.push_back(ms_since(t0));
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    out["flat"] = {{"query_ms_p50", single_query_p50(*flat)},
                   {"bytes", std::filesystem::file_size(pos[0])}};
    auto tmp = std::filesystem::temp_directory_path() / "verity_bench_dense.vdns";
    json configs = json::array();
    for (size_t M : Ms)
      for (size_t efc : efcs) {
        auto t0 = bench::Clock::now();
        auto hnsw = index::make_dense_index(cat("hnsw:M=", M, ",efc=", efc, ",ef=", efs.front(), ",threads=", threads), dim);
        hnsw->add(flat->vectors(), flat->ids());
        double build_s = ms_since(t0) / 1000.0;
        hnsw->save(tmp.string());
        json c = {{"M", M}, {"efc", efc}, {"build_s", build_s}, {"bytes", std::filesystem::file_size(tmp)}};
        auto* graph = dynamic_cast<index::HnswIndex*>(hnsw.get());
        json per_ef = json::array();
        for (size_t ef : efs) {
          graph->set_ef_search(ef);
          double recall = index::recall_at_k(*graph, *flat, encoded.pooled, k);
          per_ef.push_back({{"ef", ef}, {"recall@10", recall}, {"query_ms_p50", single_query_p50(*graph)}});
        }
        c["per_ef"] = per_ef;
        configs.push_back(c);
      }
    out["hnsw"] = configs;
    std::filesystem::remove(tmp);
    out["loadavg_end"] = bench::loadavg();
    std::cout << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "verity_bench_dense: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
