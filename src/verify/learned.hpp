#pragma once
// The learned verifiers F3 (small CNN) and F4 (small ViT). This header is
// torch-free; the torch modules live in verify/detail/learned_modules.hpp so
// training code can reach them through LearnedVerifier::impl().
//
// Weights file: a SectionFile with magic "VVRF", version 1:
//   CONF  JSON: {"kind": "f3"|"f4", "config": {...}, "trained": bool,
//               "provenance": "how the weights were produced"}
//   PNAM  u32 count, then per parameter: name string, u32 ndim, i64 dims[ndim]
//   PDAT  f32 values of every parameter, concatenated in PNAM order
// Loading rebuilds the module from CONF and requires every stored parameter
// to match the module's names and shapes exactly (FormatError otherwise).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "verify/verifier.hpp"

namespace verity::verify {

// F3: conv(3→c0) ReLU pool2, conv(c0→c1) ReLU pool2, conv(c1→c2) ReLU,
// masked global pooling, linear → sigmoid. map_size must be a multiple of 4.
// pool "mean" averages the last feature map; "mean_max" also takes its masked
// maximum, so one broken cell of a long map is not diluted by the map's area
// (files without the key are "mean", the first F3 design).
struct CnnConfig {
  size_t map_size = kDefaultMapSize;
  std::vector<int64_t> channels = {32, 64, 128};  // exactly three layers
  std::string pool = "mean";                      // "mean" | "mean_max"
};

// F4: patches of patch×patch cells (values and mask) → linear embedding of
// width dim, a CLS token, learned positional embeddings, `layers` pre-norm
// transformer blocks (heads heads, MLP width mlp_dim, GELU) → linear on CLS →
// sigmoid. map_size must be a multiple of patch; heads must divide dim.
struct VitConfig {
  size_t map_size = kDefaultMapSize;
  size_t patch = 8;
  size_t dim = 256;
  size_t layers = 2;
  size_t heads = 8;
  size_t mlp_dim = 512;
};

class LearnedVerifier final : public Verifier {
 public:
  struct Impl;  // defined in verify/detail/learned_modules.hpp

  // Freshly initialized weights, a function of (config, seed) only (torch's
  // global generator is restored afterwards): for training code and tests.
  // is_trained() is false until mark_trained().
  static std::unique_ptr<LearnedVerifier> untrained_cnn(const CnnConfig& config, uint64_t seed);
  static std::unique_ptr<LearnedVerifier> untrained_vit(const VitConfig& config, uint64_t seed);
  // Loads a weights file. expected_kind "f3"/"f4" rejects the other kind
  // (ConfigError); empty accepts both. An untrained file loads with a warning.
  static std::unique_ptr<LearnedVerifier> load(const std::string& path,
                                               std::string_view expected_kind = "");

  ~LearnedVerifier() override;
  float score(const SimilarityMap& map) const override;
  // Scores in batches of up to 64 maps, each padded only to the largest map of
  // its batch (masking makes this equal to padding to map_size).
  std::vector<float> score_batch(std::span<const SimilarityMap> maps) const override;
  // The scores before the sigmoid (0 for empty maps): exact where a score has
  // rounded to 0 or 1 in float, which ensembles average (verify/ensemble.hpp).
  std::vector<float> logit_batch(std::span<const SimilarityMap> maps) const;
  // "f3:PATH"/"f4:PATH" of the file last loaded or saved; "f3:<unsaved>"
  // before that (not a loadable spec).
  std::string spec() const override;
  void save(const std::string& path) const override;
  bool is_trained() const override;

  std::string kind() const;  // "f3" or "f4"
  const std::string& provenance() const;
  // Records that the weights are trained and how (dataset, steps, git SHA...).
  void mark_trained(std::string provenance);
  size_t map_size() const;
  size_t parameter_count() const;

  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  explicit LearnedVerifier(std::unique_ptr<Impl> impl);
  std::vector<float> forward_batch(std::span<const SimilarityMap> maps, bool sigmoid) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace verity::verify
