#pragma once
// Configurations of `verity experiment tradeoff` and `verity experiment
// transfer` (docs/EXPERIMENTS.md). Both are JSON files; every error names the
// file and the field, e.g. `tradeoff.json: "train.max_steps": expected an
// integer >= 1, got -3`. Relative paths are resolved against the config
// file's directory.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace verity::experiment {

// The same budget for every arm: steps x batch size examples.
struct TrainSettings {
  size_t max_steps = 200;
  size_t batch_size = 32;
  double learning_rate = 2e-5;
  double scale = 20;          // MNRL scale
  double warmup_ratio = 0.1;  // share of max_steps with linear warmup
  size_t max_triples = 0;     // 0 = every training triple (after mixing)
  int threads = 2;            // torch intra-op threads
  // Peak learning rate per backbone spec, overriding learning_rate (GloVe's
  // word vectors need a far larger step than a Transformer's weights).
  std::vector<std::pair<std::string, double>> learning_rate_by_backbone;
  double learning_rate_for(const std::string &backbone) const {
    for (const auto &[b, lr] : learning_rate_by_backbone)
      if (b == backbone) return lr;
    return learning_rate;
  }
};

struct EvalDataset {
  std::string name;  // "cranfield"; default = the directory's basename
  std::string dir;
  std::string split = "test";
  bool in_domain = false;  // the training data came from this dataset
  size_t max_queries = 0;  // 0 = all
  // 0 = the whole corpus; else every judged document of the kept queries plus
  // a seeded sample of the others up to this many (a cheaper, easier ranking).
  size_t max_docs = 0;
};

struct TradeoffConfig {
  std::string path, out_dir;
  std::vector<std::string> backbones;  // encoder specs: use-lite, glove, ...
  std::vector<uint64_t> seeds;
  std::string standard_triples;    // Model A's data, and the standard part of B's
  std::string structural_triples;  // near-miss training triples mixed into B
  double structural_ratio = 0.3;   // share of B's triples that are structural
  TrainSettings train;
  std::vector<EvalDataset> eval;
  std::string nearmiss_test;        // near-miss test split (pairwise accuracy, geometry)
  size_t nearmiss_max_triples = 0;  // 0 = all
};

struct TransferSource {
  std::string name, triples;  // name as reported, JSONL triples path
};

struct TransferConfig {
  std::string path, out_dir;
  std::string backbone;
  std::vector<uint64_t> seeds;
  std::vector<TransferSource> sources;
  TrainSettings train;
  std::vector<EvalDataset> eval;  // transfer = nDCG@10 on eval[0]
  // diagnose (frozen backbone) over the same source files
  std::string idf_corpus;
  double tau = 0.05, gamma = 1.0;
  size_t bootstrap = 1000, matched_reps = 100;
};

// Parse from a file; `text` overloads let tests skip the filesystem.
TradeoffConfig parse_tradeoff_config(const std::string &path);
TransferConfig parse_transfer_config(const std::string &path);
TradeoffConfig parse_tradeoff_config_text(const std::string &text, const std::string &path);
TransferConfig parse_transfer_config_text(const std::string &text, const std::string &path);

}  // namespace verity::experiment
