// USE-lite network (torch) and the encoder around it. The only torch
// translation unit of USE-lite; conversion lives in use_lite_convert.cpp.
#include "encode/use_lite.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <set>

#include "core/error.hpp"
#include "core/log.hpp"
#include "encode/detail/use_lite_model.hpp"
#include "encode/model_dir.hpp"
#include "encode/safetensors.hpp"
#include "text/sentencepiece.hpp"

namespace verity::encode {
namespace detail {

TimingSignalImpl::TimingSignalImpl(int64_t channels) {
  inv_timescales = register_buffer("inv_timescales", torch::zeros({channels}));
}

torch::Tensor TimingSignalImpl::forward(int64_t length) {
  auto positions = torch::arange(length, inv_timescales.options()).unsqueeze(1);
  auto scaled = positions * inv_timescales.unsqueeze(0);
  return torch::cat({torch::sin(scaled), torch::cos(scaled)}, 1);
}

torch::Tensor apply_linear(torch::nn::Linear& linear, const std::optional<PackedLinear>& packed,
                           const torch::Tensor& x, bool relu) {
  if (!packed || torch::GradMode::is_enabled() || x.scalar_type() != torch::kFloat32)
    return relu ? torch::relu(linear(x)) : linear(x);
  auto input = x.contiguous();
  const size_t rows = size_t(input.numel()) / packed->in();
  auto sizes = input.sizes().vec();
  sizes.back() = int64_t(packed->out());
  auto y = torch::empty(sizes, input.options());
  // A panel of a few rows is microseconds of work: split only into shares
  // worth waking a thread for (~256k multiply-adds each).
  const size_t panel_work = std::max<size_t>(1, rows * packed->in() * PackedLinear::kPanel);
  const int64_t grain = std::max<int64_t>(1, int64_t((size_t(1) << 18) / panel_work));
  const float* in = input.data_ptr<float>();
  float* outp = y.data_ptr<float>();
  at::parallel_for(0, int64_t(packed->panels()), grain, [&](int64_t b, int64_t e) {
    packed->apply(in, rows, outp, size_t(b), size_t(e), relu);
  });
  return y;
}

namespace {
PackedLinear pack(torch::nn::Linear& linear) {
  auto w = linear->weight.detach().contiguous();
  auto b = linear->bias.detach().contiguous();
  return PackedLinear({w.data_ptr<float>(), size_t(w.numel())}, {b.data_ptr<float>(), size_t(b.numel())},
                      size_t(w.size(0)), size_t(w.size(1)));
}
}  // namespace

UseLiteLayerImpl::UseLiteLayerImpl(int64_t in_dim_, const UseLiteShape& shape)
    : in_dim(in_dim_), heads(shape.heads) {
  VERITY_CHECK(in_dim % heads == 0, ConfigError, "use-lite: width ", in_dim,
               " is not divisible by heads=", heads);
  // Registration order == the graph's order; names are the safetensors names.
  if (in_dim != shape.hidden)
    residual_proj = register_module("residual_proj", torch::nn::Linear(in_dim, shape.hidden));
  auto norm = [&](int64_t d) {
    return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(shape.layer_norm_eps));
  };
  attn_norm = register_module("attn_norm", norm(in_dim));
  auto attn = register_module("attn", std::make_shared<torch::nn::Module>());
  qkv = attn->register_module("qkv", torch::nn::Linear(in_dim, 3 * in_dim));
  out = attn->register_module("out", torch::nn::Linear(in_dim, shape.hidden));
  ffn_norm = register_module("ffn_norm", norm(shape.hidden));
  auto ffn = register_module("ffn", std::make_shared<torch::nn::Module>());
  fc1 = ffn->register_module("fc1", torch::nn::Linear(shape.hidden, shape.ffn));
  fc2 = ffn->register_module("fc2", torch::nn::Linear(shape.ffn, shape.hidden));
}

void UseLiteLayerImpl::pack_for_inference() {
  if (residual_proj) packed_residual_proj = pack(residual_proj);
  packed_qkv = pack(qkv);
  packed_out = pack(out);
  packed_fc1 = pack(fc1);
  packed_fc2 = pack(fc2);
}

torch::Tensor UseLiteLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& attention_bias,
                                        const torch::Tensor& mask) {
  const int64_t B = x.size(0), T = x.size(1), head_dim = in_dim / heads;
  // The graph projects the residual only at real positions (zeros at padding).
  torch::Tensor residual = residual_proj ? apply_linear(residual_proj, packed_residual_proj, x) * mask : x;

  auto parts = apply_linear(qkv, packed_qkv, attn_norm(x)).split(in_dim, -1);
  auto split_heads = [&](const torch::Tensor& t) {
    return t.reshape({B, T, heads, head_dim}).transpose(1, 2);
  };
  auto q = split_heads(parts[0]) * float(1.0 / std::sqrt(double(head_dim)));
  auto k = split_heads(parts[1]);
  auto v = split_heads(parts[2]);
  auto weights = torch::softmax(torch::matmul(q, k.transpose(-1, -2)) + attention_bias, -1);
  auto context = torch::matmul(weights, v).transpose(1, 2).reshape({B, T, in_dim});
  auto h = apply_linear(out, packed_out, context) + residual;

  auto hidden = apply_linear(fc1, packed_fc1, ffn_norm(h), /*relu=*/true);
  auto f = apply_linear(fc2, packed_fc2, hidden) * mask;  // FFN runs at real positions only
  return f + h;
}

UseLiteNetImpl::UseLiteNetImpl(const UseLiteShape& shape_) : shape(shape_) {
  VERITY_CHECK(shape.embedding_dim % 2 == 0 && shape.layers >= 1, ConfigError,
               "use-lite: bad shape embedding_dim=", shape.embedding_dim, " layers=", shape.layers);
  embeddings = register_module("embeddings", torch::nn::Embedding(shape.vocab_rows, shape.embedding_dim));
  timing = register_module("timing", TimingSignal(shape.embedding_dim / 2));
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t l = 0; l < shape.layers; ++l)
    layers->push_back(UseLiteLayer(l == 0 ? shape.embedding_dim : shape.hidden, shape));
  head = register_module("head", torch::nn::Linear(shape.hidden, shape.hidden));
}

void UseLiteNetImpl::pack_for_inference() {
  for (const auto& layer : *layers) layer->as<UseLiteLayer>()->pack_for_inference();
  packed_head = pack(head);
}

UseLiteOutput UseLiteNetImpl::forward(const torch::Tensor& ids, const torch::Tensor& mask) {
  const int64_t T = ids.size(1);
  auto maskf = mask.to(torch::kFloat32).unsqueeze(-1);                    // [B,T,1]
  auto attention_bias = ((1 - mask.to(torch::kFloat32)) * -1e9f).view({ids.size(0), 1, 1, T});
  // The graph adds the timing signal to the embedding and then adds that sum
  // to the embedding again (a residual around AddTimingSignal): e + (e + t).
  auto e = embeddings(ids.clamp(0, shape.vocab_rows - 1)) * maskf;
  auto x = e + (e + timing(T).unsqueeze(0)) * maskf;
  for (const auto& layer : *layers) x = layer->as<UseLiteLayer>()->forward(x, attention_bias, maskf);

  auto lengths = maskf.sum(1).clamp_min(1);  // [B,1]; an empty row pools to zeros
  auto pooled = torch::tanh(apply_linear(head, packed_head, (x * maskf).sum(1) / lengths));
  return {x * maskf, pooled};
}

torch::Tensor use_lite_l2_normalize(const torch::Tensor& x) {
  return x * torch::rsqrt(torch::clamp_min((x * x).sum(-1, true), 1e-12));
}

}  // namespace detail

namespace {

detail::UseLiteShape shape_from_config(const ModelConfig& c) {
  detail::UseLiteShape s;
  s.vocab_rows = c.get_int("vocab_rows");
  s.embedding_dim = c.get_int("embedding_dim");
  s.hidden = c.get_int("hidden");
  s.ffn = c.get_int("ffn");
  s.heads = c.get_int("heads");
  s.layers = c.get_int("layers");
  s.layer_norm_eps = c.get_double("layer_norm_eps");
  VERITY_CHECK(s.hidden == int64_t(kUseLiteDim) && c.dim == kUseLiteDim, ConfigError, c.source_path,
               ": use-lite has dim ", kUseLiteDim, ", config says dim=", c.dim, " hidden=", s.hidden);
  VERITY_CHECK(s.vocab_rows > 0 && s.embedding_dim > 0 && s.ffn > 0 && s.heads > 0 && s.layers > 0,
               ConfigError, c.source_path, ": use-lite shape fields must be positive");
  return s;
}

// Copies every parameter and buffer from the file; every tensor in the file
// must be used, so a renamed or extra tensor is an error, not silently ignored.
void load_weights(detail::UseLiteNet& net, const std::string& path) {
  SafetensorsFile file(path);
  torch::NoGradGuard no_grad;
  std::set<std::string> used;
  auto load = [&](const std::string& name, torch::Tensor& target) {
    std::vector<int64_t> shape(target.sizes().begin(), target.sizes().end());
    check_tensor_shape(file, name, shape, "the use-lite network");
    std::vector<float> values = file.to_float32(name);
    target.copy_(torch::from_blob(values.data(), target.sizes(), torch::kFloat32));
    used.insert(name);
  };
  for (auto& p : net->named_parameters(true)) load(p.key(), p.value());
  for (auto& b : net->named_buffers(true)) load(b.key(), b.value());
  for (const auto& name : file.names())
    VERITY_CHECK(used.count(name), FormatError, path, ": unexpected tensor '", name,
                 "' (not a use-lite parameter)");
}

}  // namespace

struct UseLiteEncoder::Impl {
  std::string model_dir;
  ModelConfig config;
  text::SentencePieceTokenizer tokenizer;
  detail::UseLiteNet net{nullptr};
  size_t max_length = kUseLiteMaxLength;

  Impl(std::string dir, ModelConfig cfg, text::SentencePieceTokenizer tok)
      : model_dir(std::move(dir)), config(std::move(cfg)), tokenizer(std::move(tok)) {}
};

UseLiteEncoder::UseLiteEncoder(const std::string& model_dir) {
  ModelConfig config = read_model_config(model_dir);
  VERITY_CHECK(config.architecture == kUseLiteArchitecture, ConfigError, config.source_path,
               ": architecture is '", config.architecture, "', expected '", kUseLiteArchitecture, "'");
  VERITY_CHECK(config.pooling == "mean-tanh", ConfigError, config.source_path, ": pooling '",
               config.pooling, "' is not supported by use-lite (expected 'mean-tanh')");
  VERITY_CHECK(config.max_length >= 1 && config.max_length <= kUseLiteMaxLength, ConfigError,
               config.source_path, ": max_length ", config.max_length, " outside [1, ",
               kUseLiteMaxLength, "]");
  auto shape = shape_from_config(config);
  namespace fs = std::filesystem;
  auto tokenizer = text::SentencePieceTokenizer::load(
      (fs::path(model_dir) / config.get_string("tokenizer")).string());
  VERITY_CHECK(int64_t(tokenizer.size()) <= shape.vocab_rows, ConfigError, config.source_path,
               ": tokenizer has ", tokenizer.size(), " pieces but vocab_rows=", shape.vocab_rows);
  impl_ = std::make_unique<Impl>(model_dir, std::move(config), std::move(tokenizer));
  impl_->max_length = impl_->config.max_length;
  impl_->net = detail::UseLiteNet(shape);
  load_weights(impl_->net, (fs::path(model_dir) / kModelWeightsFile).string());
  impl_->net->eval();
  impl_->net->pack_for_inference();
}

UseLiteEncoder::~UseLiteEncoder() = default;

std::string UseLiteEncoder::spec() const { return std::string(kUseLiteArchitecture) + ":" + impl_->model_dir; }

std::vector<int32_t> UseLiteEncoder::tokenize(const std::string& text) const {
  return impl_->tokenizer.encode(text);
}

std::vector<std::vector<std::string>> UseLiteEncoder::pieces(std::span<const std::string> texts) const {
  std::vector<std::vector<std::string>> out(texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    for (int32_t id : impl_->tokenizer.encode(texts[i])) out[i].push_back(impl_->tokenizer.piece(id));
  return out;
}

Encoded UseLiteEncoder::encode(std::span<const std::string> texts, const EncodeOptions& opts) const {
  const size_t max_length = opts.max_length == 0 ? impl_->max_length : opts.max_length;
  VERITY_CHECK(max_length <= kUseLiteMaxLength, ConfigError, "use-lite: max_length ", max_length,
               " exceeds the model's limit of ", kUseLiteMaxLength, " tokens");
  VERITY_CHECK(opts.batch_size > 0, ConfigError, "use-lite: batch_size must be > 0");
  if (opts.threads > 0) torch::set_num_threads(opts.threads);

  const size_t B = texts.size(), D = kUseLiteDim;
  std::vector<std::vector<int32_t>> ids(B);
  size_t T = 0;
  for (size_t i = 0; i < B; ++i) {
    try {
      ids[i] = impl_->tokenizer.encode(texts[i]);
    } catch (const FormatError& e) {
      throw FormatError(cat("use-lite: text ", i, ": ", e.what()));
    }
    if (ids[i].size() > max_length) ids[i].resize(max_length);
    T = std::max(T, ids[i].size());
  }

  Encoded out;
  out.batch = B;
  out.max_tokens = T;
  out.dim = D;
  out.pooled.assign(B * D, 0.0f);
  out.mask.assign(B * T, 0);
  if (opts.with_tokens) {
    out.tokens.assign(B * T * D, 0.0f);
    out.token_strings.resize(B);
  }
  for (size_t i = 0; i < B; ++i) {
    std::fill_n(out.mask.begin() + ptrdiff_t(i * T), ids[i].size(), uint8_t(1));
    if (opts.with_tokens)
      for (int32_t id : ids[i]) out.token_strings[i].push_back(impl_->tokenizer.piece(id));
  }

  // Similar lengths share a batch, so little compute goes to padding.
  std::vector<size_t> order(B);
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ids[a].size() < ids[b].size(); });

  torch::InferenceMode inference;
  for (size_t begin = 0; begin < B; begin += opts.batch_size) {
    check_interrupt();
    const size_t end = std::min(B, begin + opts.batch_size), n = end - begin;
    size_t Tb = 1;  // an all-empty batch still needs one (masked) position
    for (size_t j = begin; j < end; ++j) Tb = std::max(Tb, ids[order[j]].size());
    auto id_tensor = torch::zeros({int64_t(n), int64_t(Tb)}, torch::kInt64);
    auto mask_tensor = torch::zeros({int64_t(n), int64_t(Tb)}, torch::kBool);
    auto id_acc = id_tensor.accessor<int64_t, 2>();
    auto mask_acc = mask_tensor.accessor<bool, 2>();
    for (size_t j = 0; j < n; ++j) {
      const auto& row = ids[order[begin + j]];
      for (size_t t = 0; t < row.size(); ++t) {
        id_acc[int64_t(j)][int64_t(t)] = row[t];
        mask_acc[int64_t(j)][int64_t(t)] = true;
      }
    }
    auto result = impl_->net->forward(id_tensor, mask_tensor);
    auto pooled = (opts.normalize ? detail::use_lite_l2_normalize(result.pooled) : result.pooled).contiguous();
    auto tokens = result.tokens.contiguous();
    for (size_t j = 0; j < n; ++j) {
      const size_t row = order[begin + j];
      std::memcpy(out.pooled.data() + row * D, pooled.data_ptr<float>() + j * D, D * sizeof(float));
      if (opts.with_tokens && !ids[row].empty())
        std::memcpy(out.tokens.data() + row * T * D, tokens.data_ptr<float>() + j * Tb * D,
                    ids[row].size() * D * sizeof(float));
    }
  }
  return out;
}

std::unique_ptr<Encoder> load_use_lite(const std::string& model_dir) {
  return std::make_unique<UseLiteEncoder>(model_dir);
}

}  // namespace verity::encode
