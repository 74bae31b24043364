#pragma once
// Training the learned verifiers (F3/F4) on triples (query, positive, negative).
// Torch-free header; the torch code is in verifier_training.cpp and the loss
// objects in train/detail/losses.hpp. Formulas and formats: docs/TRAINING.md.
//
// Frozen mode: every unique text is encoded once (TextBank); similarity maps
// are built per batch from the cached token vectors (L2-normalized rows, one
// matrix product), so in-batch negatives (MNRL) cost no extra encoding.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/triples.hpp"
#include "encode/encoder.hpp"
#include "verify/learned.hpp"

namespace verity::train {

// Unique texts and, once encoded, their token vectors (real positions only).
class TextBank {
 public:
  // Id of `text`, adding it if new.
  uint32_t add(const std::string& text);
  size_t size() const { return texts_.size(); }
  const std::string& text(uint32_t id) const { return texts_.at(id); }
  // Encodes every text not encoded yet with `encoder` (token vectors on).
  void encode(const encode::Encoder& encoder, size_t batch_size = 32);
  // Sets one text's token rows directly (synthetic data, tests).
  void set_tokens(uint32_t id, std::vector<float> rows, size_t dim);
  size_t dim() const { return dim_; }
  bool encoded(uint32_t id) const { return id < tokens_.size() && has_tokens_[id]; }
  size_t num_tokens(uint32_t id) const;
  std::span<const float> tokens(uint32_t id) const;  // [num_tokens × dim]

 private:
  std::vector<std::string> texts_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::vector<float>> tokens_;
  std::vector<uint8_t> has_tokens_;
  size_t dim_ = 0;
};

struct IndexedTriple {
  uint32_t query = 0, positive = 0, negative = 0;  // TextBank ids
  std::string type;                                // edit type; "" if absent
};
std::vector<IndexedTriple> index_triples(std::span<const data::Triple> triples, TextBank& bank);

// Pairwise accuracy: share of triples with score(q, pos) > score(q, neg)
// (a tie counts as wrong), overall and per type ("" -> "untyped").
struct PairwiseAccuracy {
  size_t total = 0, correct = 0;
  std::map<std::string, std::pair<size_t, size_t>> by_type;  // type -> (correct, total)
  double accuracy() const { return total ? double(correct) / double(total) : 0.0; }
  double macro() const;  // mean of the per-type accuracies
  double worst() const;  // lowest per-type accuracy
  // "micro" = accuracy(), "macro", or "min" = worst(); ConfigError otherwise.
  double select(const std::string& metric) const;
};
// Scores through the verifier's public inference path (SimilarityMap::compute
// + score_batch), exactly what search/eval/serve run.
PairwiseAccuracy pairwise_accuracy(const verify::Verifier& verifier, const TextBank& bank,
                                   std::span<const IndexedTriple> triples);

struct TrainOptions {
  std::string loss = "pairwise";  // pairwise | margin | mnrl
  double margin = 0.2;            // margin loss, on sigmoid scores
  double mnrl_scale = 20.0;       // MNRL: sigmoid scores are multiplied by this
  size_t epochs = 10;
  size_t batch_size = 32;
  double lr = 1e-3;
  double weight_decay = 0.0;
  uint64_t seed = 0;              // shuffling order
  std::string checkpoint_dir;     // "" = no checkpoints
  size_t checkpoint_every = 0;    // steps between checkpoints; 0 = end of each epoch only
  bool resume = false;            // continue from checkpoint_dir/checkpoint.vtck
  size_t patience = 0;            // stop after this many epochs without a dev gain; 0 = never
  size_t max_steps = 0;           // stop after this many optimizer steps in total; 0 = no limit
  // Per-type balanced epochs: each epoch draws this many triples of every
  // type (seeded; a type with fewer triples is cycled, one with more is
  // subsampled afresh each epoch). 0 = every triple once per epoch.
  size_t per_type = 0;
  // Training maps keep at most this many query and candidate tokens (the
  // leading ones, as pad_or_crop does); 0 = the model's map_size. Inference
  // and the dev/test accuracies always use the full map_size.
  size_t train_map_width = 0;
  // What "best dev epoch" maximizes: "micro" (all dev triples), "macro" (mean
  // over types) or "min" (the worst type). A dev set dominated by one type
  // picks, under micro, the epoch best at that type; the near-miss target is
  // per type.
  std::string dev_metric = "micro";
  std::string fingerprint;        // identifies data+model; a resumed checkpoint must match
};

struct EpochReport {
  size_t epoch = 0;  // 1-based
  double train_loss = 0, dev_accuracy = -1, seconds = 0;
};

struct TrainReport {
  size_t steps = 0, examples = 0;  // optimizer steps and triples seen (this run and resumed ones)
  size_t epochs_completed = 0;
  size_t best_epoch = 0;           // 0: no dev set (the final weights are kept)
  double best_dev_accuracy = -1;
  bool early_stopped = false, stopped_at_max_steps = false;
  size_t resumed_from_step = 0;
  double train_seconds = 0;        // this process only
  double examples_per_second = 0;  // this process only
  std::vector<EpochReport> epochs;
};

// Trains `model` in place (frozen encoder: maps from `bank`). With a dev set
// the model ends holding the weights of the best dev epoch. Progress on
// stderr; SIGINT throws Interrupted between steps, leaving the last checkpoint
// intact. Checkpoints: docs/TRAINING.md ("VTCK").
TrainReport train_frozen(verify::LearnedVerifier& model, const TextBank& bank,
                         std::span<const IndexedTriple> train, std::span<const IndexedTriple> dev,
                         const TrainOptions& options);

// End-to-end mode: USE-lite is fine-tuned jointly with the verifier (its own,
// smaller learning rate); maps come from its token outputs under autograd.
struct EndToEndOptions {
  std::string encoder = "use-lite";  // encoder spec; must resolve to a use-lite model directory
  std::string encoder_out;           // model directory written with the fine-tuned weights
  double encoder_lr = 1e-5;
};

// Trains `model` and the encoder jointly; the bank supplies texts only (its
// token vectors are not used). Writes the fine-tuned encoder (best dev epoch)
// to options.encoder_out as a verity model directory (model.safetensors,
// tokenizer.json, verity.json); the verifier must be used with that encoder.
TrainReport train_end_to_end(verify::LearnedVerifier& model, const TextBank& bank,
                             std::span<const IndexedTriple> train, std::span<const IndexedTriple> dev,
                             const TrainOptions& options, const EndToEndOptions& e2e);

// Valid loss names, for help and errors.
std::vector<std::string> loss_names();

}  // namespace verity::train
