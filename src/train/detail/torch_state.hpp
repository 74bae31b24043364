#pragma once
// Private (includes torch): pieces shared by the training loops of src/train
// (verifier_training.cpp, encoder_training.cpp): module/optimizer state as
// bytes for checkpoints, the seeded epoch order, and USE-lite loaded as a
// trainable module from a model directory and saved back as one.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/section_file.hpp"
#include "encode/detail/use_lite_model.hpp"
#include "encode/encoder.hpp"
#include "encode/model_dir.hpp"

namespace verity::train::detail {

// torch archives in memory (checkpoint sections).
std::string module_bytes(torch::nn::Module& module);
void load_module_bytes(torch::nn::Module& module, const std::string& bytes);
std::string optimizer_bytes(const torch::optim::Optimizer& optimizer);
void load_optimizer_bytes(torch::optim::Optimizer& optimizer, const std::string& bytes);
std::string section_string(const SectionFile& file, std::string_view tag);

// Permutation of 0..n-1 for one epoch: depends only on (seed, epoch), so a
// resumed run sees the same order as an uninterrupted one.
std::vector<size_t> epoch_order(size_t n, uint64_t seed, size_t epoch);

// USE-lite as a trainable module: the network with the weights of a use-lite
// model directory, and the encoder (for its tokenizer).
struct UseLiteWeights {
  std::string model_dir;
  encode::ModelConfig config;
  std::unique_ptr<encode::Encoder> encoder;  // tokenize() only
  encode::detail::UseLiteNet net{nullptr};
  size_t max_length = 0;  // positions the network sees (<= 128)
};

// `spec` must resolve to a use-lite model directory, else ConfigError naming
// `purpose` (e.g. "end-to-end training fine-tunes USE-lite").
UseLiteWeights load_use_lite_weights(const std::string& spec, std::string_view purpose);
// Token ids of `text`, cut to max_length.
std::vector<int64_t> use_lite_ids(const UseLiteWeights& w, const std::string& text);
// One padded forward pass over the texts' ids (under autograd unless the
// caller disabled it).
encode::detail::UseLiteOutput run_use_lite(UseLiteWeights& w,
                                           const std::vector<const std::vector<int64_t>*>& ids);
// Writes the current weights as a verity model directory (atomic): model.safetensors,
// the tokenizer file and verity.json with `name` and extra.fine_tuned_from.
void save_use_lite_weights(const UseLiteWeights& w, const std::string& dir, const std::string& name);

}  // namespace verity::train::detail
