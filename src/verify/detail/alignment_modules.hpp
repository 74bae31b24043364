#pragma once
// Private (includes torch): the F5 network and the feature → tensor batching,
// shared by inference (alignment_verifier.cpp) and training (src/train).
#include <torch/torch.h>

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "verify/alignment_verifier.hpp"

namespace verity::verify::detail {

// One direction of a batch, padded to the longest text: features [B, L, F],
// mask [B, L] (1 = real token), buckets [B, L] (token-embedding rows).
struct DirectionBatch {
  torch::Tensor features, mask, buckets;
};
struct AlignmentBatch {
  DirectionBatch forward, backward;
  torch::Tensor pair;    // [B, kPairFeatures]
  torch::Tensor pooled;  // [B, 2 · pooled_dim] (zeros where unknown); undefined without a pooled head
};
AlignmentBatch make_alignment_batch(std::span<const AlignmentFeatures* const> items, const AlignmentConfig& config);

struct AlignNetImpl : torch::nn::Module {
  explicit AlignNetImpl(const AlignmentConfig& config);
  torch::Tensor forward(const AlignmentBatch& batch);  // logits [B]
  torch::Tensor read_direction(const DirectionBatch& d);  // [B, 3H]
  torch::Tensor pair_inputs(const AlignmentBatch& batch);  // [B, P + pooled_head]: the masked scalars, the head's readings
  AlignmentConfig config;
  torch::Tensor token_mask, pair_mask;  // buffers: 1 for the features of the selected input groups
  torch::nn::Embedding embedding{nullptr};
  torch::nn::Linear token_in{nullptr}, hidden{nullptr}, out{nullptr}, pair_linear{nullptr};
  torch::nn::Linear pooled_in{nullptr};  // the pooled head (config.pooled_head > 0)
  torch::nn::Conv1d conv{nullptr};
};
TORCH_MODULE(AlignNet);

// The same network for inference without torch: the module's weights
// transposed for verify/kernels.hpp, the input-group masks folded into them.
// A snapshot: `source` identifies the weights it was copied from.
struct FastAlignNet {
  explicit FastAlignNet(AlignNetImpl& net);
  float logit(const AlignmentFeatures& features) const;
  size_t features = 0, embedding_dim = 0, hidden = 0, mlp = 0, buckets = 1, pooled_head = 0, pooled_dim = 0;
  bool conv = false, idf_weighted = false;
  std::vector<float> w_in, b_in, w_conv, b_conv, embedding, w_hidden, b_hidden, w_out, w_pair, w_pooled, b_pooled;
  float b_out = 0, b_pair = 0;
  uint64_t source = 0;

 private:
  void read_direction(const DirectionFeatures& d, float* out) const;  // out: [3 · hidden]
};
// Identifies a module's current weights: their storage and in-place version
// counters (an optimizer step or a load bumps them).
uint64_t weights_identity(AlignNetImpl& net);

}  // namespace verity::verify::detail

namespace verity::verify {

struct AlignmentVerifier::Impl {
  AlignmentConfig config;
  IdfTable idf;
  Lexicon lexicon;
  TokenTable tokens;  // of idf and lexicon
  text::CaseFolds folds;  // AlignmentConfig::fold_case's (FOLD section)
  detail::AlignNet net{nullptr};
  bool trained = false;
  std::string provenance, encoder, path;
  std::optional<Calibration> calibration;
  // The inference copy of `net`, rebuilt when net's weights change.
  mutable std::mutex fast_mutex;
  mutable std::shared_ptr<const detail::FastAlignNet> fast;
  std::shared_ptr<const detail::FastAlignNet> inference_net() const;
};

}  // namespace verity::verify
