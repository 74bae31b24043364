#pragma once
// Private: the libtorch BERT network. Modules are nested so that
// named_parameters() yields Hugging Face BertModel names
// ("embeddings.word_embeddings.weight", "encoder.layer.0.attention.self.query.weight", ...),
// which is what load/save map to safetensors. Include only from .cpp files
// (pulls in <torch/torch.h>); training code uses BertEncoder::Impl::model.
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "encode/bert.hpp"
#include "text/wordpiece.hpp"

namespace verity::encode::detail {

struct BertConfig {
  int64_t vocab_size = 0, hidden = 0, layers = 0, heads = 0, intermediate = 0;
  int64_t max_position = 512, type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
};

struct BertEmbeddingsImpl : torch::nn::Module {
  explicit BertEmbeddingsImpl(const BertConfig& c);
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& type_ids);
  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr},
      token_type_embeddings{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
};
TORCH_MODULE(BertEmbeddings);

struct BertSelfAttentionImpl : torch::nn::Module {
  explicit BertSelfAttentionImpl(const BertConfig& c);
  // x [B,T,H], additive_mask [B,1,1,T] (0 keep, large negative drop) -> [B,T,H]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& additive_mask);
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr};
  int64_t heads = 0;
};
TORCH_MODULE(BertSelfAttention);

// Dense + residual + LayerNorm, used after attention and after the FFN.
struct BertResidualOutputImpl : torch::nn::Module {
  BertResidualOutputImpl(int64_t in, const BertConfig& c);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& residual);
  torch::nn::Linear dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
};
TORCH_MODULE(BertResidualOutput);

struct BertAttentionImpl : torch::nn::Module {
  explicit BertAttentionImpl(const BertConfig& c);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& additive_mask);
  BertSelfAttention self{nullptr};
  BertResidualOutput output{nullptr};
};
TORCH_MODULE(BertAttention);

struct BertIntermediateImpl : torch::nn::Module {
  explicit BertIntermediateImpl(const BertConfig& c);
  torch::Tensor forward(const torch::Tensor& x);  // GELU (erf form, as HF "gelu")
  torch::nn::Linear dense{nullptr};
};
TORCH_MODULE(BertIntermediate);

struct BertLayerImpl : torch::nn::Module {
  explicit BertLayerImpl(const BertConfig& c);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& additive_mask);
  BertAttention attention{nullptr};
  BertIntermediate intermediate{nullptr};
  BertResidualOutput output{nullptr};
};
TORCH_MODULE(BertLayer);

struct BertStackImpl : torch::nn::Module {
  explicit BertStackImpl(const BertConfig& c);
  torch::nn::ModuleList layer{nullptr};
};
TORCH_MODULE(BertStack);

struct BertModelImpl : torch::nn::Module {
  explicit BertModelImpl(const BertConfig& c);
  // ids, mask: [B,T] int64 (mask 1 = real token). Returns last hidden states [B,T,H].
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask);
  BertConfig config;
  BertEmbeddings embeddings{nullptr};
  BertStack encoder{nullptr};
};
TORCH_MODULE(BertModel);

// Sentence vector from last hidden states [B,T,H] and mask [B,T] (1 = real
// token): "cls" (position 0), "max" or "mean" over the real positions.
torch::Tensor pool_hidden(const torch::Tensor& hidden, const torch::Tensor& mask, const std::string& pooling);

// The forward() inputs for a batch of token id rows: ids [B, T] (pad_id after
// each row's end) and mask [B, T] (kLong, 1 = real token), T = the longest
// row (at least 1).
template <typename Id>
std::pair<torch::Tensor, torch::Tensor> pad_batch(const std::vector<const std::vector<Id>*>& rows, int64_t pad_id) {
  int64_t longest = 1;
  for (const auto* r : rows) longest = std::max<int64_t>(longest, int64_t(r->size()));
  const auto b = int64_t(rows.size());
  auto ids = torch::full({b, longest}, pad_id, torch::kLong);
  auto mask = torch::zeros({b, longest}, torch::kLong);
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<int64_t, 2>();
  for (int64_t i = 0; i < b; ++i)
    for (size_t t = 0; t < rows[size_t(i)]->size(); ++t) {
      ids_a[i][int64_t(t)] = (*rows[size_t(i)])[t];
      mask_a[i][int64_t(t)] = 1;
    }
  return {ids, mask};
}

}  // namespace verity::encode::detail

namespace verity::encode {

struct BertEncoder::Impl {
  detail::BertModel model{nullptr};
  text::WordPieceTokenizer tokenizer;
  std::string name, pooling, source;
  size_t max_length = 0;
};

}  // namespace verity::encode
