// Encoder speed benchmark (libtorch, CPU): sentences/s and GFLOP/s of
// USE-lite and of a BERT (meant: the random MiniLM-L6-shaped one from
// tools/reference/make_minilm_shaped.py) at fixed batch x token shapes.
// Prints one JSON object on stdout; progress goes to stderr.
//
//   verity_bench_encode [--bert DIR] [--use-lite DIR|none] [--threads 2]
//       [--warmup 2] [--repeat 5] [--shapes 32x128,64x32] [--no-breakdown]
//
// Every row of a batch is exactly T tokens, so the FLOPs are known:
//  - "forward": the network on random token ids (what ONNX Runtime is
//    compared against in tools/reference/bench_onnx.mjs); for USE-lite also
//    "forward-packed", with the Linear layers packed as the encoder runs them
//    (shapes 1xT measure the latency of encoding one short text);
//  - "encode": Encoder::encode() on texts long enough to be truncated to
//    max_length = T (adds tokenization, pooling, copying token vectors out);
//    every text is checked to come back with exactly T positions.
// FLOPs count the matmuls only (multiply-add = 2); LayerNorm, softmax, GELU
// and embedding lookups are < 1% of them and are left out.
// With a BERT, a per-op breakdown of one forward at the first shape shows
// where libtorch's time goes (sgemm vs. memory-bound element-wise ops).
#include <torch/torch.h>

#include <ATen/Parallel.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>

#include "bench_env.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "encode/bert.hpp"
#include "encode/detail/bert_model.hpp"
#include "encode/detail/use_lite_model.hpp"
#include "encode/registry.hpp"
#include "encode/use_lite.hpp"

using namespace verity;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct Args {
  std::string bert_dir;  // empty = skip BERT
  std::string use_lite_dir = (fs::path(encode::model_root()) / "use-lite").string();
  int threads = 2, warmup = 2, repeat = 5;
  std::string shapes = "32x128,64x32";
  bool breakdown = true;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> std::string {
      VERITY_CHECK(i + 1 < argc, ConfigError, "option ", s, " needs a value");
      return argv[++i];
    };
    auto positive = [&]() {
      std::string v = value();
      int n = 0;
      VERITY_CHECK(std::sscanf(v.c_str(), "%d", &n) == 1 && n > 0, ConfigError, "option ", s,
                   " needs a positive integer, got '", v, "'");
      return n;
    };
    if (s == "--bert") a.bert_dir = value();
    else if (s == "--use-lite") a.use_lite_dir = value();
    else if (s == "--threads") a.threads = positive();
    else if (s == "--warmup") a.warmup = positive();
    else if (s == "--repeat") a.repeat = positive();
    else if (s == "--shapes") a.shapes = value();
    else if (s == "--no-breakdown") a.breakdown = false;
    else
      throw ConfigError(cat("unknown option '", s,
                            "' (valid: --bert, --use-lite, --threads, --warmup, --repeat, --shapes, "
                            "--no-breakdown)"));
  }
  return a;
}

// Matmul FLOPs of one BERT forward: per token and layer the Q, K, V and output
// projections (4 H^2) and the FFN (2 H I); per sequence and layer QK^T and AV
// (2 T^2 H each). Same formula as bertFlops() in bench_onnx.mjs.
double bert_flops(const encode::detail::BertConfig& c, int64_t B, int64_t T) {
  const double H = double(c.hidden), I = double(c.intermediate), L = double(c.layers);
  return L * (double(B * T) * 2.0 * (4 * H * H + 2 * H * I) + double(B) * 4.0 * double(T * T) * H);
}

// USE-lite from its shape: layer 0 runs attention at the embedding width
// (256) and projects the residual to 512; the FFN is 512 -> 1536 -> 512; the
// pooled head is one 512x512 matmul per sentence.
double use_lite_flops(const encode::detail::UseLiteShape& s, int64_t B, int64_t T) {
  const double D = double(s.hidden), F = double(s.ffn), tokens = double(B * T);
  double flops = 2.0 * double(B) * D * D;  // head
  for (int64_t l = 0; l < s.layers; ++l) {
    const double in = double(l == 0 ? s.embedding_dim : s.hidden);
    double per_token = in * 3 * in + in * D + D * F + F * D;
    if (in != D) per_token += in * D;  // residual projection
    flops += 2.0 * tokens * per_token + double(B) * 4.0 * double(T * T) * in;
  }
  return flops;
}

// Random ids in [lo, hi): ordinary word pieces, never specials or padding.
torch::Tensor random_ids(int64_t B, int64_t T, int64_t lo, int64_t hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(lo, hi - 1);
  auto ids = torch::empty({B, T}, torch::kLong);
  auto* p = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < B * T; ++i) p[i] = pick(rng);
  return ids;
}

// B texts of plain English words, each far longer than T tokens for either
// tokenizer (>= 1 token per word), so max_length truncation fixes the length.
std::vector<std::string> long_texts(int64_t B, int64_t T, uint64_t seed) {
  static const char* const kWords[] = {
      "the",      "protein",  "binding",  "reduces", "risk",    "of",      "fracture", "in",
      "patients", "with",     "vitamin",  "levels",  "and",     "cells",   "show",     "increased",
      "response", "to",       "treatment", "after",  "three",   "weeks",   "study",    "found",
      "no",       "effect",   "on",       "mortality", "however", "several", "trials",  "report",
      "lower",    "blood",    "pressure", "when",    "measured", "at",     "rest",     "during",
      "exercise", "gene",     "expression", "was",   "higher",  "than",    "controls", "overall"};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, std::size(kWords) - 1);
  std::vector<std::string> texts(static_cast<size_t>(B));
  for (auto& t : texts)
    for (int64_t w = 0; w < 2 * T + 8; ++w) t += cat(w ? " " : "", kWords[pick(rng)]);
  return texts;
}

json measurement(const std::string& model, const std::string& what, int64_t B, int64_t T, double flops,
                 const bench::Timing& t) {
  const double s = t.median();
  log("libtorch ", model, " ", what, " ", B, "x", T, ": ", B / s, " sentences/s, ", flops / s / 1e9,
      " GFLOP/s (cpu/wall ", t.cpu_per_wall(), ")");
  return {{"model", model},          {"runtime", "libtorch"},
          {"what", what},            {"batch", B},
          {"tokens", T},             {"flops", flops},
          {"seconds_median", s},     {"seconds_all", t.seconds},
          {"cpu_per_wall", t.cpu_per_wall()}, {"sentences_per_s", double(B) / s},
          {"gflops_per_s", flops / s / 1e9},
          {"gflops_per_cpu_s", t.per_cpu_second(flops) / 1e9}};
}

// Runs encode() and checks that every text has exactly T positions.
void encode_exactly(const encode::Encoder& enc, const std::vector<std::string>& texts, int64_t T,
                    const encode::EncodeOptions& opts, const std::string& model) {
  encode::Encoded out = enc.encode(texts, opts);
  for (size_t b = 0; b < out.batch; ++b)
    VERITY_CHECK(out.length(b) == size_t(T), Error, model, ": text ", b, " encoded to ", out.length(b),
                 " positions, the benchmark needs exactly ", T);
}

// Proves the libtorch BERT is the network make_minilm_shaped.py exported
// (check.json: PyTorch's own output for seeded ids); returns the max abs diff.
double check_bert_reference(encode::detail::BertModel& model, const std::string& dir) {
  const std::string path = (fs::path(dir) / "check.json").string();
  json j;
  try {
    j = json::parse(read_file(path));
  } catch (const json::exception& e) {
    throw FormatError(cat(path, ": invalid JSON: ", e.what()));
  }
  auto shape = j.at("shape").get<std::vector<int64_t>>();
  VERITY_CHECK(shape.size() == 3, FormatError, path, ": field 'shape' must have 3 entries");
  auto flat = [&](const char* field) {
    std::vector<int64_t> v;
    for (const auto& row : j.at(field)) for (const auto& x : row) v.push_back(x.get<int64_t>());
    VERITY_CHECK(int64_t(v.size()) == shape[0] * shape[1], FormatError, path, ": field '", field,
                 "' has ", v.size(), " entries, shape says ", shape[0] * shape[1]);
    return torch::tensor(v, torch::kLong).view({shape[0], shape[1]});
  };
  auto expected = j.at("last_hidden_state").get<std::vector<float>>();
  VERITY_CHECK(int64_t(expected.size()) == shape[0] * shape[1] * shape[2], FormatError, path,
               ": field 'last_hidden_state' has ", expected.size(), " values");
  torch::InferenceMode inference;
  auto got = model->forward(flat("input_ids"), flat("attention_mask")).contiguous();
  auto want = torch::from_blob(expected.data(), {shape[0], shape[1], shape[2]}, torch::kFloat);
  double diff = (got - want).abs().max().item<double>();
  VERITY_CHECK(diff <= 1e-3, Error, path, ": max |libtorch - pytorch| = ", diff,
               " > 1e-3; the benchmark would not measure the exported network");
  return diff;
}

// One BERT forward with each op timed by category. Eager libtorch runs every
// op to completion before returning, so wall-clock per op is exact.
json bert_breakdown(encode::detail::BertModel& model, int64_t B, int64_t T, int warmup, int repeat) {
  using encode::detail::BertLayer;
  const auto& c = model->config;
  const int64_t H = c.hidden, heads = c.heads, d = H / heads;
  torch::InferenceMode inference;
  auto ids = random_ids(B, T, 1000, c.vocab_size, 11);
  auto x0 = model->embeddings->forward(ids, torch::zeros_like(ids));
  auto additive = torch::zeros({B, 1, 1, T});
  std::map<std::string, double> acc;
  auto timed = [&](const char* name, auto&& f) {
    auto t0 = bench::Clock::now();
    torch::Tensor r = f();
    acc[name] += std::chrono::duration<double>(bench::Clock::now() - t0).count();
    return r;
  };
  auto split = [&](const torch::Tensor& t) { return t.view({B, T, heads, d}).transpose(1, 2); };
  auto run = [&] {
    torch::Tensor x = x0;
    for (const auto& module : *model->encoder->layer) {
      auto& layer = *module->as<BertLayer>();
      auto& self = *layer.attention->self;
      auto q = split(timed("linear_sgemm", [&] { return self.query(x); }));
      auto k = split(timed("linear_sgemm", [&] { return self.key(x); }));
      auto v = split(timed("linear_sgemm", [&] { return self.value(x); }));
      auto scores = timed("attention_bmm", [&] { return torch::matmul(q, k.transpose(-1, -2)); });
      scores = timed("scale_and_mask", [&] { return scores / std::sqrt(double(d)) + additive; });
      auto probs = timed("softmax", [&] { return torch::softmax(scores, -1); });
      auto context = timed("attention_bmm", [&] { return torch::matmul(probs, v); });
      context = timed("transpose_copy", [&] { return context.transpose(1, 2).contiguous().view({B, T, H}); });
      auto& ao = *layer.attention->output;
      auto dense = timed("linear_sgemm", [&] { return ao.dense(context); });
      auto a = timed("residual_layernorm", [&] { return ao.LayerNorm(dense + x); });
      auto inter = timed("linear_sgemm", [&] { return layer.intermediate->dense(a); });
      auto g = timed("gelu", [&] { return torch::gelu(inter); });
      auto& fo = *layer.output;
      auto o = timed("linear_sgemm", [&] { return fo.dense(g); });
      x = timed("residual_layernorm", [&] { return fo.LayerNorm(o + a); });
    }
    return x;
  };
  for (int i = 0; i < warmup; ++i) run();
  acc.clear();
  auto t0 = bench::Clock::now();
  for (int i = 0; i < repeat; ++i) run();
  const double total = std::chrono::duration<double>(bench::Clock::now() - t0).count() / repeat;

  // Variant: Q, K and V as one [3H, H] matmul (one sgemm with N = 3H).
  auto& self0 = *model->encoder->layer->at<encode::detail::BertLayerImpl>(0).attention->self;
  auto w_qkv = torch::cat({self0.query->weight, self0.key->weight, self0.value->weight});
  auto b_qkv = torch::cat({self0.query->bias, self0.key->bias, self0.value->bias});
  auto qkv_fused = bench::time_runs(warmup, repeat, [&] { return torch::nn::functional::linear(x0, w_qkv, b_qkv); });
  auto qkv_split = bench::time_runs(warmup, repeat, [&] {
    self0.query(x0);
    self0.key(x0);
    self0.value(x0);
  });

  const double linear_flops = double(c.layers) * 2.0 * double(B * T) * (4.0 * H * H + 2.0 * H * c.intermediate);
  const double bmm_flops = double(c.layers) * 4.0 * double(B) * double(T * T) * H;
  json ops = json::object();
  for (const auto& [name, seconds] : acc) {
    json op = {{"seconds", seconds / repeat}, {"fraction", seconds / repeat / total}};
    if (name == "linear_sgemm") op["gflops_per_s"] = linear_flops / (seconds / repeat) / 1e9;
    if (name == "attention_bmm") op["gflops_per_s"] = bmm_flops / (seconds / repeat) / 1e9;
    ops[name] = op;
  }
  log("breakdown ", B, "x", T, ": ", ops.dump());
  return {{"batch", B},
          {"tokens", T},
          {"seconds_per_forward", total},
          {"ops", ops},
          {"qkv_one_layer_three_matmuls_s", qkv_split.median()},
          {"qkv_one_layer_fused_matmul_s", qkv_fused.median()}};
}

json run_bert(const Args& a, const std::vector<std::pair<int64_t, int64_t>>& shapes) {
  auto bert = encode::load_bert(a.bert_dir);
  auto& model = bert->impl().model;
  const auto& c = model->config;
  json out = {{"dir", a.bert_dir},
              {"config", {{"layers", c.layers}, {"hidden", c.hidden}, {"heads", c.heads},
                          {"intermediate", c.intermediate}, {"vocab_size", c.vocab_size},
                          {"max_position", c.max_position}}}};
  if (file_exists((fs::path(a.bert_dir) / "check.json").string()))
    out["check_max_abs_diff"] = check_bert_reference(model, a.bert_dir);
  json ms = json::array();
  for (auto [B, T] : shapes) {
    VERITY_CHECK(T <= c.max_position, ConfigError, "--shapes: ", T, " tokens exceed ", a.bert_dir,
                 " max_position_embeddings=", c.max_position);
    const double flops = bert_flops(c, B, T);
    {
      torch::InferenceMode inference;
      auto ids = random_ids(B, T, 1000, c.vocab_size, 1);
      auto mask = torch::ones({B, T}, torch::kLong);
      ms.push_back(measurement("bert", "forward", B, T, flops,
                               bench::time_runs(a.warmup, a.repeat, [&] { model->forward(ids, mask); })));
    }
    auto texts = long_texts(B, T, 2);
    encode::EncodeOptions opts;
    opts.batch_size = size_t(B);
    opts.max_length = size_t(T);
    opts.threads = a.threads;
    ms.push_back(measurement("bert", "encode", B, T, flops, bench::time_runs(a.warmup, a.repeat, [&] {
                               encode_exactly(*bert, texts, T, opts, "bert");
                             })));
  }
  out["measurements"] = ms;
  if (a.breakdown) out["breakdown"] = bert_breakdown(model, shapes[0].first, shapes[0].second, a.warmup, a.repeat);
  return out;
}

json run_use_lite(const Args& a, const std::vector<std::pair<int64_t, int64_t>>& shapes) {
  encode::UseLiteEncoder enc(a.use_lite_dir);
  // The forward measurement uses a randomly initialized network of the
  // documented USE-lite shape (speed does not depend on the weights).
  encode::detail::UseLiteShape shape;
  torch::manual_seed(3);
  encode::detail::UseLiteNet net(shape), packed_net(shape);
  net->eval();
  packed_net->eval();
  json ms = json::array();
  for (auto [B, T] : shapes) {
    VERITY_CHECK(T <= int64_t(encode::kUseLiteMaxLength), ConfigError, "--shapes: ", T,
                 " tokens exceed USE-lite's limit of ", encode::kUseLiteMaxLength);
    const double flops = use_lite_flops(shape, B, T);
    {
      torch::InferenceMode inference;
      auto ids = random_ids(B, T, 1, 8000, 1);
      auto mask = torch::ones({B, T}, torch::kBool);
      ms.push_back(measurement("use-lite", "forward", B, T, flops,
                               bench::time_runs(a.warmup, a.repeat, [&] { net->forward(ids, mask); })));
      // The same network with its Linear layers packed, as the encoder runs it.
      packed_net->pack_for_inference();
      ms.push_back(measurement("use-lite", "forward-packed", B, T, flops,
                               bench::time_runs(a.warmup, a.repeat, [&] { packed_net->forward(ids, mask); })));
    }
    auto texts = long_texts(B, T, 2);
    encode::EncodeOptions opts;
    opts.batch_size = size_t(B);
    opts.max_length = size_t(T);
    opts.threads = a.threads;
    ms.push_back(measurement("use-lite", "encode", B, T, flops, bench::time_runs(a.warmup, a.repeat, [&] {
                               encode_exactly(enc, texts, T, opts, "use-lite");
                             })));
  }
  return {{"dir", a.use_lite_dir}, {"measurements", ms}};
}

}  // namespace

int main(int argc, char** argv) {
  bench::reexec_with_passive_omp_wait(argv);
  try {
    Args a = parse_args(argc, argv);
    auto shapes = bench::parse_shapes(a.shapes, "--shapes");
    torch::set_num_threads(a.threads);
    json out = bench::provenance(argc, argv, VERITY_BUILD_TYPE);
    out["benchmark"] = "encode";
    out["loadavg_start"] = bench::loadavg();
    out["threads"] = a.threads;
    out["torch_num_threads"] = torch::get_num_threads();
    out["torch_parallel_info"] = at::get_parallel_info();
    out["warmup"] = a.warmup;
    out["repeat"] = a.repeat;
    if (!a.bert_dir.empty()) out["bert"] = run_bert(a, shapes);
    if (a.use_lite_dir != "none") out["use_lite"] = run_use_lite(a, shapes);
    out["loadavg_end"] = bench::loadavg();
    out["blas_loaded"] = bench::loaded_blas_libraries();  // after torch ran its first gemm
    std::cout << out.dump(2) << "\n";
  } catch (const ConfigError& e) {
    std::cerr << "verity_bench_encode: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "verity_bench_encode: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
