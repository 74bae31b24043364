#pragma once
// Private (includes torch): the F5 network and the feature → tensor batching,
// shared by inference (alignment_verifier.cpp) and training (src/train).
#include <torch/torch.h>

#include <span>
#include <string>

#include "verify/alignment_verifier.hpp"

namespace verity::verify::detail {

// One direction of a batch, padded to the longest text: features [B, L, F],
// mask [B, L] (1 = real token), buckets [B, L] (token-embedding rows).
struct DirectionBatch {
  torch::Tensor features, mask, buckets;
};
struct AlignmentBatch {
  DirectionBatch forward, backward;
  torch::Tensor pair;  // [B, kPairFeatures]
};
AlignmentBatch make_alignment_batch(std::span<const AlignmentFeatures* const> items, const AlignmentConfig& config);

struct AlignNetImpl : torch::nn::Module {
  explicit AlignNetImpl(const AlignmentConfig& config);
  torch::Tensor forward(const AlignmentBatch& batch);  // logits [B]
  torch::Tensor read_direction(const DirectionBatch& d);  // [B, 3H]
  AlignmentConfig config;
  torch::Tensor token_mask, pair_mask;  // buffers: 1 for the features of the selected input groups
  torch::nn::Embedding embedding{nullptr};
  torch::nn::Linear token_in{nullptr}, hidden{nullptr}, out{nullptr}, pair_linear{nullptr};
  torch::nn::Conv1d conv{nullptr};
};
TORCH_MODULE(AlignNet);

}  // namespace verity::verify::detail

namespace verity::verify {

struct AlignmentVerifier::Impl {
  AlignmentConfig config;
  IdfTable idf;
  detail::AlignNet net{nullptr};
  bool trained = false;
  std::string provenance, encoder, path;
  std::optional<Calibration> calibration;
};

}  // namespace verity::verify
