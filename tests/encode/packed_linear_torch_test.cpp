// The encoder's packed Linear layers (encode/packed_linear.hpp) inside
// USE-lite, against torch's own Linear modules.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "encode/detail/use_lite_model.hpp"

namespace verity::encode {
namespace {

// The encoder's packed network against torch's Linear layers: the same
// outputs up to float rounding, with and without padding.
TEST(PackedLinear, UseLiteNetworkMatchesTorchLinear) {
  torch::manual_seed(4);
  detail::UseLiteNet net{detail::UseLiteShape{}};
  net->eval();
  torch::InferenceMode inference;
  auto ids = torch::randint(1, 8000, {3, 11}, torch::kLong);
  auto mask = torch::ones({3, 11}, torch::kBool);
  mask.index_put_({1, torch::indexing::Slice(6, torch::indexing::None)}, false);
  auto plain = net->forward(ids, mask);
  net->pack_for_inference();
  auto packed = net->forward(ids, mask);
  const double scale = plain.tokens.abs().max().item<double>();
  EXPECT_LT((plain.tokens - packed.tokens).abs().max().item<double>() / scale, 1e-5);
  EXPECT_LT((plain.pooled - packed.pooled).abs().max().item<double>(), 1e-5);
  EXPECT_EQ(packed.tokens.index({1, torch::indexing::Slice(6, torch::indexing::None)}).abs().max().item<float>(), 0.0f);
}

}  // namespace
}  // namespace verity::encode
