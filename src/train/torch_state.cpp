// Shared torch helpers of the training loops (see train/detail/torch_state.hpp).
#include "train/detail/torch_state.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "core/io.hpp"
#include "encode/registry.hpp"
#include "encode/safetensors.hpp"
#include "encode/use_lite.hpp"

namespace verity::train::detail {

std::string module_bytes(torch::nn::Module& module) {
  torch::serialize::OutputArchive archive;
  module.save(archive);
  std::ostringstream os;
  archive.save_to(os);
  return os.str();
}

void load_module_bytes(torch::nn::Module& module, const std::string& bytes) {
  torch::serialize::InputArchive archive;
  std::istringstream is(bytes);
  archive.load_from(is);
  module.load(archive);
}

std::string optimizer_bytes(const torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream os;
  archive.save_to(os);
  return os.str();
}

void load_optimizer_bytes(torch::optim::Optimizer& optimizer, const std::string& bytes) {
  torch::serialize::InputArchive archive;
  std::istringstream is(bytes);
  archive.load_from(is);
  optimizer.load(archive);
}

std::string section_string(const SectionFile& f, std::string_view tag) {
  auto b = f.section(tag);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

std::vector<size_t> epoch_order(size_t n, uint64_t seed, size_t epoch) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + epoch + 1);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

UseLiteWeights load_use_lite_weights(const std::string& spec, std::string_view purpose) {
  UseLiteWeights t;
  t.encoder = encode::make_encoder(spec);
  VERITY_CHECK(dynamic_cast<const encode::UseLiteEncoder*>(t.encoder.get()) != nullptr, ConfigError,
               purpose, "; encoder ", t.encoder->spec(), " is not a use-lite model");
  const std::string prefix = "use-lite:";
  t.model_dir = t.encoder->spec().substr(prefix.size());
  t.config = encode::read_model_config(t.model_dir);
  encode::detail::UseLiteShape shape;
  shape.vocab_rows = t.config.get_int("vocab_rows");
  shape.embedding_dim = t.config.get_int("embedding_dim");
  shape.hidden = t.config.get_int("hidden");
  shape.ffn = t.config.get_int("ffn");
  shape.heads = t.config.get_int("heads");
  shape.layers = t.config.get_int("layers");
  shape.layer_norm_eps = t.config.get_double("layer_norm_eps");
  t.net = encode::detail::UseLiteNet(shape);
  const auto weights_path = (std::filesystem::path(t.model_dir) / encode::kModelWeightsFile).string();
  encode::SafetensorsFile file(weights_path);
  torch::NoGradGuard no_grad;
  auto load = [&](const std::string& name, torch::Tensor& target) {
    std::vector<int64_t> dims(target.sizes().begin(), target.sizes().end());
    encode::check_tensor_shape(file, name, dims, "the use-lite network");
    auto values = file.to_float32(name);
    target.copy_(torch::from_blob(values.data(), target.sizes(), torch::kFloat32));
  };
  for (auto& p : t.net->named_parameters(true)) load(p.key(), p.value());
  for (auto& b : t.net->named_buffers(true)) load(b.key(), b.value());
  t.max_length = std::min<size_t>(t.config.max_length, encode::kUseLiteMaxLength);
  return t;
}

std::vector<int64_t> use_lite_ids(const UseLiteWeights& w, const std::string& text) {
  auto raw = static_cast<const encode::UseLiteEncoder&>(*w.encoder).tokenize(text);
  if (raw.size() > w.max_length) raw.resize(w.max_length);
  return {raw.begin(), raw.end()};
}

encode::detail::UseLiteOutput run_use_lite(UseLiteWeights& w,
                                           const std::vector<const std::vector<int64_t>*>& texts) {
  int64_t longest = 1;
  for (const auto* v : texts) longest = std::max<int64_t>(longest, int64_t(v->size()));
  const auto u = int64_t(texts.size());
  auto ids = torch::zeros({u, longest}, torch::kLong);
  auto mask = torch::zeros({u, longest}, torch::kBool);
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<bool, 2>();
  for (int64_t k = 0; k < u; ++k) {
    const auto& v = *texts[size_t(k)];
    for (size_t j = 0; j < v.size(); ++j) {
      ids_a[k][int64_t(j)] = v[j];
      mask_a[k][int64_t(j)] = true;
    }
  }
  return w.net->forward(ids, mask);
}

void save_use_lite_weights(const UseLiteWeights& w, const std::string& dir, const std::string& name) {
  encode::ModelDirWriter writer(dir);
  std::vector<torch::Tensor> keep;
  std::vector<encode::TensorToWrite> tensors;
  auto add = [&](const std::string& tensor_name, const torch::Tensor& v) {
    keep.push_back(v.detach().to(torch::kFloat).contiguous());
    const auto& k = keep.back();
    tensors.push_back(encode::f32_tensor(tensor_name, std::vector<int64_t>(k.sizes().begin(), k.sizes().end()),
                                         std::span<const float>(k.data_ptr<float>(), size_t(k.numel()))));
  };
  for (const auto& p : w.net->named_parameters(true)) add(p.key(), p.value());
  for (const auto& b : w.net->named_buffers(true)) add(b.key(), b.value());
  encode::write_safetensors(writer.file(encode::kModelWeightsFile), tensors,
                            {{"fine_tuned_from", path_for_report(w.model_dir)}});
  const auto tokenizer = w.config.get_string("tokenizer");
  std::filesystem::copy_file(std::filesystem::path(w.model_dir) / tokenizer, writer.file(tokenizer));
  auto config = w.config;
  config.name = name;
  config.extra["fine_tuned_from"] = path_for_report(w.model_dir);
  encode::write_model_config(writer.staging_dir(), config);
  writer.commit();
}

}  // namespace verity::train::detail
