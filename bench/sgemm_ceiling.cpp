// The machine's float32 matmul ceiling through the BLAS libtorch uses:
// torch::mm on large square matrices (the "ceiling"), and torch::addmm in the
// exact shapes of the MiniLM-shaped BERT's Linear layers at 32x128 and 64x32
// tokens (what the encoder can hope for at best). Prints one JSON object.
//
//   verity_bench_sgemm [--threads 2] [--warmup 2] [--repeat 5]
//                      [--sizes 1024,2048,4096]
#include <torch/torch.h>

#include <ATen/Parallel.h>

#include <iostream>

#include "bench_env.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

using namespace verity;
using json = nlohmann::json;

namespace {

struct Args {
  int threads = 2, warmup = 2, repeat = 5;
  std::vector<int64_t> sizes = {1024, 2048, 4096};
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> std::string {
      VERITY_CHECK(i + 1 < argc, ConfigError, "option ", s, " needs a value");
      return argv[++i];
    };
    auto positive = [&](const std::string& v) {
      long long n = 0;
      char tail = 0;
      VERITY_CHECK(std::sscanf(v.c_str(), "%lld%c", &n, &tail) == 1 && n > 0, ConfigError, "option ",
                   s, " needs positive integers, got '", v, "'");
      return n;
    };
    if (s == "--threads") a.threads = int(positive(value()));
    else if (s == "--warmup") a.warmup = int(positive(value()));
    else if (s == "--repeat") a.repeat = int(positive(value()));
    else if (s == "--sizes") {
      a.sizes.clear();
      std::string list = value();
      for (size_t start = 0; start <= list.size();) {
        size_t comma = list.find(',', start);
        a.sizes.push_back(positive(list.substr(start, comma == std::string::npos ? comma : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else
      throw ConfigError(cat("unknown option '", s, "' (valid: --threads, --warmup, --repeat, --sizes)"));
  }
  return a;
}

json time_gemm(const std::string& label, int64_t M, int64_t K, int64_t N, const Args& a, bool linear) {
  torch::InferenceMode inference;
  torch::manual_seed(1);
  auto x = torch::randn({M, K});
  // Linear layers store weights [N, K] and multiply by the transpose; the
  // square case is a plain mm of two row-major matrices.
  auto w = linear ? torch::randn({N, K}) : torch::randn({K, N});
  auto bias = torch::randn({N});
  auto t = bench::time_runs(a.warmup, a.repeat, [&] {
    if (linear) torch::addmm(bias, x, w.t());
    else torch::mm(x, w);
  });
  const double flops = 2.0 * double(M) * double(K) * double(N);
  const double s = t.median();
  log("sgemm ", label, " ", M, "x", K, "x", N, ": ", flops / s / 1e9, " GFLOP/s (cpu/wall ",
      t.cpu_per_wall(), ")");
  return {{"label", label},        {"m", M},
          {"k", K},                {"n", N},
          {"flops", flops},        {"seconds_median", s},
          {"seconds_all", t.seconds}, {"cpu_per_wall", t.cpu_per_wall()},
          {"gflops_per_s", flops / s / 1e9},
          {"gflops_per_cpu_s", t.per_cpu_second(flops) / 1e9}};
}

}  // namespace

int main(int argc, char** argv) {
  bench::reexec_with_passive_omp_wait(argv);
  try {
    Args a = parse_args(argc, argv);
    torch::set_num_threads(a.threads);
    json out = bench::provenance(argc, argv, VERITY_BUILD_TYPE);
    out["benchmark"] = "sgemm_ceiling";
    out["loadavg_start"] = bench::loadavg();
    out["threads"] = a.threads;
    out["torch_parallel_info"] = at::get_parallel_info();
    json square = json::array(), model = json::array();
    double best = 0, best_per_cpu_s = 0;
    for (int64_t n : a.sizes) {
      square.push_back(time_gemm("square mm", n, n, n, a, false));
      best = std::max(best, square.back()["gflops_per_s"].get<double>());
      best_per_cpu_s = std::max(best_per_cpu_s, square.back()["gflops_per_cpu_s"].get<double>());
    }
    // MiniLM-shaped BERT Linear layers: Q/K/V/out (384->384), FFN in
    // (384->1536), FFN out (1536->384), at 32x128 = 4096 and 64x32 = 2048 tokens.
    for (int64_t tokens : {4096, 2048}) {
      model.push_back(time_gemm("linear 384->384", tokens, 384, 384, a, true));
      model.push_back(time_gemm("linear 384->1536", tokens, 384, 1536, a, true));
      model.push_back(time_gemm("linear 1536->384", tokens, 1536, 384, a, true));
    }
    out["square"] = square;
    out["bert_linear_shapes"] = model;
    out["ceiling_gflops_per_s"] = best;
    out["ceiling_gflops_per_cpu_s"] = best_per_cpu_s;
    out["loadavg_end"] = bench::loadavg();
    out["blas_loaded"] = bench::loaded_blas_libraries();
    std::cout << out.dump(2) << "\n";
  } catch (const ConfigError& e) {
    std::cerr << "verity_bench_sgemm: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "verity_bench_sgemm: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
