// The only translation unit of the verify module that includes torch.
#include "verify/learned.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/section_file.hpp"
#include "verify/detail/learned_modules.hpp"

namespace verity::verify {

namespace detail {

MapBatch make_map_batch(std::span<const SimilarityMap* const> maps, size_t map_size,
                        size_t multiple, size_t canvas) {
  size_t h = canvas, w = canvas;
  if (canvas == 0) {
    size_t max_rows = 1, max_cols = 1;
    for (const auto* m : maps) {
      max_rows = std::max(max_rows, std::min(m->rows(), map_size));
      max_cols = std::max(max_cols, std::min(m->cols(), map_size));
    }
    auto round_up = [&](size_t n) { return std::min(map_size, (n + multiple - 1) / multiple * multiple); };
    h = round_up(max_rows);
    w = round_up(max_cols);
  }
  const auto b = int64_t(maps.size());
  MapBatch batch{torch::zeros({b, int64_t(h), int64_t(w)}),
                 torch::zeros({b, int64_t(h), int64_t(w)})};
  float* values = batch.values.data_ptr<float>();
  float* mask = batch.mask.data_ptr<float>();
  for (size_t k = 0; k < maps.size(); ++k) {
    const auto& m = *maps[k];
    const size_t rows = std::min({m.rows(), map_size, h}), cols = std::min({m.cols(), map_size, w});
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j) {
        values[(k * h + i) * w + j] = m.at(i, j);
        mask[(k * h + i) * w + j] = 1.0f;
      }
  }
  return batch;
}

CnnNetImpl::CnnNetImpl(const CnnConfig& c) {
  namespace nn = torch::nn;
  conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, c.channels[0], 3).padding(1)));
  conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(c.channels[0], c.channels[1], 3).padding(1)));
  conv3 = register_module("conv3", nn::Conv2d(nn::Conv2dOptions(c.channels[1], c.channels[2], 3).padding(1)));
  mean_max = c.pool == "mean_max";
  head = register_module("head", nn::Linear(c.channels[2] * (mean_max ? 2 : 1), 1));
}

torch::Tensor CnnNetImpl::forward(const torch::Tensor& values, const torch::Tensor& mask) {
  auto m = mask.unsqueeze(1);  // [B,1,H,W]
  auto v = values.unsqueeze(1) * m;
  const auto outside = m.eq(0);
  auto masked = v.masked_fill(outside, -INFINITY);
  // Row/column maxima over real cells; all-padding rows/columns give -inf → 0.
  auto row_max = masked.amax(3, true);
  row_max = row_max.masked_fill(row_max.isinf(), 0);
  auto col_max = masked.amax(2, true);
  col_max = col_max.masked_fill(col_max.isinf(), 0);
  auto x = torch::cat({v, row_max.expand_as(v) * m, col_max.expand_as(v) * m}, 1);
  x = torch::relu(conv1(x)) * m;
  x = torch::max_pool2d(x, 2);
  m = torch::max_pool2d(m, 2);
  x = torch::relu(conv2(x)) * m;
  x = torch::max_pool2d(x, 2);
  m = torch::max_pool2d(m, 2);
  x = torch::relu(conv3(x)) * m;
  auto pooled = x.sum({2, 3}) / m.sum({2, 3}).clamp_min(1.0);  // masked global mean [B,C]
  // After ReLU and re-masking every activation is >= 0 and padding is 0, so a
  // plain max over the canvas is the masked max.
  if (mean_max) pooled = torch::cat({pooled, x.amax({2, 3})}, 1);
  return head(pooled).squeeze(1);
}

VitBlockImpl::VitBlockImpl(int64_t dim, int64_t heads_, int64_t mlp_dim) : heads(heads_) {
  namespace nn = torch::nn;
  norm1 = register_module("norm1", nn::LayerNorm(nn::LayerNormOptions({dim})));
  qkv = register_module("qkv", nn::Linear(dim, 3 * dim));
  proj = register_module("proj", nn::Linear(dim, dim));
  norm2 = register_module("norm2", nn::LayerNorm(nn::LayerNormOptions({dim})));
  fc1 = register_module("fc1", nn::Linear(dim, mlp_dim));
  fc2 = register_module("fc2", nn::Linear(mlp_dim, dim));
}

torch::Tensor VitBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& key_valid) {
  const auto b = x.size(0), n = x.size(1), d = x.size(2), dh = d / heads;
  auto qkv_out = qkv(norm1(x)).view({b, n, 3, heads, dh}).permute({2, 0, 3, 1, 4});
  auto q = qkv_out[0], k = qkv_out[1], v = qkv_out[2];  // [B, heads, N, dh]
  auto att = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(dh));
  att = att.masked_fill(key_valid.logical_not().view({b, 1, 1, n}), -INFINITY);
  att = torch::softmax(att, -1);
  auto o = torch::matmul(att, v).transpose(1, 2).reshape({b, n, d});
  auto y = x + proj(o);
  return y + fc2(torch::gelu(fc1(norm2(y))));
}

VitNetImpl::VitNetImpl(const VitConfig& c) : config(c) {
  namespace nn = torch::nn;
  const auto d = int64_t(c.dim), grid = int64_t(c.map_size / c.patch);
  embed = register_module("embed", nn::Linear(int64_t(2 * c.patch * c.patch), d));
  cls = register_parameter("cls", torch::randn({1, 1, d}) * 0.02);
  cls_pos = register_parameter("cls_pos", torch::randn({1, 1, d}) * 0.02);
  pos = register_parameter("pos", torch::randn({1, grid * grid, d}) * 0.02);
  for (size_t l = 0; l < c.layers; ++l)
    blocks.push_back(register_module("block" + std::to_string(l),
                                     VitBlock(d, int64_t(c.heads), int64_t(c.mlp_dim))));
  norm = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({d})));
  head = register_module("head", nn::Linear(d, 1));
}

torch::Tensor VitNetImpl::forward(const torch::Tensor& values, const torch::Tensor& mask) {
  const auto b = values.size(0), h = values.size(1), w = values.size(2);
  const auto p = int64_t(config.patch), nh = h / p, nw = w / p;
  const auto grid = int64_t(config.map_size / config.patch);
  auto patches = [&](const torch::Tensor& t) {
    return t.view({b, nh, p, nw, p}).permute({0, 1, 3, 2, 4}).reshape({b, nh * nw, p * p});
  };
  auto mp = patches(mask);
  auto tokens = embed(torch::cat({patches(values) * mp, mp}, 2));
  // Positional embeddings of the patches' places on the full map_size grid.
  auto rows = torch::arange(nh, torch::kLong).unsqueeze(1) * grid;
  auto cols = torch::arange(nw, torch::kLong).unsqueeze(0);
  tokens = tokens + pos.index_select(1, (rows + cols).reshape({-1}));
  auto x = torch::cat({(cls + cls_pos).expand({b, 1, int64_t(config.dim)}), tokens}, 1);
  auto key_valid = torch::cat({torch::ones({b, 1}, torch::kBool), mp.amax(2).gt(0)}, 1);
  for (auto& block : blocks) x = block(x, key_valid);
  return head(norm(x.select(1, 0))).squeeze(1);
}

void write_parameters(SectionWriter& out, torch::nn::Module& module) {
  ByteWriter names;
  std::vector<float> data;
  const auto params = module.named_parameters(true);
  names.write<uint32_t>(uint32_t(params.size()));
  for (const auto& item : params) {
    const auto t = item.value().detach().to(torch::kFloat).contiguous();
    names.write_string(item.key());
    names.write<uint32_t>(uint32_t(t.dim()));
    for (auto s : t.sizes()) names.write<int64_t>(s);
    data.insert(data.end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  }
  out.add("PNAM", names);
  out.add_array("PDAT", std::span<const float>(data));
}

std::string shape_string(torch::IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

void read_parameters(const SectionFile& file, torch::nn::Module& module, const std::string& kind) {
  const std::string& path = file.path();
  auto params = module.named_parameters(true);
  auto names = file.reader("PNAM");
  const auto data = file.array<float>("PDAT");
  const auto count = names.read<uint32_t>();
  VERITY_CHECK(count == params.size(), FormatError, path, ": ", count, " parameters stored, the ",
               kind, " config has ", params.size());
  size_t offset = 0;
  torch::NoGradGuard no_grad;
  for (uint32_t p = 0; p < count; ++p) {
    const std::string name = names.read_string();
    const auto ndim = names.read<uint32_t>();
    VERITY_CHECK(ndim <= 8, FormatError, path, ": parameter '", name, "' claims ", ndim, " dims");
    std::vector<int64_t> shape(ndim);
    for (auto& s : shape) s = names.read<int64_t>();
    auto* target = params.find(name);
    VERITY_CHECK(target != nullptr, FormatError, path, ": parameter '", name,
                 "' is not part of the ", kind, " model");
    VERITY_CHECK(torch::IntArrayRef(shape) == target->sizes(), FormatError, path, ": parameter '",
                 name, "' has shape ", shape_string(shape), " in the file, the ", kind,
                 " config expects ", shape_string(target->sizes()));
    const auto numel = size_t(target->numel());
    VERITY_CHECK(offset + numel <= data.size(), FormatError, path, ": PDAT ends inside parameter '",
                 name, "'");
    for (size_t i = offset; i < offset + numel; ++i)
      VERITY_CHECK(std::isfinite(data[i]), FormatError, path, ": parameter '", name,
                   "' holds a non-finite value");
    auto src = torch::from_blob(const_cast<float*>(data.data() + offset), target->sizes(),
                                torch::kFloat);
    target->copy_(src);
    offset += numel;
  }
  VERITY_CHECK(offset == data.size(), FormatError, path, ": PDAT holds ", data.size(),
               " floats, the parameters use ", offset);
}

}  // namespace detail

namespace {

constexpr std::string_view kMagic = "VVRF";
constexpr uint32_t kVersion = 1;
constexpr size_t kBatch = 64;

void validate(const CnnConfig& c) {
  VERITY_CHECK(c.map_size >= 4 && c.map_size % 4 == 0 && c.map_size <= 4096, ConfigError,
               "f3 config: map_size=", c.map_size, " must be a multiple of 4 in [4, 4096]");
  VERITY_CHECK(c.channels.size() == 3, ConfigError, "f3 config: channels must list 3 layers, got ",
               c.channels.size());
  VERITY_CHECK(c.pool == "mean" || c.pool == "mean_max", ConfigError, "f3 config: pool '", c.pool,
               "' is unknown (valid: mean, mean_max)");
  for (auto ch : c.channels)
    VERITY_CHECK(ch > 0 && ch <= 4096, ConfigError, "f3 config: channel count ", ch,
                 " must be in [1, 4096]");
}

void validate(const VitConfig& c) {
  VERITY_CHECK(c.patch > 0 && c.map_size % c.patch == 0 && c.map_size <= 4096, ConfigError,
               "f4 config: map_size=", c.map_size, " must be a multiple of patch=", c.patch,
               " and at most 4096");
  VERITY_CHECK(c.dim > 0 && c.heads > 0 && c.dim % c.heads == 0, ConfigError, "f4 config: heads=",
               c.heads, " must divide dim=", c.dim);
  VERITY_CHECK(c.layers > 0 && c.layers <= 64 && c.mlp_dim > 0 && c.dim <= 8192 &&
                   c.mlp_dim <= 32768,
               ConfigError, "f4 config: layers=", c.layers, ", dim=", c.dim, ", mlp_dim=",
               c.mlp_dim, " out of range");
}

// Runs fn with torch's global CPU generator seeded, then restores the
// generator, so building a verifier never perturbs a caller's random stream.
// (The generator's mutex is not held: torch's initializers take it themselves.)
template <typename Fn>
void with_seed(uint64_t seed, Fn&& fn) {
  auto generator = at::detail::getDefaultCPUGenerator();
  const auto saved = generator.get_state();
  generator.set_current_seed(seed);
  try {
    fn();
  } catch (...) {
    generator.set_state(saved);
    throw;
  }
  generator.set_state(saved);
}

nlohmann::json config_json(const LearnedVerifier::Impl& impl) {
  if (impl.kind == "f3")
    return {{"map_size", impl.cnn_config.map_size},
            {"channels", impl.cnn_config.channels},
            {"pool", impl.cnn_config.pool}};
  const auto& c = impl.vit_config;
  return {{"map_size", c.map_size}, {"patch", c.patch},   {"dim", c.dim},
          {"layers", c.layers},     {"heads", c.heads},   {"mlp_dim", c.mlp_dim}};
}

}  // namespace

torch::nn::Module& LearnedVerifier::Impl::module() {
  if (kind == "f3") return *cnn;
  return *vit;
}

size_t LearnedVerifier::Impl::map_size() const {
  return kind == "f3" ? cnn_config.map_size : vit_config.map_size;
}

size_t LearnedVerifier::Impl::canvas_multiple() const {
  return kind == "f3" ? 4 : vit_config.patch;
}

torch::Tensor LearnedVerifier::Impl::forward_logits(const detail::MapBatch& batch) {
  if (kind == "f3") return cnn->forward(batch.values, batch.mask);
  return vit->forward(batch.values, batch.mask);
}

LearnedVerifier::LearnedVerifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LearnedVerifier::~LearnedVerifier() = default;

std::unique_ptr<LearnedVerifier> LearnedVerifier::untrained_cnn(const CnnConfig& config,
                                                                uint64_t seed) {
  validate(config);
  auto impl = std::make_unique<Impl>();
  impl->kind = "f3";
  impl->cnn_config = config;
  with_seed(seed, [&] { impl->cnn = detail::CnnNet(config); });
  impl->cnn->eval();
  impl->provenance = cat("untrained: random init, seed ", seed);
  return std::unique_ptr<LearnedVerifier>(new LearnedVerifier(std::move(impl)));
}

std::unique_ptr<LearnedVerifier> LearnedVerifier::untrained_vit(const VitConfig& config,
                                                                uint64_t seed) {
  validate(config);
  auto impl = std::make_unique<Impl>();
  impl->kind = "f4";
  impl->vit_config = config;
  with_seed(seed, [&] { impl->vit = detail::VitNet(config); });
  impl->vit->eval();
  impl->provenance = cat("untrained: random init, seed ", seed);
  return std::unique_ptr<LearnedVerifier>(new LearnedVerifier(std::move(impl)));
}

float LearnedVerifier::score(const SimilarityMap& map) const {
  return score_batch(std::span<const SimilarityMap>(&map, 1))[0];
}

std::vector<float> LearnedVerifier::forward_batch(std::span<const SimilarityMap> maps, bool sigmoid) const {
  std::vector<float> out(maps.size(), 0.0f);  // empty maps score 0
  std::vector<size_t> todo;
  for (size_t i = 0; i < maps.size(); ++i)
    if (!maps[i].empty()) todo.push_back(i);
  c10::InferenceMode inference;
  for (size_t begin = 0; begin < todo.size(); begin += kBatch) {
    const size_t end = std::min(todo.size(), begin + kBatch);
    std::vector<const SimilarityMap*> chunk;
    for (size_t k = begin; k < end; ++k) chunk.push_back(&maps[todo[k]]);
    auto batch = detail::make_map_batch(chunk, impl_->map_size(), impl_->canvas_multiple());
    auto logits = impl_->forward_logits(batch).contiguous();
    // Maps hold cosines, so only weights far outside anything training produces
    // (a damaged file that still passes its checksums) overflow to inf or NaN.
    const float* l = logits.data_ptr<float>();
    for (size_t k = 0; k < end - begin; ++k)
      VERITY_CHECK(std::isfinite(l[k]), Error, spec(), ": the network's output is not finite (",
                   l[k], "); the weights are out of range");
    auto values = (sigmoid ? torch::sigmoid(logits) : logits).contiguous();
    const float* v = values.data_ptr<float>();
    for (size_t k = begin; k < end; ++k) out[todo[k]] = v[k - begin];
  }
  return out;
}

std::vector<float> LearnedVerifier::score_batch(std::span<const SimilarityMap> maps) const {
  return forward_batch(maps, true);
}

std::vector<float> LearnedVerifier::logit_batch(std::span<const SimilarityMap> maps) const {
  return forward_batch(maps, false);
}

std::string LearnedVerifier::spec() const {
  return impl_->kind + ":" + (impl_->path.empty() ? "<unsaved>" : impl_->path);
}

bool LearnedVerifier::is_trained() const { return impl_->trained; }
std::string LearnedVerifier::kind() const { return impl_->kind; }
const std::string& LearnedVerifier::provenance() const { return impl_->provenance; }
size_t LearnedVerifier::map_size() const { return impl_->map_size(); }

void LearnedVerifier::mark_trained(std::string provenance) {
  VERITY_CHECK(!provenance.empty(), ConfigError,
               "mark_trained: provenance must say how the weights were trained");
  impl_->trained = true;
  impl_->provenance = std::move(provenance);
}

size_t LearnedVerifier::parameter_count() const {
  size_t n = 0;
  for (const auto& p : impl_->module().parameters()) n += size_t(p.numel());
  return n;
}

void LearnedVerifier::save(const std::string& path) const {
  nlohmann::json conf = {{"kind", impl_->kind},
                         {"config", config_json(*impl_)},
                         {"trained", impl_->trained},
                         {"provenance", impl_->provenance}};
  SectionWriter out(path, kMagic, kVersion);
  const std::string conf_text = conf.dump(2);
  out.add("CONF", conf_text.data(), conf_text.size());
  detail::write_parameters(out, impl_->module());
  out.commit();
  impl_->path = path;
}

std::unique_ptr<LearnedVerifier> LearnedVerifier::load(const std::string& path,
                                                       std::string_view expected_kind) {
  SectionFile file(path, kMagic, kVersion);
  const auto conf_bytes = file.section("CONF");
  nlohmann::json conf;
  std::unique_ptr<LearnedVerifier> verifier;
  std::string kind;
  try {
    conf = nlohmann::json::parse(std::string_view(reinterpret_cast<const char*>(conf_bytes.data()),
                                                  conf_bytes.size()));
    kind = conf.at("kind").get<std::string>();
    const auto& c = conf.at("config");
    // Exactly the keys this build knows: a stray key means a different model.
    const std::vector<std::string> keys =
        kind == "f3" ? std::vector<std::string>{"channels", "map_size", "pool"}
                     : std::vector<std::string>{"dim", "heads", "layers", "map_size", "mlp_dim", "patch"};
    for (const auto& item : c.items())
      VERITY_CHECK(std::find(keys.begin(), keys.end(), item.key()) != keys.end(), FormatError,
                   path, ": CONF config key '", item.key(), "' is unknown for ", kind);
    if (kind == "f3") {
      CnnConfig cc;
      cc.map_size = c.at("map_size").get<size_t>();
      cc.channels = c.at("channels").get<std::vector<int64_t>>();
      if (c.contains("pool")) cc.pool = c.at("pool").get<std::string>();
      verifier = untrained_cnn(cc, 0);
    } else if (kind == "f4") {
      VitConfig vc;
      vc.map_size = c.at("map_size").get<size_t>();
      vc.patch = c.at("patch").get<size_t>();
      vc.dim = c.at("dim").get<size_t>();
      vc.layers = c.at("layers").get<size_t>();
      vc.heads = c.at("heads").get<size_t>();
      vc.mlp_dim = c.at("mlp_dim").get<size_t>();
      verifier = untrained_vit(vc, 0);
    } else {
      throw FormatError(cat(path, ": CONF kind '", kind, "' is unknown (valid: f3, f4)"));
    }
    verifier->impl_->trained = conf.at("trained").get<bool>();
    verifier->impl_->provenance = conf.at("provenance").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": section 'CONF': ", e.what()));
  } catch (const ConfigError& e) {
    throw FormatError(cat(path, ": section 'CONF' holds an invalid config: ", e.what()));
  }
  VERITY_CHECK(expected_kind.empty() || expected_kind == kind, ConfigError, path, " holds an ",
               kind, " verifier, not ", expected_kind);

  detail::read_parameters(file, verifier->impl_->module(), kind);
  verifier->impl_->path = path;
  if (!verifier->impl_->trained)
    log("warning: ", path, ": ", kind, " weights are untrained (", verifier->impl_->provenance,
        "); its scores carry no relevance signal");
  return verifier;
}

}  // namespace verity::verify
