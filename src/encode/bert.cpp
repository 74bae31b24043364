// The only translation unit that includes torch for the BERT family.
#include "encode/bert.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <limits>
#include <numeric>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "encode/detail/bert_model.hpp"
#include "encode/model_dir.hpp"
#include "encode/safetensors.hpp"

namespace fs = std::filesystem;

namespace verity::encode {
namespace detail {

BertEmbeddingsImpl::BertEmbeddingsImpl(const BertConfig& c) {
  word_embeddings = register_module("word_embeddings", torch::nn::Embedding(c.vocab_size, c.hidden));
  position_embeddings =
      register_module("position_embeddings", torch::nn::Embedding(c.max_position, c.hidden));
  token_type_embeddings =
      register_module("token_type_embeddings", torch::nn::Embedding(c.type_vocab_size, c.hidden));
  LayerNorm = register_module(
      "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden}).eps(c.layer_norm_eps)));
}

torch::Tensor BertEmbeddingsImpl::forward(const torch::Tensor& ids, const torch::Tensor& type_ids) {
  auto positions = torch::arange(ids.size(1), ids.options()).unsqueeze(0);
  return LayerNorm(word_embeddings(ids) + position_embeddings(positions) + token_type_embeddings(type_ids));
}

BertSelfAttentionImpl::BertSelfAttentionImpl(const BertConfig& c) : heads(c.heads) {
  query = register_module("query", torch::nn::Linear(c.hidden, c.hidden));
  key = register_module("key", torch::nn::Linear(c.hidden, c.hidden));
  value = register_module("value", torch::nn::Linear(c.hidden, c.hidden));
}

torch::Tensor BertSelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& additive_mask) {
  const int64_t B = x.size(0), T = x.size(1), H = x.size(2), d = H / heads;
  auto split = [&](const torch::Tensor& t) { return t.view({B, T, heads, d}).transpose(1, 2); };
  auto q = split(query(x)), k = split(key(x)), v = split(value(x));
  auto scores = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(double(d)) + additive_mask;
  auto context = torch::matmul(torch::softmax(scores, -1), v);
  return context.transpose(1, 2).contiguous().view({B, T, H});
}

BertResidualOutputImpl::BertResidualOutputImpl(int64_t in, const BertConfig& c) {
  dense = register_module("dense", torch::nn::Linear(in, c.hidden));
  LayerNorm = register_module(
      "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden}).eps(c.layer_norm_eps)));
}

torch::Tensor BertResidualOutputImpl::forward(const torch::Tensor& x, const torch::Tensor& residual) {
  return LayerNorm(dense(x) + residual);
}

BertAttentionImpl::BertAttentionImpl(const BertConfig& c) {
  self = register_module("self", BertSelfAttention(c));
  output = register_module("output", BertResidualOutput(c.hidden, c));
}

torch::Tensor BertAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& additive_mask) {
  return output(self(x, additive_mask), x);
}

BertIntermediateImpl::BertIntermediateImpl(const BertConfig& c) {
  dense = register_module("dense", torch::nn::Linear(c.hidden, c.intermediate));
}

torch::Tensor BertIntermediateImpl::forward(const torch::Tensor& x) { return torch::gelu(dense(x)); }

BertLayerImpl::BertLayerImpl(const BertConfig& c) {
  attention = register_module("attention", BertAttention(c));
  intermediate = register_module("intermediate", BertIntermediate(c));
  output = register_module("output", BertResidualOutput(c.intermediate, c));
}

torch::Tensor BertLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& additive_mask) {
  auto a = attention(x, additive_mask);
  return output(intermediate(a), a);
}

BertStackImpl::BertStackImpl(const BertConfig& c) {
  layer = register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.layers; ++i) layer->push_back(BertLayer(c));
}

torch::Tensor pool_hidden(const torch::Tensor& hidden, const torch::Tensor& mask, const std::string& pooling) {
  auto m = mask.to(torch::kFloat).unsqueeze(-1);
  if (pooling == "cls") return hidden.select(1, 0);
  if (pooling == "max")
    return std::get<0>(hidden.masked_fill(m == 0, std::numeric_limits<float>::lowest()).max(1));
  return (hidden * m).sum(1) / m.sum(1);
}

BertModelImpl::BertModelImpl(const BertConfig& c) : config(c) {
  embeddings = register_module("embeddings", BertEmbeddings(c));
  encoder = register_module("encoder", BertStack(c));
}

torch::Tensor BertModelImpl::forward(const torch::Tensor& ids, const torch::Tensor& mask) {
  auto x = embeddings(ids, torch::zeros_like(ids));
  // Masked keys get the most negative float: exp() underflows to exactly 0, so
  // padded positions cannot influence real ones.
  auto additive = (1.0 - mask.to(torch::kFloat)).view({mask.size(0), 1, 1, mask.size(1)}) *
                  std::numeric_limits<float>::lowest();
  for (const auto& layer : *encoder->layer) x = layer->as<BertLayer>()->forward(x, additive);
  return x;
}

}  // namespace detail

namespace {

using detail::BertConfig;
using nlohmann::json;

constexpr const char* kArchitecture = "bert";
const char* const kPoolings[] = {"cls", "mean", "max"};

void check_pooling(const std::string& pooling, const std::string& where) {
  for (const char* p : kPoolings)
    if (pooling == p) return;
  throw ConfigError(cat(where, ": unknown pooling '", pooling, "' (valid: cls, mean, max)"));
}

json read_json(const std::string& path) {
  try {
    return json::parse(read_file(path));
  } catch (const json::exception& e) {
    throw FormatError(cat(path, ": invalid JSON: ", e.what()));
  }
}

int64_t json_int(const json& j, const char* field, const std::string& path, std::optional<int64_t> fallback = {}) {
  if (!j.contains(field)) {
    VERITY_CHECK(fallback.has_value(), ConfigError, path, ": missing field '", field, "'");
    return *fallback;
  }
  VERITY_CHECK(j[field].is_number_integer() && j[field].get<int64_t>() > 0, ConfigError, path,
               ": field '", field, "' must be a positive integer, got ", j[field].dump());
  return j[field].get<int64_t>();
}

void validate(const BertConfig& c, const std::string& where) {
  VERITY_CHECK(c.hidden % c.heads == 0, ConfigError, where, ": hidden size ", c.hidden,
               " is not divisible by ", c.heads, " attention heads");
}

// Copies every parameter of the module from the file, accepting the bare HF
// name or the "bert."-prefixed one; shapes must match exactly.
void load_weights(detail::BertModel& model, const SafetensorsFile& weights, const std::string& why) {
  torch::NoGradGuard no_grad;
  for (auto& p : model->named_parameters(true)) {
    std::string name = p.key();
    if (!weights.has(name) && weights.has("bert." + name)) name = "bert." + name;
    check_tensor_shape(weights, name, p.value().sizes().vec(), why);
    std::vector<float> data = weights.to_float32(name);
    p.value().copy_(torch::from_blob(data.data(), p.value().sizes(), torch::kFloat));
  }
}

std::unique_ptr<BertEncoder::Impl> load_hf(const std::string& dir) {
  const std::string config_path = (fs::path(dir) / "config.json").string();
  VERITY_CHECK(file_exists(config_path), ConfigError, dir,
               ": not a BERT model directory (no config.json or verity.json)");
  json j = read_json(config_path);
  VERITY_CHECK(j.is_object(), FormatError, config_path, ": must be a JSON object");
  if (j.contains("model_type"))
    VERITY_CHECK(j["model_type"] == "bert", Unsupported, config_path, ": model_type ",
                 j["model_type"].dump(), " is not supported (only \"bert\")");
  if (j.contains("hidden_act"))
    VERITY_CHECK(j["hidden_act"] == "gelu", Unsupported, config_path, ": hidden_act ",
                 j["hidden_act"].dump(), " is not supported (only \"gelu\")");
  if (j.contains("position_embedding_type"))
    VERITY_CHECK(j["position_embedding_type"] == "absolute", Unsupported, config_path,
                 ": position_embedding_type ", j["position_embedding_type"].dump(),
                 " is not supported (only \"absolute\")");
  BertConfig c;
  c.vocab_size = json_int(j, "vocab_size", config_path);
  c.hidden = json_int(j, "hidden_size", config_path);
  c.layers = json_int(j, "num_hidden_layers", config_path);
  c.heads = json_int(j, "num_attention_heads", config_path);
  c.intermediate = json_int(j, "intermediate_size", config_path);
  c.max_position = json_int(j, "max_position_embeddings", config_path, 512);
  c.type_vocab_size = json_int(j, "type_vocab_size", config_path, 2);
  if (j.contains("layer_norm_eps")) {
    VERITY_CHECK(j["layer_norm_eps"].is_number(), ConfigError, config_path,
                 ": field 'layer_norm_eps' must be a number");
    c.layer_norm_eps = j["layer_norm_eps"].get<double>();
  }
  validate(c, config_path);

  auto impl = std::make_unique<BertEncoder::Impl>(BertEncoder::Impl{
      detail::BertModel(c),
      [&] {
        const std::string tokenizer_json = (fs::path(dir) / "tokenizer.json").string();
        if (file_exists(tokenizer_json)) return text::WordPieceTokenizer::from_tokenizer_json(tokenizer_json);
        const std::string vocab = (fs::path(dir) / "vocab.txt").string();
        VERITY_CHECK(file_exists(vocab), ConfigError, dir, ": no tokenizer.json or vocab.txt");
        text::WordPieceOptions opts;
        const std::string tc = (fs::path(dir) / "tokenizer_config.json").string();
        if (file_exists(tc)) {
          json t = read_json(tc);
          if (t.contains("do_lower_case") && t["do_lower_case"].is_boolean())
            opts.lowercase = t["do_lower_case"].get<bool>();
          if (t.contains("strip_accents") && t["strip_accents"].is_boolean())
            opts.strip_accents = t["strip_accents"].get<bool>();
          if (t.contains("tokenize_chinese_chars") && t["tokenize_chinese_chars"].is_boolean())
            opts.tokenize_chinese_chars = t["tokenize_chinese_chars"].get<bool>();
        }
        return text::WordPieceTokenizer::from_vocab_txt(vocab, opts);
      }(),
      fs::path(dir).filename().string(), "mean", dir, size_t(std::min<int64_t>(512, c.max_position))});

  const std::string pooling_path = (fs::path(dir) / "1_Pooling" / "config.json").string();
  if (file_exists(pooling_path)) {
    json p = read_json(pooling_path);
    std::vector<std::string> modes;
    for (const char* mode : kPoolings)
      if (p.value(cat("pooling_mode_", mode == std::string("cls") ? "cls_token" : cat(mode, "_tokens")), false))
        modes.push_back(mode);
    VERITY_CHECK(modes.size() == 1, Unsupported, pooling_path,
                 ": exactly one of pooling_mode_cls_token, pooling_mode_mean_tokens, "
                 "pooling_mode_max_tokens must be true (", modes.size(), " are)");
    impl->pooling = modes[0];
  }
  const std::string st_config = (fs::path(dir) / "sentence_bert_config.json").string();
  if (file_exists(st_config)) {
    json s = read_json(st_config);
    impl->max_length = size_t(json_int(s, "max_seq_length", st_config, int64_t(impl->max_length)));
  }
  const std::string weights_path = (fs::path(dir) / "model.safetensors").string();
  VERITY_CHECK(file_exists(weights_path), ConfigError, dir,
               ": no model.safetensors (other weight formats are not supported)");
  SafetensorsFile weights(weights_path);
  load_weights(impl->model, weights, cat(config_path, ": hidden_size=", c.hidden, " vocab_size=",
                                         c.vocab_size, " intermediate_size=", c.intermediate));
  return impl;
}

std::unique_ptr<BertEncoder::Impl> load_verity(const std::string& dir) {
  ModelConfig mc = read_model_config(dir);
  VERITY_CHECK(mc.architecture == kArchitecture, ConfigError, mc.source_path, ": architecture '",
               mc.architecture, "' is not \"bert\"");
  check_pooling(mc.pooling, mc.source_path);
  BertConfig c;
  c.hidden = int64_t(mc.dim);
  c.vocab_size = mc.get_int("vocab_size");
  c.layers = mc.get_int("num_layers");
  c.heads = mc.get_int("num_heads");
  c.intermediate = mc.get_int("intermediate_size");
  c.max_position = mc.get_int("max_position_embeddings");
  c.type_vocab_size = mc.get_int("type_vocab_size");
  c.layer_norm_eps = mc.get_double("layer_norm_eps");
  validate(c, mc.source_path);
  text::WordPieceOptions opts;
  opts.lowercase = mc.get_string("lowercase") == "true";
  if (mc.has("strip_accents")) opts.strip_accents = mc.get_string("strip_accents") == "true";
  opts.tokenize_chinese_chars = mc.get_string("tokenize_chinese_chars") == "true";
  opts.max_input_chars_per_word = size_t(mc.get_int("max_input_chars_per_word", 100));
  auto tokenizer = text::WordPieceTokenizer::from_vocab_txt((fs::path(dir) / "vocab.txt").string(), opts);
  VERITY_CHECK(int64_t(tokenizer.vocab_size()) == c.vocab_size, FormatError, dir,
               "/vocab.txt: ", tokenizer.vocab_size(), " tokens but ", mc.source_path,
               " says vocab_size=", c.vocab_size);
  auto impl = std::make_unique<BertEncoder::Impl>(BertEncoder::Impl{
      detail::BertModel(c), std::move(tokenizer), mc.name, mc.pooling, dir, mc.max_length});
  SafetensorsFile weights((fs::path(dir) / kModelWeightsFile).string());
  load_weights(impl->model, weights, cat(mc.source_path, ": dim=", mc.dim, " vocab_size=",
                                         c.vocab_size, " intermediate_size=", c.intermediate));
  return impl;
}

}  // namespace

BertEncoder::BertEncoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  VERITY_ASSERT(impl_ && impl_->model);
  impl_->model->eval();
  VERITY_CHECK(int64_t(impl_->tokenizer.vocab_size()) <= impl_->model->config.vocab_size, ConfigError,
               impl_->source, ": tokenizer has ", impl_->tokenizer.vocab_size(),
               " tokens but the embedding matrix only ", impl_->model->config.vocab_size, " rows");
  VERITY_CHECK(impl_->max_length >= 2 && int64_t(impl_->max_length) <= impl_->model->config.max_position,
               ConfigError, impl_->source, ": max_length ", impl_->max_length,
               " must be in [2, max_position_embeddings=", impl_->model->config.max_position, "]");
}

BertEncoder::~BertEncoder() = default;

std::string BertEncoder::spec() const { return "bert:" + impl_->source; }
size_t BertEncoder::dim() const { return size_t(impl_->model->config.hidden); }
const text::WordPieceTokenizer& BertEncoder::tokenizer() const { return impl_->tokenizer; }
const std::string& BertEncoder::pooling() const { return impl_->pooling; }
size_t BertEncoder::max_length() const { return impl_->max_length; }

Encoded BertEncoder::encode(std::span<const std::string> texts, const EncodeOptions& opts) const {
  if (opts.threads > 0) torch::set_num_threads(opts.threads);
  detail::BertModel model = impl_->model;  // shared handle; forward() is non-const
  size_t max_length = impl_->max_length;
  if (opts.max_length > 0)
    max_length = std::min(opts.max_length, size_t(model->config.max_position));
  VERITY_CHECK(max_length >= 2, ConfigError, "bert: max_length ", opts.max_length,
               " leaves no room for [CLS] and [SEP]");
  const size_t n = texts.size(), H = dim(), batch_size = std::max<size_t>(1, opts.batch_size);
  std::vector<text::WordPieceEncoding> toks(n);
  size_t T = 0;
  for (size_t i = 0; i < n; ++i) {
    toks[i] = impl_->tokenizer.encode(texts[i], max_length);
    T = std::max(T, toks[i].ids.size());
  }
  // Longest first, ties in input order: batches hold similar lengths and the
  // batch composition (hence the floating-point result) is deterministic.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return toks[a].ids.size() > toks[b].ids.size(); });

  Encoded out;
  out.batch = n;
  out.max_tokens = T;
  out.dim = H;
  out.pooled.assign(n * H, 0.f);
  out.mask.assign(n * T, 0);
  if (opts.with_tokens) {
    out.tokens.assign(n * T * H, 0.f);
    out.token_strings.resize(n);
  }
  torch::InferenceMode inference;
  for (size_t start = 0; start < n; start += batch_size) {
    check_interrupt();
    const size_t bn = std::min(batch_size, n - start);
    const size_t tb = toks[order[start]].ids.size();
    std::vector<const std::vector<int32_t>*> rows;
    for (size_t b = 0; b < bn; ++b) rows.push_back(&toks[order[start + b]].ids);
    const auto [ids, mask] = detail::pad_batch(rows, int64_t(impl_->tokenizer.pad_id()));
    torch::Tensor hidden = model->forward(ids, mask);  // [bn, tb, H]
    torch::Tensor pooled = detail::pool_hidden(hidden, mask, impl_->pooling);
    if (opts.normalize) pooled = pooled / pooled.norm(2, {-1}, true).clamp_min(1e-12);
    pooled = pooled.contiguous();
    hidden = hidden.contiguous();
    const float* pp = pooled.data_ptr<float>();
    const float* hp = hidden.data_ptr<float>();
    for (size_t b = 0; b < bn; ++b) {
      const size_t row = order[start + b];
      const auto& e = toks[row];
      std::copy(pp + b * H, pp + (b + 1) * H, out.pooled.begin() + ptrdiff_t(row * H));
      std::fill(out.mask.begin() + ptrdiff_t(row * T), out.mask.begin() + ptrdiff_t(row * T + e.ids.size()), 1);
      if (opts.with_tokens) {
        std::copy(hp + b * tb * H, hp + (b * tb + e.ids.size()) * H,
                  out.tokens.begin() + ptrdiff_t(row * T * H));
        out.token_strings[row] = e.tokens;
      }
    }
  }
  return out;
}

std::unique_ptr<BertEncoder> load_bert(const std::string& dir, const BertLoadOptions& options) {
  auto impl = is_model_dir(dir) ? load_verity(dir) : load_hf(dir);
  if (!options.pooling.empty()) {
    check_pooling(options.pooling, "load_bert(" + dir + ")");
    impl->pooling = options.pooling;
  }
  if (options.max_length > 0) impl->max_length = options.max_length;
  return std::make_unique<BertEncoder>(std::move(impl));
}

void save_bert(const BertEncoder& encoder, const std::string& dir, const std::string& name) {
  const auto& impl = encoder.impl();
  const auto& c = impl.model->config;
  const auto& wp = impl.tokenizer.options();
  ModelDirWriter out(dir);
  {
    ModelConfig mc;
    mc.name = name.empty() ? impl.name : name;
    mc.architecture = kArchitecture;
    mc.pooling = impl.pooling;
    mc.dim = size_t(c.hidden);
    mc.max_length = impl.max_length;
    mc.extra = {{"vocab_size", std::to_string(c.vocab_size)},
                {"num_layers", std::to_string(c.layers)},
                {"num_heads", std::to_string(c.heads)},
                {"intermediate_size", std::to_string(c.intermediate)},
                {"max_position_embeddings", std::to_string(c.max_position)},
                {"type_vocab_size", std::to_string(c.type_vocab_size)},
                {"layer_norm_eps", cat(std::scientific, std::setprecision(17), c.layer_norm_eps)},
                {"lowercase", wp.lowercase ? "true" : "false"},
                {"tokenize_chinese_chars", wp.tokenize_chinese_chars ? "true" : "false"},
                {"max_input_chars_per_word", std::to_string(wp.max_input_chars_per_word)},
                {"tokenizer", "vocab.txt"}};
    if (wp.strip_accents) mc.extra["strip_accents"] = *wp.strip_accents ? "true" : "false";
    VERITY_CHECK(int64_t(impl.tokenizer.vocab_size()) == c.vocab_size && wp.unk_token == "[UNK]" &&
                     wp.continuing_subword_prefix == "##",
                 Unsupported, "save_bert: the tokenizer (", impl.tokenizer.vocab_size(),
                 " tokens) cannot be stored as a standard vocab.txt for ", c.vocab_size,
                 " embedding rows");
    impl.tokenizer.save_vocab_txt(out.file("vocab.txt"));
    std::vector<torch::Tensor> keep;
    std::vector<TensorToWrite> tensors;
    for (const auto& p : impl.model->named_parameters(true)) {
      keep.push_back(p.value().detach().to(torch::kCPU, torch::kFloat).contiguous());
      const auto& t = keep.back();
      tensors.push_back(f32_tensor(p.key(), t.sizes().vec(),
                                   std::span<const float>(t.data_ptr<float>(), size_t(t.numel()))));
    }
    write_safetensors(out.file(kModelWeightsFile), tensors, {{"format", "pt"}});
    write_model_config(out.staging_dir(), mc);
  }
  out.commit();
}

}  // namespace verity::encode
