#pragma once
// Private (includes torch): the training losses as objects holding their
// hyperparameters, in the style of sentence-transformers' losses. Each takes
// the verifier's logits (sigmoid(logit) is the inference score).
#include <torch/torch.h>

#include <memory>
#include <string>

namespace verity::train::detail {

class Loss {
 public:
  virtual ~Loss() = default;
  // true: forward() receives the B × 2B logit matrix of every query against
  // every candidate of the batch (columns 0..B-1 the positives, B..2B-1 the
  // negatives); false: pos/neg logits [B] of each triple's own pair.
  virtual bool needs_in_batch() const { return false; }
  // pairwise/margin: (pos [B], neg [B]); mnrl: (all [B, 2B], unused).
  virtual torch::Tensor forward(const torch::Tensor& a, const torch::Tensor& b) const = 0;
  virtual std::string spec() const = 0;
};

// mean_b softplus(-(pos_b - neg_b)) = mean -log sigmoid(pos_b - neg_b).
class PairwiseLogisticLoss final : public Loss {
 public:
  torch::Tensor forward(const torch::Tensor& pos, const torch::Tensor& neg) const override {
    return torch::softplus(-(pos - neg)).mean();
  }
  std::string spec() const override { return "pairwise"; }
};

// mean_b relu(margin - (sigmoid(pos_b) - sigmoid(neg_b))): on the scores that
// inference reports, so `margin` is in score units.
class MarginLoss final : public Loss {
 public:
  explicit MarginLoss(double margin) : margin_(margin) {}
  torch::Tensor forward(const torch::Tensor& pos, const torch::Tensor& neg) const override {
    return torch::relu(margin_ - (torch::sigmoid(pos) - torch::sigmoid(neg))).mean();
  }
  std::string spec() const override { return "margin:m=" + std::to_string(margin_); }

 private:
  double margin_;
};

// Multiple negatives ranking with in-batch negatives: row b of `all` holds the
// logits of query b against [pos_1..pos_B, neg_1..neg_B];
// loss = mean_b CE(softmax(scale * sigmoid(all[b, :])), target b).
// On sigmoid scores, as sentence-transformers uses scaled cosines: raw logits
// are unbounded, and MNRL alone lets every logit drift up until sigmoid
// saturates and the inference scores tie.
class MnrlLoss final : public Loss {
 public:
  explicit MnrlLoss(double scale) : scale_(scale) {}
  bool needs_in_batch() const override { return true; }
  torch::Tensor forward(const torch::Tensor& all, const torch::Tensor&) const override {
    auto target = torch::arange(all.size(0), torch::kLong);
    return torch::nn::functional::cross_entropy(torch::sigmoid(all) * scale_, target);
  }
  std::string spec() const override { return "mnrl:scale=" + std::to_string(scale_); }

 private:
  double scale_;
};

// "pairwise" | "margin" | "mnrl"; anything else is a ConfigError listing them.
std::unique_ptr<Loss> make_loss(const std::string& name, double margin, double mnrl_scale);

}  // namespace verity::train::detail
