// verity train-encoder: fine-tunes a dense encoder (USE-lite, GloVe, BERT) on
// triple JSONL with the MNRL/InfoNCE loss. Details: docs/TRAINING.md
// ("Encoder training").

#include "cli/command.hpp"
#include "core/crc32c.hpp"
#include "core/log.hpp"
#include "data/triples.hpp"
#include "train/encoder_training.hpp"

namespace verity::cli {
namespace {

struct TrainEncoderArgs {
  CommonFlags common;
  std::string encoder = "use-lite";
  std::vector<std::string> train;
  std::string out;
  train::EncoderTrainOptions options;
};

void run_train_encoder(TrainEncoderArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  auto& o = a.options;
  o.out_dir = a.out;
  o.command = invocation();
  std::vector<data::Triple> triples;
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& path : a.train) {
    auto f = data::read_triples(path);
    inputs.push_back({{"path", path}, {"fnv1a64", hex64(f.content_hash)}, {"triples", f.triples.size()}});
    o.fingerprint += cat("|", path, "=", hex64(f.content_hash));
    for (auto& t : f.triples) triples.push_back(std::move(t));
  }
  log("train-encoder: ", triples.size(), " triples from ", a.train.size(), " file(s), encoder ", a.encoder);
  const auto r = train::train_encoder(a.encoder, triples, o);
  nlohmann::json curve = nlohmann::json::array();
  for (const auto& p : r.dev_curve) curve.push_back({{"step", p.step}, {"ndcg@10", p.ndcg10}});
  nlohmann::json summary = {
      {"command", invocation()},
      {"encoder", r.base_spec},
      {"architecture", r.architecture},
      {"trainable_parameters", r.trainable_parameters},
      {"inputs", inputs},
      {"train_triples", r.train_triples},
      {"dropped_triples", r.dropped_triples},
      {"seed", o.seed},
      {"scale", o.scale},
      {"batch_size", o.batch_size},
      {"lr", o.lr},
      {"warmup_ratio", o.warmup_ratio},
      {"weight_decay", o.weight_decay},
      {"grad_clip", o.grad_clip},
      {"steps", r.steps},
      {"total_steps", r.total_steps},
      {"examples", r.examples},
      {"resumed_from_step", r.resumed_from_step},
      {"early_stopped", r.early_stopped},
      {"stopped_at_step", r.stopped_early_by_request},
      {"final_loss", r.final_loss},
      {"train_seconds", r.train_seconds},
      {"examples_per_s", r.examples_per_second},
      {"peak_rss_mb", r.peak_rss_mb},
      {"best_step", r.best_step},
      {"best_ndcg@10", r.best_ndcg10},
      {"dev_curve", curve},
      {"dev_dataset", o.dev_dataset},
      {"dev_split", o.dev_split},
      {"metrics", o.metrics_path},
      {"plot", o.plot_path},
      {"out", r.out_dir},
  };
  log("train-encoder: ", r.steps, " steps, ", r.examples_per_second, " examples/s, peak RSS ", r.peak_rss_mb,
      " MB", r.out_dir.empty() ? std::string("; no model written") : cat("; wrote ", r.out_dir));
  if (a.common.json) print_json(summary);
}

void setup_train_encoder(CLI::App& app) {
  auto a = std::make_shared<TrainEncoderArgs>();
  auto& o = a->options;
  auto* cmd = app.add_subcommand("train-encoder",
                                 "Fine-tune a dense encoder on (query, positive, negative) triples (MNRL)");
  cmd->add_option("--encoder", a->encoder, "Base encoder: use-lite | glove | bert:DIR | model DIR")
      ->capture_default_str();
  cmd->add_option("--train", a->train, "Training triples (JSONL); repeat to concatenate files")->required();
  cmd->add_option("--out", a->out, "Output model directory (written atomically at the end)");
  cmd->add_option("--name", o.name, "Model name in verity.json (default: <base>-ft)");
  cmd->add_option("--scale", o.scale, "MNRL: cosine similarities are multiplied by this")->capture_default_str();
  cmd->add_option("--batch-size", o.batch_size, "Triples per step")->capture_default_str();
  cmd->add_option("--lr", o.lr, "Peak AdamW learning rate")->capture_default_str();
  cmd->add_option("--warmup-ratio", o.warmup_ratio, "Share of steps with linear warmup")->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "AdamW weight decay")->capture_default_str();
  cmd->add_option("--grad-clip", o.grad_clip, "Max gradient L2 norm (0: off)")->capture_default_str();
  cmd->add_option("--epochs", o.epochs, "Epochs (ignored with --max-steps)")->capture_default_str();
  cmd->add_option("--max-steps", o.max_steps, "Total optimizer steps, the schedule's length (0: epochs)");
  cmd->add_option("--stop-at-step", o.stop_at_step,
                  "Stop after N steps in total, keeping the checkpoint and writing no model (0: off)");
  cmd->add_option("--seed", o.seed, "Shuffling order")->capture_default_str();
  cmd->add_option("--max-length", o.max_length, "Tokens per text (0: the model's)")->capture_default_str();
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir, "Directory for checkpoint.veck");
  cmd->add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints (0: evals and end only)")
      ->capture_default_str();
  cmd->add_flag("--resume", o.resume, "Continue from --checkpoint-dir");
  cmd->add_option("--dev-dataset", o.dev_dataset, "BEIR dataset dir: dev nDCG@10 (dense, in memory)");
  cmd->add_option("--dev-split", o.dev_split, "qrels split of the dev dataset")->capture_default_str();
  cmd->add_option("--dev-max-queries", o.dev_max_queries, "First N dev queries with qrels (0: all)")
      ->capture_default_str();
  cmd->add_option("--dev-max-docs", o.dev_max_docs, "Judged docs + seeded others up to N (0: whole corpus)")
      ->capture_default_str();
  cmd->add_option("--eval-every", o.eval_every, "Steps between dev evaluations (0: each epoch)")
      ->capture_default_str();
  cmd->add_option("--patience", o.patience, "Early stop after N evaluations without gain (0: off)")
      ->capture_default_str();
  cmd->add_option("--metrics", o.metrics_path, "Metrics log (JSONL)");
  cmd->add_option("--log-every", o.log_every, "Steps between metrics lines")->capture_default_str();
  cmd->add_option("--plot", o.plot_path, "Training-curve SVG (needs --metrics)");
  cmd->add_option("--threads", o.threads, "torch threads (0: leave as is)")->capture_default_str();
  add_common_flags(cmd, a->common);
  cmd->callback([a] { run_train_encoder(*a); });
}

VERITY_REGISTER_COMMAND("train-encoder", setup_train_encoder);
}  // namespace
}  // namespace verity::cli
