// F5 inference, weights files and the torch module (includes torch).
#include "verify/alignment_verifier.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "core/error.hpp"
#include "core/split_work.hpp"
#include "core/log.hpp"
#include "core/section_file.hpp"
#include "text/surface.hpp"
#include "verify/detail/alignment_modules.hpp"
#include "verify/detail/learned_modules.hpp"
#include "verify/kernels.hpp"

namespace verity::verify {
namespace {

constexpr std::string_view kMagic = "VALN";
constexpr uint32_t kVersion = 16;  // 2: lexicon features (LEXA); 3: pooled term in the calibration;
                                  // 4: linear pooled term and gate; 5: number words and negators
                                  // (LEXW); 6: negating clitics in LEXW; 7: the pooled head;
                                  // 8: spellings (LEXS); 9: a gate band; 10: a flip cap; 11: case folds
                                  // (FOLD); 12: a surface floor; 13: a name cap; 14: a transposition
                                  // cap; 15: a number cap; 16: whole words (config); 4-16 are
                                  // written only when used

// Feature groups (verify/alignment_features.hpp lists the features).
// 0 map, 1 identity, 2 pooled, 3 lexicon.
constexpr int kTokenGroup[kTokenFeatures] = {0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 3, 3};
constexpr int kPairGroup[kPairFeatures] = {2, 2, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 1, 1, 3, 3};
const char* const kGroupNames[4] = {"map", "identity", "pooled", "lexicon"};

bool uses_group(const AlignmentConfig& c, int group) {
  return std::find(c.inputs.begin(), c.inputs.end(), kGroupNames[group]) != c.inputs.end();
}

void validate(const AlignmentConfig& c) {
  VERITY_CHECK(c.hidden > 0 && c.hidden <= 1024 && c.mlp > 0 && c.mlp <= 4096, ConfigError,
               "f5 config: hidden=", c.hidden, ", mlp=", c.mlp, " out of range");
  VERITY_CHECK(c.token_embedding <= 256 && c.buckets > 0 && c.buckets <= (1u << 22), ConfigError,
               "f5 config: token_embedding=", c.token_embedding, ", buckets=", c.buckets, " out of range");
  VERITY_CHECK(!c.inputs.empty(), ConfigError,
               "f5 config: inputs must name at least one of map, identity, pooled, lexicon");
  for (const auto& name : c.inputs)
    VERITY_CHECK(std::find(std::begin(kGroupNames), std::end(kGroupNames), name) != std::end(kGroupNames),
                 ConfigError, "f5 config: input '", name, "' is unknown (valid: map, identity, pooled, lexicon)");
  VERITY_CHECK(c.pooled_head <= 64, ConfigError, "f5 config: pooled_head=", c.pooled_head, " out of range (0-64)");
  if (c.pooled_head > 0) {
    VERITY_CHECK(uses_group(c, 2), ConfigError, "f5 config: a pooled head needs the 'pooled' input");
    VERITY_CHECK(c.pooled_dim > 0 && c.pooled_dim <= 8192, ConfigError, "f5 config: pooled_dim=", c.pooled_dim,
                 " out of range (1-8192) for a pooled head");
  }
}

nlohmann::json config_json(const AlignmentConfig& c) {
  nlohmann::json j = {{"hidden", c.hidden}, {"token_embedding", c.token_embedding}, {"buckets", c.buckets},
                      {"mlp", c.mlp},       {"conv", c.conv},                       {"inputs", c.inputs}};
  // Only when present, so files without a head stay what older builds read.
  if (c.pooled_head > 0) j["pooled_head"] = c.pooled_head, j["pooled_dim"] = c.pooled_dim;
  if (c.fold_case) j["fold_case"] = true;
  if (c.whole_words) j["whole_words"] = true;
  return j;
}

AlignmentConfig config_from_json(const nlohmann::json& j, const std::string& path) {
  static const std::vector<std::string> keys = {"buckets",    "conv",       "fold_case",   "hidden",
                                                "inputs",     "mlp",        "pooled_dim",  "pooled_head",
                                                "token_embedding", "whole_words"};
  for (const auto& item : j.items())
    VERITY_CHECK(std::find(keys.begin(), keys.end(), item.key()) != keys.end(), FormatError, path,
                 ": CONF config key '", item.key(), "' is unknown for f5");
  AlignmentConfig c;
  c.hidden = j.at("hidden").get<size_t>();
  c.token_embedding = j.at("token_embedding").get<size_t>();
  c.buckets = j.at("buckets").get<size_t>();
  c.mlp = j.at("mlp").get<size_t>();
  c.conv = j.at("conv").get<bool>();
  c.inputs = j.at("inputs").get<std::vector<std::string>>();
  c.pooled_head = j.value("pooled_head", size_t(0));
  c.pooled_dim = j.value("pooled_dim", size_t(0));
  c.fold_case = j.value("fold_case", false);
  c.whole_words = j.value("whole_words", false);
  return c;
}

torch::Tensor direction_tensor(const std::vector<const DirectionFeatures*>& dirs, size_t buckets,
                               detail::DirectionBatch& out) {
  size_t longest = 1;
  for (const auto* d : dirs) longest = std::max(longest, d->length);
  const auto b = int64_t(dirs.size()), l = int64_t(longest), f = int64_t(kTokenFeatures);
  out.features = torch::zeros({b, l, f});
  out.mask = torch::zeros({b, l});
  out.buckets = torch::zeros({b, l}, torch::kLong);
  float* feat = out.features.data_ptr<float>();
  float* mask = out.mask.data_ptr<float>();
  int64_t* bucket = out.buckets.data_ptr<int64_t>();
  for (size_t k = 0; k < dirs.size(); ++k) {
    const auto& d = *dirs[k];
    std::copy(d.tokens.begin(), d.tokens.end(), feat + k * longest * kTokenFeatures);
    for (size_t i = 0; i < d.length; ++i) {
      mask[k * longest + i] = 1.0f;
      bucket[k * longest + i] = int64_t(d.ids[i] % buckets);
    }
  }
  return out.features;
}

// Splits a word-list section into "left<TAB>right" rows, with the section
// name and 1-based line in every error; `what` names the row's expected form.
template <class OnRow>
void read_tab_rows(const SectionFile& file, const std::string& path, const char* section, const char* what,
                   OnRow on_row) {
  const auto bytes = file.section(section);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  size_t line = 0, pos = 0;
  while (pos < text.size()) {
    ++line;
    const size_t end = text.find('\n', pos);
    VERITY_CHECK(end != std::string_view::npos, FormatError, path, ": ", section, " line ", line, " has no newline");
    const auto row = text.substr(pos, end - pos);
    const size_t tab = row.find('\t');
    const bool two_fields = tab != std::string_view::npos && tab > 0 && tab + 1 < row.size() &&
                            row.find('\t', tab + 1) == std::string_view::npos;
    VERITY_CHECK(two_fields && on_row(row.substr(0, tab), row.substr(tab + 1)), FormatError, path, ": ", section,
                 " line ", line, " is not ", what);
    pos = end + 1;
  }
}

// The FOLD section: a count, then (identity, folded identity) pairs.
text::CaseFolds read_case_folds(const SectionFile& file, const std::string& path) {
  VERITY_CHECK(file.version() >= 11 && file.has("FOLD"), FormatError, path,
               ": the config reads identities ignoring case (fold_case) but the file has no FOLD section");
  auto reader = file.reader("FOLD");
  const auto count = reader.read<uint64_t>();
  VERITY_CHECK(reader.remaining() % 8 == 0 && count == reader.remaining() / 8, FormatError, path, ": FOLD claims ",
               count, " folds, its ", reader.remaining(), " bytes after the count hold ", reader.remaining() / 8);
  std::vector<std::pair<uint32_t, uint32_t>> entries(count);
  for (auto& [identity, folded] : entries) identity = reader.read<uint32_t>(), folded = reader.read<uint32_t>();
  try {
    return text::CaseFolds::from_entries(entries);
  } catch (const ConfigError& e) {
    throw FormatError(cat(path, ": section 'FOLD': ", e.what()));
  }
}

Lexicon read_lexicon(const SectionFile& file, const std::string& path) {
  std::vector<std::pair<std::string, std::string>> words;
  read_tab_rows(file, path, "LEXA", "'word<TAB>word'", [&](std::string_view a, std::string_view b) {
    words.emplace_back(a, b);
    return true;
  });
  LexiconWords single;
  if (file.has("LEXW"))
    read_tab_rows(file, path, "LEXW", "'number<TAB>word', 'negator<TAB>word' or 'negating_clitic<TAB>piece'",
                  [&](std::string_view kind, std::string_view word) {
                    if (kind == "number") single.numbers.emplace_back(word);
                    else if (kind == "negator") single.negators.emplace_back(word);
                    else if (kind == "negating_clitic" && file.version() >= 6) single.negating_clitics.emplace_back(word);
                    else return false;
                    return true;
                  });
  LexiconSpellingLines spellings;  // the section as it is: the lexicon checks each line
  if (file.version() >= 8 && file.has("LEXS")) {
    const auto bytes = file.section("LEXS");
    spellings.text.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  try {
    return Lexicon(std::move(words), std::move(single), std::move(spellings));
  } catch (const ConfigError& e) {
    throw FormatError(cat(path, ": ", e.what()));
  }
}

}  // namespace

namespace detail {

AlignmentBatch make_alignment_batch(std::span<const AlignmentFeatures* const> items, const AlignmentConfig& config) {
  std::vector<const DirectionFeatures*> fwd, bwd;
  for (const auto* it : items) fwd.push_back(&it->forward), bwd.push_back(&it->backward);
  AlignmentBatch batch;
  direction_tensor(fwd, config.buckets, batch.forward);
  direction_tensor(bwd, config.buckets, batch.backward);
  batch.pair = torch::zeros({int64_t(items.size()), int64_t(kPairFeatures)});
  float* p = batch.pair.data_ptr<float>();
  for (size_t k = 0; k < items.size(); ++k) std::copy(items[k]->pair.begin(), items[k]->pair.end(), p + k * kPairFeatures);
  if (config.pooled_head > 0) {
    const size_t width = 2 * config.pooled_dim;
    batch.pooled = torch::zeros({int64_t(items.size()), int64_t(width)});
    float* q = batch.pooled.data_ptr<float>();
    for (size_t k = 0; k < items.size(); ++k) {
      const auto& v = items[k]->pooled;
      if (v.empty()) continue;
      VERITY_CHECK(v.size() == width, ConfigError, "f5: a pooled comparison of ", v.size(), " values, the head reads ",
                   width, " (pooled vectors of ", v.size() / 2, " dimensions, trained on ", config.pooled_dim, ")");
      std::copy(v.begin(), v.end(), q + k * width);
    }
  }
  return batch;
}

AlignNetImpl::AlignNetImpl(const AlignmentConfig& c) : config(c) {
  namespace nn = torch::nn;
  std::vector<float> tm(kTokenFeatures), pm(kPairFeatures);
  for (size_t i = 0; i < kTokenFeatures; ++i) tm[i] = uses_group(c, kTokenGroup[i]) ? 1.0f : 0.0f;
  for (size_t i = 0; i < kPairFeatures; ++i) pm[i] = uses_group(c, kPairGroup[i]) ? 1.0f : 0.0f;
  token_mask = register_buffer("token_mask", torch::tensor(tm));
  pair_mask = register_buffer("pair_mask", torch::tensor(pm));
  const bool identity = uses_group(c, 1);
  const int64_t emb = identity ? int64_t(c.token_embedding) : 0;
  if (emb > 0) {
    embedding = register_module("embedding", nn::Embedding(int64_t(c.buckets), emb));
    torch::NoGradGuard no_grad;
    embedding->weight.normal_(0, 0.01);
  }
  const int64_t h = int64_t(c.hidden), readings = int64_t(c.pooled_head);
  token_in = register_module("token_in", nn::Linear(int64_t(kTokenFeatures) + emb, h));
  if (c.conv) conv = register_module("conv", nn::Conv1d(nn::Conv1dOptions(h, h, 3).padding(1)));
  hidden = register_module("hidden", nn::Linear(6 * h + int64_t(kPairFeatures) + readings, int64_t(c.mlp)));
  out = register_module("out", nn::Linear(int64_t(c.mlp), 1));
  // A linear path from the pair scalars, so a pooled-cosine-like rule is
  // easy to express and the deep part only has to learn what it misses.
  pair_linear = register_module("pair_linear", nn::Linear(int64_t(kPairFeatures) + readings, 1));
  // Last, so that a network without a head draws the same initial weights as before.
  if (readings > 0) pooled_in = register_module("pooled_in", nn::Linear(2 * int64_t(c.pooled_dim), readings));
}

torch::Tensor AlignNetImpl::read_direction(const DirectionBatch& d) {
  auto x = d.features * token_mask;
  if (embedding) x = torch::cat({x, embedding(d.buckets)}, 2);
  auto m = d.mask.unsqueeze(2);  // [B, L, 1]
  auto h = torch::relu(token_in(x)) * m;
  if (conv) h = h + torch::relu(conv(h.transpose(1, 2))).transpose(1, 2) * m;
  const auto count = m.sum(1).clamp_min(1.0);
  auto mean = h.sum(1) / count;
  auto top = h.amax(1);  // activations are >= 0 and padding is 0
  auto w = uses_group(config, 1) ? d.features.slice(2, 3, 4) * m : m;
  auto weighted = (h * w).sum(1) / w.sum(1).clamp_min(1e-6);
  return torch::cat({mean, top, weighted}, 1);
}

torch::Tensor AlignNetImpl::pair_inputs(const AlignmentBatch& batch) {
  auto pair = batch.pair * pair_mask;
  if (pooled_in) pair = torch::cat({pair, pooled_in(batch.pooled)}, 1);
  return pair;
}

torch::Tensor AlignNetImpl::forward(const AlignmentBatch& batch) {
  auto a = read_direction(batch.forward), b = read_direction(batch.backward);
  auto pair = pair_inputs(batch);
  auto z = torch::cat({a + b, torch::max(a, b), pair}, 1);
  return (out(torch::relu(hidden(z))) + pair_linear(pair)).squeeze(1);
}

namespace {

// A torch Linear's weight [out, in] as [in, out], row-major.
std::vector<float> transposed_linear(const torch::Tensor& weight) {
  auto t = weight.detach().to(torch::kFloat).t().contiguous();
  return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
}

std::vector<float> values_of(const torch::Tensor& tensor) {
  auto t = tensor.detach().to(torch::kFloat).contiguous();
  return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
}

// Per-thread buffers of the inference network, reused across pairs.
struct Scratch {
  std::vector<float> x, padded, conv, hidden, z;
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

}  // namespace

uint64_t weights_identity(AlignNetImpl& net) {
  uint64_t id = 1469598103934665603ULL;
  auto mix = [&](uint64_t v) { id = (id ^ v) * 1099511628211ULL; };
  for (const auto& p : net.parameters()) {
    mix(reinterpret_cast<uintptr_t>(p.data_ptr()));
    mix(uint64_t(p._version()));
  }
  return id;
}

FastAlignNet::FastAlignNet(AlignNetImpl& net) : source(weights_identity(net)) {
  torch::NoGradGuard no_grad;
  features = kTokenFeatures;
  hidden = size_t(net.token_in->weight.size(0));
  embedding_dim = net.embedding ? size_t(net.embedding->weight.size(1)) : 0;
  buckets = net.config.buckets;
  mlp = size_t(net.hidden->weight.size(0));
  pooled_head = net.config.pooled_head;
  pooled_dim = net.config.pooled_dim;
  conv = bool(net.conv);
  idf_weighted = uses_group(net.config, 1);
  const auto token_mask = values_of(net.token_mask), pair_mask = values_of(net.pair_mask);
  w_in = transposed_linear(net.token_in->weight);  // [(F + E) × H]
  for (size_t c = 0; c < features; ++c)
    for (size_t o = 0; o < hidden; ++o) w_in[c * hidden + o] *= token_mask[c];
  b_in = values_of(net.token_in->bias);
  if (net.embedding) embedding = values_of(net.embedding->weight);
  if (conv) {
    // Conv1d weight [out, in, tap] as rows tap · H + in: the taps read tokens t-1, t, t+1.
    auto w = net.conv->weight.detach().to(torch::kFloat).contiguous();
    const float* src = w.data_ptr<float>();
    w_conv.assign(3 * hidden * hidden, 0.0f);
    for (size_t o = 0; o < hidden; ++o)
      for (size_t c = 0; c < hidden; ++c)
        for (size_t tap = 0; tap < 3; ++tap) w_conv[(tap * hidden + c) * hidden + o] = src[(o * hidden + c) * 3 + tap];
    b_conv = values_of(net.conv->bias);
  }
  w_hidden = transposed_linear(net.hidden->weight);  // [(6H + P + R) × MLP], R = pooled_head
  for (size_t p = 0; p < kPairFeatures; ++p)
    for (size_t o = 0; o < mlp; ++o) w_hidden[(6 * hidden + p) * mlp + o] *= pair_mask[p];
  b_hidden = values_of(net.hidden->bias);
  w_out = values_of(net.out->weight);
  b_out = net.out->bias.item<float>();
  w_pair = values_of(net.pair_linear->weight);
  for (size_t p = 0; p < kPairFeatures; ++p) w_pair[p] *= pair_mask[p];
  b_pair = net.pair_linear->bias.item<float>();
  if (net.pooled_in) {
    w_pooled = transposed_linear(net.pooled_in->weight);  // [2D × R]
    b_pooled = values_of(net.pooled_in->bias);
  }
}

void FastAlignNet::read_direction(const DirectionFeatures& d, float* out) const {
  const auto isa = kernels::best_isa();
  const size_t n = d.length, h = hidden, k_in = features + embedding_dim;
  auto& s = scratch();
  const float* x = d.tokens.data();
  if (embedding_dim > 0) {
    s.x.resize(n * k_in);
    for (size_t i = 0; i < n; ++i) {
      std::copy_n(d.tokens.data() + i * features, features, s.x.data() + i * k_in);
      std::copy_n(embedding.data() + (d.ids[i] % buckets) * embedding_dim, embedding_dim,
                  s.x.data() + i * k_in + features);
    }
    x = s.x.data();
  }
  // Token rows 1..n of `padded`, a zero row on each side for the convolution.
  s.padded.resize((n + 2) * h);
  std::fill_n(s.padded.data(), h, 0.0f);
  std::fill_n(s.padded.data() + (n + 1) * h, h, 0.0f);
  float* tokens = s.padded.data() + h;
  kernels::affine_rows(x, n, k_in, k_in, w_in.data(), b_in.data(), h, true, tokens, isa);
  if (conv) {
    s.conv.resize(n * h);
    kernels::affine_rows(s.padded.data(), n, h, 3 * h, w_conv.data(), b_conv.data(), h, true, s.conv.data(), isa);
    for (size_t i = 0; i < n * h; ++i) tokens[i] += s.conv[i];
  }
  float* mean = out;
  float* top = out + h;
  float* weighted = out + 2 * h;
  std::fill(out, out + 3 * h, 0.0f);  // activations are >= 0: 0 starts the max
  double weight_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const float* row = tokens + i * h;
    const float w = idf_weighted ? d.tokens[i * features + 3] : 1.0f;
    weight_sum += w;
    for (size_t c = 0; c < h; ++c) {
      mean[c] += row[c];
      top[c] = std::max(top[c], row[c]);
      weighted[c] += w * row[c];
    }
  }
  const float inv_n = 1.0f / float(std::max<size_t>(n, 1)), inv_w = float(1.0 / std::max(weight_sum, 1e-6));
  for (size_t c = 0; c < h; ++c) mean[c] *= inv_n, weighted[c] *= inv_w;
}

float FastAlignNet::logit(const AlignmentFeatures& f) const {
  const size_t h3 = 3 * hidden, pair_width = kPairFeatures + pooled_head, width = 6 * hidden + pair_width;
  auto& s = scratch();
  s.z.resize(width + h3);
  float* a = s.z.data();          // forward, then a + b
  float* b = s.z.data() + width;  // backward
  read_direction(f.forward, a);
  read_direction(f.backward, b);
  for (size_t c = 0; c < h3; ++c) {
    const float x = a[c], y = b[c];
    a[c] = x + y;
    a[h3 + c] = std::max(x, y);
  }
  float* pair = a + 2 * h3;
  std::copy(f.pair.begin(), f.pair.end(), pair);
  if (pooled_head > 0) {  // the head's readings follow the scalars; an unknown comparison reads as zeros
    float* readings = pair + kPairFeatures;
    // AlignmentVerifier::logits checked the vectors' size before scoring.
    if (f.pooled.empty()) std::copy(b_pooled.begin(), b_pooled.end(), readings);
    else
      kernels::affine_rows(f.pooled.data(), 1, 2 * pooled_dim, 2 * pooled_dim, w_pooled.data(), b_pooled.data(),
                           pooled_head, false, readings, kernels::best_isa());
  }
  s.hidden.resize(mlp);
  kernels::affine_rows(a, 1, width, width, w_hidden.data(), b_hidden.data(), mlp, true, s.hidden.data(),
                       kernels::best_isa());
  double z = double(b_out) + double(b_pair);
  for (size_t o = 0; o < mlp; ++o) z += double(s.hidden[o]) * w_out[o];
  for (size_t p = 0; p < pair_width; ++p) z += double(pair[p]) * w_pair[p];
  return float(z);
}

}  // namespace detail

std::shared_ptr<const detail::FastAlignNet> AlignmentVerifier::Impl::inference_net() const {
  std::lock_guard lock(fast_mutex);
  auto& module = *net.ptr();  // parameters() is not const in torch
  if (!fast || fast->source != detail::weights_identity(module)) fast = std::make_shared<detail::FastAlignNet>(module);
  return fast;
}

AlignmentVerifier::AlignmentVerifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AlignmentVerifier::~AlignmentVerifier() = default;

std::unique_ptr<AlignmentVerifier> AlignmentVerifier::untrained(const AlignmentConfig& config, IdfTable idf,
                                                                uint64_t seed, Lexicon lexicon) {
  validate(config);
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->idf = std::move(idf);
  impl->lexicon = std::move(lexicon);
  impl->tokens = TokenTable(impl->idf, impl->lexicon);
  auto generator = at::detail::getDefaultCPUGenerator();
  const auto saved = generator.get_state();
  generator.set_current_seed(seed);
  impl->net = detail::AlignNet(config);
  generator.set_state(saved);
  impl->net->eval();
  impl->provenance = cat("untrained: random init, seed ", seed);
  return std::unique_ptr<AlignmentVerifier>(new AlignmentVerifier(std::move(impl)));
}

namespace {
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Calibration::probability before the flip cap.
double capless_probability(const Calibration& c, float logit, double cosine, bool identity_signal) {
  double pooled = 0;
  if (std::isfinite(cosine)) {
    const double d = cosine - c.pooled_center;
    pooled = double(c.pooled_weight) * (c.pooled_form == Calibration::PooledForm::linear ? d : std::min(d, 0.0));
  }
  const double p = sigmoid(double(c.scale) * logit + pooled + c.bias);
  if (!c.gate) return p;
  const double own = sigmoid(double(c.gate->scale) * logit + c.gate->bias);
  if (!identity_signal && std::abs(own - double(c.gate->threshold)) < double(c.gate->band)) return p;
  return own < c.gate->threshold ? std::min(p, own) : std::max(p, double(c.gate->threshold));
}

// Calibration::probability, and whether the flip cap, the name cap, the
// transposition cap or the number cap lowered it or the surface floor raised it.
struct Calibrated {
  double probability = 0;
  bool capped = false, floored = false, name_capped = false, transposition_capped = false, number_capped = false;
};
Calibrated calibrated(const Calibration& c, float logit, double cosine, const RuleSignals& s) {
  Calibrated out{capless_probability(c, logit, cosine, s.identity_signal)};
  if (s.minimal_flip && out.probability > double(c.flip_cap)) out.probability = c.flip_cap, out.capped = true;
  if ((s.name_swap || s.kind_swap) && out.probability > double(c.name_cap))
    out.probability = c.name_cap, out.name_capped = true;
  if (s.transposition && out.probability > double(c.transposition_cap))
    out.probability = c.transposition_cap, out.transposition_capped = true;
  if (s.number_change && out.probability > double(c.number_cap))
    out.probability = c.number_cap, out.number_capped = true;
  if (s.surface_match && out.probability < double(c.surface_floor))
    out.probability = c.surface_floor, out.floored = true;
  return out;
}
}  // namespace

double Calibration::probability(float logit, double cosine, const RuleSignals& signals) const {
  return calibrated(*this, logit, cosine, signals).probability;
}

const char* pooled_form_name(Calibration::PooledForm form) {
  return form == Calibration::PooledForm::linear ? "linear" : "hinge";
}

Calibration::PooledForm parse_pooled_form(const std::string& text) {
  if (text == "hinge") return Calibration::PooledForm::hinge;
  if (text == "linear") return Calibration::PooledForm::linear;
  throw FormatError(cat("calibration pooled_form '", text, "' is unknown (valid: hinge, linear)"));
}

nlohmann::json calibration_json(const Calibration& c) {
  nlohmann::json gate = nullptr;
  if (c.gate) {
    gate = {{"scale", c.gate->scale}, {"bias", c.gate->bias}, {"threshold", c.gate->threshold}};
    if (c.gate->band > 0) gate["band"] = c.gate->band;
  }
  nlohmann::json out = {{"scale", c.scale},
                        {"bias", c.bias},
                        {"threshold", c.threshold},
                        {"pooled_weight", c.pooled_weight},
                        {"pooled_center", c.pooled_center},
                        {"pooled_form", pooled_form_name(c.pooled_form)},
                        {"gate", gate}};
  if (c.flip_cap < 1) out["flip_cap"] = c.flip_cap;
  if (c.surface_floor > 0) out["surface_floor"] = c.surface_floor;
  if (c.name_cap < 1) out["name_cap"] = c.name_cap;
  if (c.transposition_cap < 1) out["transposition_cap"] = c.transposition_cap;
  if (c.number_cap < 1) out["number_cap"] = c.number_cap;
  return out;
}

std::vector<float> AlignmentVerifier::logits(std::span<const SimilarityMap> maps,
                                             std::span<const PairContext> context,
                                             std::vector<uint8_t>* signals) const {
  VERITY_CHECK(context.empty() || context.size() == maps.size(), ConfigError, "f5: ", maps.size(), " maps but ",
               context.size(), " contexts");
  std::vector<float> out(maps.size(), 0.0f);
  if (signals) signals->assign(maps.size(), kIdentitySignalBit);
  std::vector<size_t> todo;
  for (size_t i = 0; i < maps.size(); ++i)
    if (!maps[i].empty()) todo.push_back(i);
  const auto net = impl_->inference_net();
  const PairContext none;
  if (net->pooled_head > 0)
    for (const auto& c : context)
      VERITY_CHECK((c.query_pooled.empty() || c.query_pooled.size() == net->pooled_dim) &&
                       (c.candidate_pooled.empty() || c.candidate_pooled.size() == net->pooled_dim),
                   ConfigError, "verifier ", spec(), ": pooled vectors of ", c.query_pooled.size(), " and ",
                   c.candidate_pooled.size(), " dimensions, its pooled head was trained on ", net->pooled_dim);
  // Which pieces are the same ignoring case (minimal_flip reads it) and how
  // they spell text: the tokenizers' vocabularies.
  const auto case_folds = text::registered_case_folds();
  const auto spellings =
      signals || impl_->config.whole_words ? text::registered_surface_spellings() : nullptr;
  const text::SurfaceSpellings* whole_words = impl_->config.whole_words ? spellings.get() : nullptr;
  // Pairs are independent: features and network split over the calling thread
  // and the stage-2 helper (core/split_work.hpp).
  split_work(todo.size(), 4, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {
      const size_t i = todo[size_t(k)];
      const auto& given = context.empty() ? none : context[i];
      PairContext ctx = given;
      std::vector<uint32_t> folded_query, folded_candidate;
      if (impl_->config.fold_case) {
        folded_query = impl_->folds.fold_all(given.query_ids);
        folded_candidate = impl_->folds.fold_all(given.candidate_ids);
        ctx.query_ids = folded_query, ctx.candidate_ids = folded_candidate;
      }
      auto features =
          alignment_features(maps[i], ctx, impl_->tokens, impl_->lexicon, case_folds.get(), whole_words);
      if (net->pooled_head > 0) features.pooled = pooled_comparison(ctx.query_pooled, ctx.candidate_pooled);
      out[i] = net->logit(features);
      if (signals) {
        const auto read = spellings->readings(given.query_ids, given.candidate_ids, case_folds.get());
        (*signals)[i] = uint8_t((identity_signal(features) ? kIdentitySignalBit : 0) |
                                (minimal_flip(features) || read.reversal ? kMinimalFlipBit : 0) |
                                (spellings->same_surface(given.query_ids, given.candidate_ids) || read.number_respelling
                                     ? kSurfaceMatchBit
                                     : 0) |
                                (read.name_swap ? kNameSwapBit : 0) | (read.transposition ? kTranspositionBit : 0) |
                                (read.number_change ? kNumberChangeBit : 0) | (read.kind_swap ? kKindSwapBit : 0));
      }
    }
  });
  return out;
}

std::vector<ScoreTrace> AlignmentVerifier::traced(std::span<const SimilarityMap> maps,
                                                  std::span<const PairContext> context, bool trace) const {
  VERITY_CHECK(context.size() == maps.size(), ConfigError, "verifier ", spec(), ": ", maps.size(), " maps but ",
               context.size(), " contexts");
  const Calibration c = impl_->calibration.value_or(Calibration{});
  std::vector<uint8_t> signals;
  const bool read_signals =
      trace || (c.gate && c.gate->band > 0) || c.flip_cap < 1 || c.surface_floor > 0 || c.name_cap < 1 ||
      c.transposition_cap < 1 || c.number_cap < 1;
  const auto z = logits(maps, context, read_signals ? &signals : nullptr);
  std::vector<ScoreTrace> out(maps.size());
  for (size_t i = 0; i < maps.size(); ++i) {
    if (maps[i].empty()) continue;
    auto& t = out[i];
    t.logit = z[i];
    t.identity_signal = signals.empty() || (signals[i] & kIdentitySignalBit) != 0;
    t.minimal_flip = !signals.empty() && (signals[i] & kMinimalFlipBit) != 0;
    t.surface_match = !signals.empty() && (signals[i] & kSurfaceMatchBit) != 0;
    t.name_swap = !signals.empty() && (signals[i] & kNameSwapBit) != 0;
    t.transposition = !signals.empty() && (signals[i] & kTranspositionBit) != 0;
    t.number_change = !signals.empty() && (signals[i] & kNumberChangeBit) != 0;
    t.kind_swap = !signals.empty() && (signals[i] & kKindSwapBit) != 0;
    const auto r = calibrated(c, z[i], context[i].pooled_cosine,
                              {t.identity_signal, t.minimal_flip, t.surface_match, t.name_swap, t.transposition,
                               t.number_change, t.kind_swap});
    t.probability = r.probability, t.capped = r.capped, t.floored = r.floored, t.name_capped = r.name_capped;
    t.transposition_capped = r.transposition_capped, t.number_capped = r.number_capped;
    if (trace) {
      const double own_scale = c.gate ? c.gate->scale : c.scale, own_bias = c.gate ? c.gate->bias : c.bias;
      t.network_probability = sigmoid(own_scale * double(z[i]) + own_bias);
    }
  }
  return out;
}

std::vector<float> AlignmentVerifier::score_pairs(std::span<const SimilarityMap> maps,
                                                  std::span<const PairContext> context) const {
  const auto traces = traced(maps, context, false);
  std::vector<float> out(traces.size());
  for (size_t i = 0; i < traces.size(); ++i) out[i] = float(traces[i].probability);
  return out;
}

std::vector<ScoreTrace> AlignmentVerifier::trace_pairs(std::span<const SimilarityMap> maps,
                                                      std::span<const PairContext> context) const {
  return traced(maps, context, true);
}

std::vector<float> AlignmentVerifier::score_batch(std::span<const SimilarityMap> maps) const {
  return score_pairs(maps, std::vector<PairContext>(maps.size()));
}

float AlignmentVerifier::score(const SimilarityMap& map) const {
  return score_batch(std::span<const SimilarityMap>(&map, 1))[0];
}

std::optional<float> AlignmentVerifier::default_threshold() const {
  if (!impl_->calibration) return std::nullopt;
  return impl_->calibration->threshold;
}

std::string AlignmentVerifier::encoder() const { return impl_->encoder; }
std::string AlignmentVerifier::spec() const { return "f5:" + (impl_->path.empty() ? "<unsaved>" : impl_->path); }
bool AlignmentVerifier::is_trained() const { return impl_->trained; }
const std::string& AlignmentVerifier::provenance() const { return impl_->provenance; }
const AlignmentConfig& AlignmentVerifier::config() const { return impl_->config; }
const IdfTable& AlignmentVerifier::idf() const { return impl_->idf; }
const Lexicon& AlignmentVerifier::lexicon() const { return impl_->lexicon; }
const std::optional<Calibration>& AlignmentVerifier::calibration() const { return impl_->calibration; }
void AlignmentVerifier::set_encoder(std::string identity) { impl_->encoder = std::move(identity); }

size_t AlignmentVerifier::add_antonyms(const std::vector<std::pair<std::string, std::string>>& pairs) {
  const auto& inputs = impl_->config.inputs;
  VERITY_CHECK(std::find(inputs.begin(), inputs.end(), "lexicon") != inputs.end(), ConfigError,
               "adding antonyms: ", impl_->path.empty() ? std::string("this F5 verifier") : impl_->path,
               " has no lexicon input (trained without it), so they would change nothing");
  auto words = impl_->lexicon.antonym_words();
  const size_t added = merge_antonyms(words, pairs);
  impl_->lexicon = Lexicon(std::move(words), impl_->lexicon.words(), LexiconSpellingLines{impl_->lexicon.spelling_lines()});
  impl_->tokens = TokenTable(impl_->idf, impl_->lexicon);
  return added;
}

void AlignmentVerifier::set_case_folds(text::CaseFolds folds) {
  VERITY_CHECK(impl_->config.fold_case || folds.empty(), ConfigError,
               "f5: case folds for a verifier that reads identities with case (fold_case is off)");
  impl_->folds = std::move(folds);
}

const text::CaseFolds& AlignmentVerifier::case_folds() const { return impl_->folds; }

void AlignmentVerifier::set_whole_words(bool whole_words) {
  const auto& inputs = impl_->config.inputs;
  VERITY_CHECK(!whole_words || std::find(inputs.begin(), inputs.end(), "lexicon") != inputs.end(), ConfigError,
               "whole words: ", impl_->path.empty() ? std::string("this F5 verifier") : impl_->path,
               " has no lexicon input (trained without it), so reading whole words would change nothing");
  impl_->config.whole_words = whole_words;
}

void AlignmentVerifier::set_spellings(LexiconSpellings spellings) {
  const auto& inputs = impl_->config.inputs;
  VERITY_CHECK(std::find(inputs.begin(), inputs.end(), "lexicon") != inputs.end(), ConfigError,
               "spelling the lexicon: ", impl_->path.empty() ? std::string("this F5 verifier") : impl_->path,
               " has no lexicon input (trained without it), so spellings would change nothing");
  impl_->lexicon = Lexicon(impl_->lexicon.antonym_words(), impl_->lexicon.words(), std::move(spellings));
  impl_->tokens = TokenTable(impl_->idf, impl_->lexicon);
}

void AlignmentVerifier::set_calibration(const Calibration& c) {
  VERITY_CHECK(std::isfinite(c.scale) && c.scale > 0 && std::isfinite(c.bias) && c.threshold > 0 && c.threshold < 1 &&
                   std::isfinite(c.pooled_weight) && c.pooled_weight >= 0 && std::isfinite(c.pooled_center),
               ConfigError, "f5 calibration: scale=", c.scale, " must be > 0, bias=", c.bias,
               " finite, threshold=", c.threshold, " in (0, 1), pooled_weight=", c.pooled_weight,
               " >= 0, pooled_center=", c.pooled_center, " finite");
  if (const auto& g = c.gate)
    VERITY_CHECK(std::isfinite(g->scale) && g->scale > 0 && std::isfinite(g->bias) && g->threshold > 0 &&
                     g->threshold < 1 && c.threshold == g->threshold && g->band >= 0 && g->band < 0.5f,
                 ConfigError, "f5 calibration gate: scale=", g->scale, " must be > 0, bias=", g->bias,
                 " finite, threshold=", g->threshold, " in (0, 1) and equal to the verdict threshold ", c.threshold,
                 " (the gate keeps the network's verdicts), band=", g->band, " in [0, 0.5)");
  VERITY_CHECK(c.flip_cap > 0 && c.flip_cap <= 1, ConfigError, "f5 calibration: flip_cap=", c.flip_cap,
               " must be in (0, 1]");
  VERITY_CHECK(c.surface_floor >= 0 && c.surface_floor < 1, ConfigError, "f5 calibration: surface_floor=",
               c.surface_floor, " must be in [0, 1)");
  VERITY_CHECK(c.name_cap > 0 && c.name_cap <= 1, ConfigError, "f5 calibration: name_cap=", c.name_cap,
               " must be in (0, 1]");
  VERITY_CHECK(c.transposition_cap > 0 && c.transposition_cap <= 1, ConfigError,
               "f5 calibration: transposition_cap=", c.transposition_cap, " must be in (0, 1]");
  VERITY_CHECK(c.number_cap > 0 && c.number_cap <= 1, ConfigError, "f5 calibration: number_cap=", c.number_cap,
               " must be in (0, 1]");
  impl_->calibration = c;
}

void AlignmentVerifier::mark_trained(std::string provenance) {
  VERITY_CHECK(!provenance.empty(), ConfigError, "mark_trained: provenance must say how the weights were trained");
  impl_->trained = true;
  impl_->provenance = std::move(provenance);
}

size_t AlignmentVerifier::parameter_count() const {
  size_t n = 0;
  for (const auto& p : impl_->net->parameters()) n += size_t(p.numel());
  return n;
}

void AlignmentVerifier::save(const std::string& path) const {
  nlohmann::json conf = {{"kind", "f5"},
                         {"config", config_json(impl_->config)},
                         {"trained", impl_->trained},
                         {"provenance", impl_->provenance},
                         {"encoder", impl_->encoder},
                         {"calibration", nullptr}};
  uint32_t version = 3;  // what older builds read, unless the calibration needs more
  if (const auto& c = impl_->calibration) {
    conf["calibration"] = calibration_json(*c);
    if (c->pooled_form == Calibration::PooledForm::linear || c->gate) version = 4;
  }
  if (!impl_->lexicon.words().empty()) version = 5;
  if (!impl_->lexicon.words().negating_clitics.empty()) version = 6;
  if (impl_->config.pooled_head > 0) version = 7;
  if (impl_->lexicon.has_spellings()) version = 8;
  if (const auto& c = impl_->calibration; c && c->gate && c->gate->band > 0) version = 9;
  if (const auto& c = impl_->calibration; c && c->flip_cap < 1) version = 10;
  if (impl_->config.fold_case) version = 11;
  if (const auto& c = impl_->calibration; c && c->surface_floor > 0) version = 12;
  if (const auto& c = impl_->calibration; c && c->name_cap < 1) version = 13;
  if (const auto& c = impl_->calibration; c && c->transposition_cap < 1) version = 14;
  if (const auto& c = impl_->calibration; c && c->number_cap < 1) version = 15;
  if (impl_->config.whole_words) version = 16;
  SectionWriter out(path, kMagic, version);
  const std::string conf_text = conf.dump(2);
  out.add("CONF", conf_text.data(), conf_text.size());
  std::vector<std::pair<uint32_t, uint32_t>> df(impl_->idf.document_frequency().begin(),
                                                impl_->idf.document_frequency().end());
  std::sort(df.begin(), df.end());
  ByteWriter idf;
  idf.write<uint64_t>(impl_->idf.documents());
  idf.write<uint64_t>(df.size());
  for (auto [token, n] : df) idf.write<uint32_t>(token), idf.write<uint32_t>(n);
  out.add("IDFT", idf);
  std::string words;
  for (const auto& [a, b] : impl_->lexicon.antonym_words()) words += a + "\t" + b + "\n";
  out.add("LEXA", words.data(), words.size());
  if (const auto& single = impl_->lexicon.words(); !single.empty()) {
    std::string lines;
    for (const auto& w : single.numbers) lines += "number\t" + w + "\n";
    for (const auto& w : single.negators) lines += "negator\t" + w + "\n";
    for (const auto& w : single.negating_clitics) lines += "negating_clitic\t" + w + "\n";
    out.add("LEXW", lines.data(), lines.size());
  }
  if (const auto& lines = impl_->lexicon.spelling_lines(); !lines.empty()) out.add("LEXS", lines.data(), lines.size());
  if (impl_->config.fold_case) {
    const auto entries = impl_->folds.entries();
    ByteWriter folds;
    folds.write<uint64_t>(entries.size());
    for (auto [identity, folded] : entries) folds.write<uint32_t>(identity), folds.write<uint32_t>(folded);
    out.add("FOLD", folds);
  }
  detail::write_parameters(out, *impl_->net);
  out.commit();
  impl_->path = path;
}

std::unique_ptr<AlignmentVerifier> AlignmentVerifier::load(const std::string& path) {
  SectionFile file(path, kMagic, kVersion);
  VERITY_CHECK(file.version() >= 2, FormatError, path, ": f5 weights of version ", file.version(),
               " predate the lexicon features (version 2); retrain it (scripts/train_verifier.sh)");
  const auto conf_bytes = file.section("CONF");
  std::unique_ptr<AlignmentVerifier> v;
  try {
    auto conf = nlohmann::json::parse(
        std::string_view(reinterpret_cast<const char*>(conf_bytes.data()), conf_bytes.size()));
    const auto kind = conf.at("kind").get<std::string>();
    VERITY_CHECK(kind == "f5", FormatError, path, ": CONF kind '", kind, "' is not f5");
    auto reader = file.reader("IDFT");
    const auto documents = reader.read<uint64_t>();
    const auto count = reader.read<uint64_t>();
    VERITY_CHECK(count <= file.section("IDFT").size() / 8, FormatError, path, ": IDFT claims ", count,
                 " tokens, more than the section holds");
    std::unordered_map<uint32_t, uint32_t> df;
    df.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      const auto token = reader.read<uint32_t>();
      df[token] = reader.read<uint32_t>();
      VERITY_CHECK(df[token] <= documents, FormatError, path, ": IDFT token ", token, " has document frequency ",
                   df[token], " over ", documents, " documents");
    }
    v = untrained(config_from_json(conf.at("config"), path), IdfTable(documents, std::move(df)), 0,
                  read_lexicon(file, path));
    v->impl_->trained = conf.at("trained").get<bool>();
    v->impl_->provenance = conf.at("provenance").get<std::string>();
    v->impl_->encoder = conf.at("encoder").get<std::string>();
    if (const auto& c = conf.at("calibration"); !c.is_null()) {
      Calibration cal;
      cal.scale = c.at("scale").get<float>(), cal.bias = c.at("bias").get<float>();
      cal.threshold = c.at("threshold").get<float>();
      if (file.version() >= 3)
        cal.pooled_weight = c.at("pooled_weight").get<float>(), cal.pooled_center = c.at("pooled_center").get<float>();
      if (file.version() >= 4) {
        try {
          cal.pooled_form = parse_pooled_form(c.at("pooled_form").get<std::string>());
        } catch (const FormatError& e) {
          throw FormatError(cat(path, ": section 'CONF': ", e.what()));
        }
        if (const auto& g = c.at("gate"); !g.is_null())
          cal.gate = CalibrationGate{g.at("scale").get<float>(), g.at("bias").get<float>(),
                                     g.at("threshold").get<float>(),
                                     file.version() >= 9 ? g.value("band", 0.0f) : 0.0f};
      }
      if (file.version() >= 10) cal.flip_cap = c.value("flip_cap", 1.0f);
      if (file.version() >= 12) cal.surface_floor = c.value("surface_floor", 0.0f);
      if (file.version() >= 13) cal.name_cap = c.value("name_cap", 1.0f);
      if (file.version() >= 14) cal.transposition_cap = c.value("transposition_cap", 1.0f);
      if (file.version() >= 15) cal.number_cap = c.value("number_cap", 1.0f);
      v->set_calibration(cal);
    }
    if (v->impl_->config.fold_case) v->impl_->folds = read_case_folds(file, path);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": section 'CONF': ", e.what()));
  } catch (const ConfigError& e) {
    throw FormatError(cat(path, ": section 'CONF' holds an invalid config: ", e.what()));
  }
  detail::read_parameters(file, *v->impl_->net, "f5");
  v->impl_->path = path;
  if (!v->impl_->trained)
    log("warning: ", path, ": f5 weights are untrained (", v->impl_->provenance, "); its scores carry no signal");
  return v;
}

bool is_alignment_verifier_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::string_view(magic, 4) == kMagic;
}

}  // namespace verity::verify
