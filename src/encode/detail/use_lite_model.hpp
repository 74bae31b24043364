#pragma once
// The USE-lite network as a torch module, for the encoder and for training
// code (fine-tuning). Includes torch: include it only from .cpp files that
// need the module.
//
// Parameter names (== tensor names in model.safetensors; Linear weights are
// [out, in] as torch stores them):
//   embeddings.weight                      [8002, 256]
//   timing.inv_timescales (buffer)         [128]
//   layers.0.residual_proj.{weight,bias}   [512, 256], [512]  (only layer 0)
//   layers.L.attn_norm.{weight,bias}       [d_in]
//   layers.L.attn.qkv.{weight,bias}        [3*d_in, d_in], [3*d_in]
//   layers.L.attn.out.{weight,bias}        [512, d_in], [512]
//   layers.L.ffn_norm.{weight,bias}        [512]
//   layers.L.ffn.fc1.{weight,bias}         [1536, 512], [1536]
//   layers.L.ffn.fc2.{weight,bias}         [512, 1536], [512]
//   head.{weight,bias}                     [512, 512], [512]
// with d_in = 256 for layer 0 and 512 for layer 1.
#include <torch/torch.h>

#include <optional>

#include "encode/packed_linear.hpp"

namespace verity::encode::detail {

// y = linear(x), by the packed copy when there is one and no gradient is
// needed, else by torch's Linear. x [..., in] -> [..., out]; ReLU when relu.
torch::Tensor apply_linear(torch::nn::Linear& linear, const std::optional<PackedLinear>& packed,
                           const torch::Tensor& x, bool relu = false);

struct UseLiteShape {
  int64_t vocab_rows = 8002;  // 8000 pieces + 2 rows the tokenizer never emits
  int64_t embedding_dim = 256;
  int64_t hidden = 512;
  int64_t ffn = 1536;
  int64_t heads = 4;
  int64_t layers = 2;
  double layer_norm_eps = 1e-6;
};

// Pre-norm Transformer layer as in the graph: x -> LN -> self-attention (+
// residual, projected when the width changes) -> LN -> ReLU FFN (+ residual).
struct UseLiteLayerImpl : torch::nn::Module {
  UseLiteLayerImpl(int64_t in_dim, const UseLiteShape& shape);
  // x [B,T,in], attention_bias [B,1,1,T] (0 or -1e9), mask [B,T,1] float.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& attention_bias,
                        const torch::Tensor& mask);

  // Copies the Linear weights into packed form for inference (the encoder
  // calls it once after loading); later changes to the weights are not seen.
  void pack_for_inference();

  int64_t in_dim, heads;
  torch::nn::Linear residual_proj{nullptr};
  torch::nn::LayerNorm attn_norm{nullptr}, ffn_norm{nullptr};
  torch::nn::Linear qkv{nullptr}, out{nullptr}, fc1{nullptr}, fc2{nullptr};
  std::optional<PackedLinear> packed_residual_proj, packed_qkv, packed_out, packed_fc1, packed_fc2;
};
TORCH_MODULE(UseLiteLayer);

// Sinusoidal positions, concat(sin(p * inv_timescales), cos(...)).
struct TimingSignalImpl : torch::nn::Module {
  explicit TimingSignalImpl(int64_t channels);
  torch::Tensor forward(int64_t length);  // [length, 2 * channels]
  torch::Tensor inv_timescales;           // buffer, read from the graph
};
TORCH_MODULE(TimingSignal);

struct UseLiteOutput {
  torch::Tensor tokens;  // [B,T,512], zero at padding
  torch::Tensor pooled;  // [B,512], tanh output, not normalized
};

struct UseLiteNetImpl : torch::nn::Module {
  explicit UseLiteNetImpl(const UseLiteShape& shape = {});
  // ids [B,T] int64 (any value at padding), mask [B,T] bool, padding after the
  // real tokens of each row.
  UseLiteOutput forward(const torch::Tensor& ids, const torch::Tensor& mask);
  void pack_for_inference();  // every layer's and the head's, see UseLiteLayerImpl

  UseLiteShape shape;
  torch::nn::Embedding embeddings{nullptr};
  TimingSignal timing{nullptr};
  torch::nn::ModuleList layers{nullptr};
  torch::nn::Linear head{nullptr};
  std::optional<PackedLinear> packed_head;
};
TORCH_MODULE(UseLiteNet);

// The graph's final l2_normalize: x * rsqrt(max(sum(x^2), 1e-12)) per row.
torch::Tensor use_lite_l2_normalize(const torch::Tensor& x);

}  // namespace verity::encode::detail
