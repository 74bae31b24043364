#pragma once
// Fine-tuning a dense encoder (dual encoder, shared weights) on triples
// (query, positive, hard negative) with the multiple-negatives ranking /
// InfoNCE loss. Torch-free header; the torch code is in encoder_training.cpp.
// Backbones: USE-lite (whole network), GloVe (the word vectors of the
// training vocabulary, mean pooling as the encoder does) and BERT-family
// (the libtorch BERT module). The result is a verity model directory that
// make_encoder() loads like any other. Formulas, formats: docs/TRAINING.md
// ("Encoder training").
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "data/triples.hpp"

namespace verity::train {

struct EncoderTrainOptions {
  // Loss: cross-entropy over scale * cos(q_i, c_j), c = the batch's positives
  // followed by every explicit hard negative of the batch.
  double scale = 20.0;
  size_t batch_size = 32;
  double lr = 2e-5;            // peak learning rate (AdamW)
  double warmup_ratio = 0.1;   // share of the total steps with linear warmup from 0
  double weight_decay = 0.01;  // AdamW, decoupled
  double grad_clip = 1.0;      // max global gradient L2 norm; 0 = no clipping
  size_t epochs = 1;
  // Budget: total optimizer steps (schedule length); 0 = epochs x steps per epoch.
  size_t max_steps = 0;
  // Stop (as an interruption would) once this many steps are done in total,
  // leaving the checkpoint and no output model; the schedule is unchanged.
  // 0 = never. Used to test and to split long runs.
  size_t stop_at_step = 0;
  uint64_t seed = 0;           // shuffling order (the only randomness of training)
  size_t max_length = 0;       // tokens per text; 0 = the model's default

  std::string checkpoint_dir;  // "" = no checkpoints
  size_t checkpoint_every = 0; // steps between checkpoints (also after each eval); 0 = at the end only
  bool resume = false;         // continue from checkpoint_dir/checkpoint.veck

  // Dev evaluation: nDCG@10 of exact dense retrieval on a BEIR split,
  // computed in memory with the weights being trained.
  std::string dev_dataset;     // BEIR directory; "" = no dev evaluation
  std::string dev_split = "test";
  size_t dev_max_queries = 0;  // first N queries with qrels (file order); 0 = all
  // Corpus for the dev ranking: every judged document of the kept queries
  // plus others drawn (seeded) up to this many; 0 = the whole corpus.
  size_t dev_max_docs = 0;
  size_t eval_every = 0;       // steps between evaluations; 0 = at the end of each epoch
  size_t patience = 0;         // stop after this many evaluations without a gain; 0 = never

  std::string metrics_path;    // JSONL log (one line per log interval and per eval); "" = none
  size_t log_every = 10;       // steps between metric lines
  std::string plot_path;       // SVG of the training curves; "" = none
  std::string out_dir;         // model directory written at the end ("" = none), with a
                               // training.json (provenance: base, fingerprint, command, steps, dev)
  std::string name;            // verity.json "name"; "" = "<base name>-ft"
  int threads = 0;             // torch intra-op threads; 0 = leave as is
  std::string fingerprint;     // identifies the data; a resumed checkpoint must match
  std::string command;         // the command line, recorded in the metrics log and OUT/training.json
};

struct DevPoint {
  size_t step = 0;
  double ndcg10 = 0;
};

struct EncoderTrainReport {
  std::string base_spec, architecture;  // e.g. "use-lite:/.../models/use-lite", "use-lite"
  size_t trainable_parameters = 0;
  size_t train_triples = 0;             // after dropping triples with an empty text
  size_t dropped_triples = 0;
  size_t steps = 0, total_steps = 0, examples = 0;  // examples: triples seen, all runs
  size_t resumed_from_step = 0;
  bool early_stopped = false, stopped_early_by_request = false;  // patience / stop_at_step
  double final_loss = 0;               // mean loss of the last log interval
  double train_seconds = 0;            // this process, optimizer steps only
  double examples_per_second = 0;      // this process
  double peak_rss_mb = 0;              // process peak resident set size
  size_t best_step = 0;                // 0: no dev evaluation (final weights kept)
  double best_ndcg10 = -1;
  std::vector<DevPoint> dev_curve;
  std::string out_dir;                 // "" when nothing was written
};

// Fine-tunes the encoder `base_encoder_spec` (any make_encoder spec resolving
// to use-lite, glove or bert) on `train`. With a dev set the model written is
// the best evaluation's, else the last. Progress on stderr; SIGINT throws
// Interrupted between steps, the last checkpoint stays valid. Throws
// ConfigError for invalid options or an unsupported encoder.
EncoderTrainReport train_encoder(const std::string& base_encoder_spec, std::span<const data::Triple> train,
                                 const EncoderTrainOptions& options);

// Learning-rate factor for optimizer step `step` (0-based) of `total`:
// linear warmup 0 -> 1 over `warmup` steps, then linear decay to 0 at `total`
// (Hugging Face's get_linear_schedule_with_warmup).
double warmup_linear_factor(size_t step, size_t total, size_t warmup);
// Warmup steps for a ratio: ceil(ratio * total).
size_t warmup_steps(double ratio, size_t total);

// The MNRL/InfoNCE loss on plain buffers (for tests and tools):
// queries [B, D], candidates [C, D] (C >= B, candidate i is query i's positive),
// mean_i -log softmax_j(scale * cos(q_i, c_j))[i]. `masked` lists (row, column)
// pairs left out of the softmax (duplicates of the row's positive).
double mnrl_loss_value(std::span<const float> queries, std::span<const float> candidates, size_t dim,
                       double scale, std::span<const std::pair<size_t, size_t>> masked = {});

// Writes an SVG line chart of the training loss (left axis) and dev nDCG@10
// (right axis) against the step, read from a metrics JSONL file.
void write_training_plot(const std::string& metrics_path, const std::string& svg_path);

}  // namespace verity::train
