#pragma once
// Private: the torch modules behind F3/F4 and the map → tensor batching.
// Including this header pulls in <torch/torch.h> (~26 s per translation
// unit), so only learned.cpp and future training code should include it.
#include <torch/torch.h>

#include <span>
#include <string>

#include "core/section_file.hpp"
#include "verify/learned.hpp"
#include "verify/similarity_map.hpp"

namespace verity::verify::detail {

// Maps cropped to map_size and zero-padded to a shared canvas [B, H, W].
// H and W are the largest extents in the batch rounded up to `multiple`
// (capped at map_size), or `canvas` × `canvas` when canvas > 0.
struct MapBatch {
  torch::Tensor values;  // float [B, H, W], 0 outside the real cells
  torch::Tensor mask;    // float [B, H, W], 1 = real cell
};
MapBatch make_map_batch(std::span<const SimilarityMap* const> maps, size_t map_size,
                        size_t multiple, size_t canvas = 0);

// F3. Every activation is re-masked after its ReLU, so cells outside the real
// map stay exactly 0 and the score does not depend on the canvas size.
struct CnnNetImpl : torch::nn::Module {
  explicit CnnNetImpl(const CnnConfig& config);
  // values, mask: [B, H, W] with H, W multiples of 4. Returns logits [B].
  torch::Tensor forward(const torch::Tensor& values, const torch::Tensor& mask);
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::Linear head{nullptr};
  bool mean_max = false;
};
TORCH_MODULE(CnnNet);

struct VitBlockImpl : torch::nn::Module {
  VitBlockImpl(int64_t dim, int64_t heads, int64_t mlp_dim);
  // x: [B, N, dim]; key_valid: bool [B, N]. Invalid tokens are never attended to.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& key_valid);
  int64_t heads;
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(VitBlock);

// F4. Patches that hold no real cell are masked out of attention; the CLS
// output therefore does not depend on the canvas size either.
struct VitNetImpl : torch::nn::Module {
  explicit VitNetImpl(const VitConfig& config);
  // values, mask: [B, H, W] with H, W multiples of patch. Returns logits [B].
  torch::Tensor forward(const torch::Tensor& values, const torch::Tensor& mask);
  VitConfig config;
  torch::nn::Linear embed{nullptr}, head{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  torch::Tensor cls, cls_pos, pos;  // [1,1,d], [1,1,d], [1, (map_size/patch)^2, d]
  std::vector<VitBlock> blocks;
};
TORCH_MODULE(VitNet);

// Sections PNAM (u32 count, then name, u32 ndim, i64 dims per parameter) and
// PDAT (all values as f32, in PNAM order) of a weights file.
void write_parameters(SectionWriter& out, torch::nn::Module& module);
// Loads them into `module`, requiring its exact names and shapes; FormatError
// naming the file and the parameter otherwise (`kind` names the model).
void read_parameters(const SectionFile& file, torch::nn::Module& module, const std::string& kind);

}  // namespace verity::verify::detail

namespace verity::verify {

struct LearnedVerifier::Impl {
  std::string kind;  // "f3" or "f4"
  CnnConfig cnn_config;
  VitConfig vit_config;
  detail::CnnNet cnn{nullptr};
  detail::VitNet vit{nullptr};
  bool trained = false;
  std::string provenance;
  std::string path;  // file last loaded or saved; empty if none

  torch::nn::Module& module();
  size_t map_size() const;
  size_t canvas_multiple() const;  // 4 for F3 (two 2× pools), patch for F4
  // Logits [B] of a prepared batch (sigmoid gives the score); training
  // code calls this under autograd.
  torch::Tensor forward_logits(const detail::MapBatch& batch);
};

}  // namespace verity::verify
