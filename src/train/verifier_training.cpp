// The torch half of verifier training: losses, batched maps, the training
// loop, checkpoints. The only translation unit of src/train that includes torch.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "core/section_file.hpp"
#include "encode/detail/use_lite_model.hpp"
#include "encode/model_dir.hpp"
#include "encode/registry.hpp"
#include "encode/safetensors.hpp"
#include "encode/use_lite.hpp"
#include "train/detail/losses.hpp"
#include "train/detail/torch_state.hpp"
#include "train/verifier_training.hpp"
#include "verify/detail/learned_modules.hpp"

namespace verity::train {

namespace detail {

std::unique_ptr<Loss> make_loss(const std::string& name, double margin, double mnrl_scale) {
  if (name == "pairwise") return std::make_unique<PairwiseLogisticLoss>();
  if (name == "margin") {
    VERITY_CHECK(margin > 0 && margin <= 1, ConfigError, "loss margin: m=", margin,
                 " must be in (0, 1] (it compares sigmoid scores)");
    return std::make_unique<MarginLoss>(margin);
  }
  if (name == "mnrl") {
    VERITY_CHECK(mnrl_scale > 0, ConfigError, "loss mnrl: scale=", mnrl_scale, " must be > 0");
    return std::make_unique<MnrlLoss>(mnrl_scale);
  }
  throw ConfigError(cat("loss '", name, "' is unknown (valid: pairwise, margin, mnrl)"));
}

}  // namespace detail

namespace {

using detail::load_module_bytes;
using detail::load_optimizer_bytes;
using detail::module_bytes;
using detail::optimizer_bytes;
using detail::section_string;

constexpr std::string_view kCheckpointMagic = "VTCK";
constexpr uint32_t kCheckpointVersion = 1;

// Maps of pairs on one canvas [P, H, W] from per-pair token rows that are
// already L2-normalized and cropped to map_size: M[i][j] = <q_i, c_j> as in
// SimilarityMap. Differentiable in the rows (end-to-end mode).
verify::detail::MapBatch maps_from_rows(const std::vector<torch::Tensor>& q,
                                        const std::vector<torch::Tensor>& c, size_t map_size,
                                        size_t multiple) {
  const auto m = int64_t(multiple);
  auto round_up = [&](int64_t n) { return std::min(int64_t(map_size), (std::max<int64_t>(n, 1) + m - 1) / m * m); };
  int64_t h = 1, w = 1;
  for (size_t k = 0; k < q.size(); ++k) {
    h = std::max(h, q[k].size(0));
    w = std::max(w, c[k].size(0));
  }
  h = round_up(h);
  w = round_up(w);
  const auto p = int64_t(q.size());
  std::vector<torch::Tensor> qs, cs;
  auto qm = torch::zeros({p, h}), cm = torch::zeros({p, w});
  for (int64_t k = 0; k < p; ++k) {
    qs.push_back(torch::constant_pad_nd(q[k], {0, 0, 0, h - q[k].size(0)}));
    cs.push_back(torch::constant_pad_nd(c[k], {0, 0, 0, w - c[k].size(0)}));
    qm[k].narrow(0, 0, q[k].size(0)).fill_(1);
    cm[k].narrow(0, 0, c[k].size(0)).fill_(1);
  }
  return {torch::bmm(torch::stack(qs), torch::stack(cs).transpose(1, 2)),
          qm.unsqueeze(2) * cm.unsqueeze(1)};
}

// Rows divided by their L2 norm; zero rows stay zero (SimilarityMap's rule).
torch::Tensor normalize_rows(const torch::Tensor& x) {
  auto norm = x.pow(2).sum(1, true).sqrt();
  return x / norm.clamp_min(1e-30);
}

// Where a batch's maps come from.
class MapSource {
 public:
  virtual ~MapSource() = default;
  virtual verify::detail::MapBatch pairs(const std::vector<std::pair<uint32_t, uint32_t>>& ps) = 0;
};

// Frozen: token rows of each text normalized once and cached.
class FrozenMaps final : public MapSource {
 public:
  FrozenMaps(const TextBank& bank, size_t map_size, size_t multiple)
      : bank_(bank), map_size_(map_size), multiple_(multiple), rows_(bank.size()) {}

  verify::detail::MapBatch pairs(const std::vector<std::pair<uint32_t, uint32_t>>& ps) override {
    std::vector<torch::Tensor> q, c;
    for (auto [a, b] : ps) {
      q.push_back(rows(a));
      c.push_back(rows(b));
    }
    return maps_from_rows(q, c, map_size_, multiple_);
  }

 private:
  const torch::Tensor& rows(uint32_t id) {
    auto& t = rows_.at(id);
    if (!t.defined()) {
      const auto src = bank_.tokens(id);
      const auto n = int64_t(std::min(bank_.num_tokens(id), map_size_)), d = int64_t(bank_.dim());
      auto x = torch::from_blob(const_cast<float*>(src.data()), {n, d}, torch::kFloat);
      t = normalize_rows(x.to(torch::kDouble)).to(torch::kFloat);
    }
    return t;
  }
  const TextBank& bank_;
  size_t map_size_, multiple_;
  std::vector<torch::Tensor> rows_;
};

// Everything besides tensors that a resumed run needs to continue exactly.
struct LoopState {
  size_t step = 0, epoch = 0, step_in_epoch = 0, examples = 0;
  size_t best_epoch = 0, bad_epochs = 0;
  double best_dev = -1, epoch_loss_sum = 0;
  std::vector<EpochReport> epochs;
};

nlohmann::json state_json(const LoopState& s, const std::string& fingerprint) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& e : s.epochs)
    epochs.push_back({{"epoch", e.epoch}, {"train_loss", e.train_loss},
                      {"dev_accuracy", e.dev_accuracy}, {"seconds", e.seconds}});
  return {{"fingerprint", fingerprint}, {"step", s.step},           {"epoch", s.epoch},
          {"step_in_epoch", s.step_in_epoch}, {"examples", s.examples},
          {"best_epoch", s.best_epoch},   {"bad_epochs", s.bad_epochs}, {"best_dev", s.best_dev},
          {"epoch_loss_sum", s.epoch_loss_sum}, {"epochs", epochs}};
}

std::string checkpoint_path(const std::string& dir) {
  return (std::filesystem::path(dir) / "checkpoint.vtck").string();
}

// Modules whose weights a run trains: the verifier, and in end-to-end mode
// the encoder. Stored in checkpoints as sections MOD0, MOD1 (current) and
// BST0, BST1 (best dev epoch).
using Modules = std::vector<torch::nn::Module*>;
using ModuleBytes = std::vector<std::string>;

ModuleBytes all_bytes(const Modules& modules) {
  ModuleBytes out;
  for (auto* m : modules) out.push_back(module_bytes(*m));
  return out;
}

void save_checkpoint(const std::string& dir, const LoopState& s, const std::string& fingerprint,
                     const Modules& modules, const torch::optim::Optimizer& optimizer,
                     const ModuleBytes& best) {
  std::filesystem::create_directories(dir);
  SectionWriter out(checkpoint_path(dir), kCheckpointMagic, kCheckpointVersion);
  auto state = state_json(s, fingerprint);
  state["modules"] = modules.size();
  state["has_best"] = !best.empty();
  const auto state_text = state.dump(2);
  out.add("STAT", state_text.data(), state_text.size());
  for (size_t i = 0; i < modules.size(); ++i) {
    const auto bytes = module_bytes(*modules[i]);
    out.add(cat("MOD", i), bytes.data(), bytes.size());
  }
  for (size_t i = 0; i < best.size(); ++i) out.add(cat("BST", i), best[i].data(), best[i].size());
  const auto optim = optimizer_bytes(optimizer);
  out.add("OPTM", optim.data(), optim.size());
  out.commit();
}

// Restores modules, optimizer, loop state and best weights; a checkpoint of
// other data, model or hyperparameters is a ConfigError.
void load_checkpoint(const std::string& dir, LoopState& s, const std::string& fingerprint,
                     const Modules& modules, torch::optim::Optimizer& optimizer, ModuleBytes& best) {
  const auto path = checkpoint_path(dir);
  SectionFile f(path, kCheckpointMagic, kCheckpointVersion);
  bool has_best = false;
  try {
    const auto j = nlohmann::json::parse(section_string(f, "STAT"));
    const auto stored = j.at("fingerprint").get<std::string>();
    VERITY_CHECK(stored == fingerprint, ConfigError, path,
                 ": checkpoint was made for a different run; stored fingerprint '", stored,
                 "', this run '", fingerprint, "'");
    VERITY_CHECK(j.at("modules").get<size_t>() == modules.size(), FormatError, path, ": holds ",
                 j.at("modules").get<size_t>(), " modules, this run trains ", modules.size());
    has_best = j.at("has_best").get<bool>();
    s.step = j.at("step").get<size_t>();
    s.epoch = j.at("epoch").get<size_t>();
    s.step_in_epoch = j.at("step_in_epoch").get<size_t>();
    s.examples = j.at("examples").get<size_t>();
    s.best_epoch = j.at("best_epoch").get<size_t>();
    s.bad_epochs = j.at("bad_epochs").get<size_t>();
    s.best_dev = j.at("best_dev").get<double>();
    s.epoch_loss_sum = j.at("epoch_loss_sum").get<double>();
    s.epochs.clear();
    for (const auto& e : j.at("epochs"))
      s.epochs.push_back({e.at("epoch").get<size_t>(), e.at("train_loss").get<double>(),
                          e.at("dev_accuracy").get<double>(), e.at("seconds").get<double>()});
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": section 'STAT': ", e.what()));
  }
  try {
    for (size_t i = 0; i < modules.size(); ++i) load_module_bytes(*modules[i], section_string(f, cat("MOD", i)));
    load_optimizer_bytes(optimizer, section_string(f, "OPTM"));
  } catch (const c10::Error& e) {
    throw FormatError(cat(path, ": model/optimizer state does not load: ", e.what_without_backtrace()));
  }
  best.clear();
  if (has_best)
    for (size_t i = 0; i < modules.size(); ++i) best.push_back(section_string(f, cat("BST", i)));
}

// The triples one epoch visits, in order: a permutation of all of them, or
// with per_type > 0 that many of every type (each type's triples taken from
// seeded shuffles, cycled when the type has fewer), shuffled together.
// Depends only on (seed, epoch), so a resumed run sees the same order.
std::vector<size_t> epoch_order(const std::vector<IndexedTriple>& train, size_t per_type, uint64_t seed,
                                size_t epoch) {
  if (per_type == 0) return detail::epoch_order(train.size(), seed, epoch);
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + epoch + 1);
  std::vector<size_t> order;
  std::map<std::string, std::vector<size_t>> by_type;
  for (size_t i = 0; i < train.size(); ++i) by_type[train[i].type].push_back(i);
  for (auto& [type, ids] : by_type) {
    for (size_t taken = 0; taken < per_type;) {
      std::shuffle(ids.begin(), ids.end(), rng);
      const size_t k = std::min(ids.size(), per_type - taken);
      order.insert(order.end(), ids.begin(), ids.begin() + long(k));
      taken += k;
    }
  }
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

size_t epoch_size(const std::vector<IndexedTriple>& train, size_t per_type) {
  if (per_type == 0) return train.size();
  std::set<std::string> types;
  for (const auto& t : train) types.insert(t.type);
  return per_type * types.size();
}

size_t train_width(const TrainOptions& opt, size_t map_size, size_t multiple) {
  if (opt.train_map_width == 0 || opt.train_map_width >= map_size) return map_size;
  VERITY_CHECK(opt.train_map_width % multiple == 0, ConfigError, "train: map width ", opt.train_map_width,
               " must be a multiple of ", multiple, " for this model");
  return opt.train_map_width;
}

void check_options(const TrainOptions& opt) {
  VERITY_CHECK(opt.dev_metric == "micro" || opt.dev_metric == "macro" || opt.dev_metric == "min", ConfigError,
               "train: dev metric '", opt.dev_metric, "' is unknown (valid: micro, macro, min)");
  VERITY_CHECK(opt.batch_size > 0, ConfigError, "train: batch size must be > 0");
  VERITY_CHECK(opt.lr > 0, ConfigError, "train: lr=", opt.lr, " must be > 0");
  VERITY_CHECK(opt.epochs > 0, ConfigError, "train: epochs must be > 0");
  VERITY_CHECK(!opt.resume || !opt.checkpoint_dir.empty(), ConfigError,
               "train: resume needs a checkpoint directory");
}

// A triple with an empty side has an empty map, which inference scores 0
// without the model: nothing to learn from it.
template <typename TokenCount>
std::vector<IndexedTriple> scorable(std::span<const IndexedTriple> all, TokenCount tokens) {
  std::vector<IndexedTriple> out;
  for (const auto& t : all)
    if (tokens(t.query) && tokens(t.positive) && tokens(t.negative)) out.push_back(t);
  if (out.size() != all.size())
    log("train: skipped ", all.size() - out.size(), " triples with a text of no tokens");
  VERITY_CHECK(!out.empty(), ConfigError, "train: no training triples");
  return out;
}

// The training loop shared by both modes. modules[0] is the verifier.
TrainReport run_loop(verify::LearnedVerifier& model, MapSource& maps, const Modules& modules,
                     torch::optim::Optimizer& optimizer, const std::vector<IndexedTriple>& train,
                     const std::function<double()>& dev_accuracy, const TrainOptions& opt,
                     const std::string& fingerprint_base) {
  const auto loss = detail::make_loss(opt.loss, opt.margin, opt.mnrl_scale);
  if (loss->needs_in_batch())
    VERITY_CHECK(opt.batch_size >= 2, ConfigError, "train: mnrl needs batch size >= 2");
  auto& impl = model.impl();
  const std::string fingerprint =
      cat(opt.fingerprint, fingerprint_base, "|loss=", loss->spec(), "|batch=", opt.batch_size,
          "|lr=", opt.lr, "|wd=", opt.weight_decay, "|seed=", opt.seed, "|model=", model.kind(),
          "/", model.parameter_count(), "|train=", train.size(), "|per_type=", opt.per_type,
          "|width=", opt.train_map_width);

  LoopState s;
  ModuleBytes best;  // weights of the best dev epoch; empty = none yet
  TrainReport report;
  if (opt.resume) {
    if (verity::file_exists(checkpoint_path(opt.checkpoint_dir))) {
      load_checkpoint(opt.checkpoint_dir, s, fingerprint, modules, optimizer, best);
      report.resumed_from_step = s.step;
      log("resumed from ", checkpoint_path(opt.checkpoint_dir), " at step ", s.step, " (epoch ",
          s.epoch + 1, ", step ", s.step_in_epoch, " of it)");
    } else {
      log("no checkpoint in ", opt.checkpoint_dir, "; starting from scratch");
    }
  }
  auto checkpoint = [&] {
    if (!opt.checkpoint_dir.empty())
      save_checkpoint(opt.checkpoint_dir, s, fingerprint, modules, optimizer, best);
  };
  auto set_train = [&](bool on) {
    for (auto* m : modules) m->train(on);
  };

  const size_t n = epoch_size(train, opt.per_type), bsz = opt.batch_size;
  const size_t steps_per_epoch = (n + bsz - 1) / bsz;
  double step_seconds = 0;
  size_t examples_here = 0;
  set_train(true);
  bool stop = s.epoch >= opt.epochs || (opt.patience && s.bad_epochs >= opt.patience);
  while (!stop && s.epoch < opt.epochs) {
    const auto order = epoch_order(train, opt.per_type, opt.seed, s.epoch);
    const auto epoch_start = std::chrono::steady_clock::now();
    Progress progress(cat("epoch ", s.epoch + 1, "/", opt.epochs), steps_per_epoch);
    progress.add(s.step_in_epoch);
    for (size_t k = s.step_in_epoch; k < steps_per_epoch; ++k) {
      check_interrupt();
      if (opt.max_steps && s.step >= opt.max_steps) {
        report.stopped_at_max_steps = true;
        stop = true;
        break;
      }
      const auto t0 = std::chrono::steady_clock::now();
      const size_t begin = k * bsz, end = std::min(n, begin + bsz), b = end - begin;
      std::vector<std::pair<uint32_t, uint32_t>> pairs;
      if (loss->needs_in_batch()) {
        // Row i: query i against [pos_1..pos_b, neg_1..neg_b].
        for (size_t i = begin; i < end; ++i)
          for (int side = 0; side < 2; ++side)
            for (size_t j = begin; j < end; ++j) {
              const auto& c = train[order[j]];
              pairs.emplace_back(train[order[i]].query, side == 0 ? c.positive : c.negative);
            }
      } else {
        for (size_t i = begin; i < end; ++i) pairs.emplace_back(train[order[i]].query, train[order[i]].positive);
        for (size_t i = begin; i < end; ++i) pairs.emplace_back(train[order[i]].query, train[order[i]].negative);
      }
      const auto logits = impl.forward_logits(maps.pairs(pairs));
      const auto bi = int64_t(b);
      const auto value = loss->needs_in_batch()
                             ? loss->forward(logits.view({bi, 2 * bi}), torch::Tensor())
                             : loss->forward(logits.narrow(0, 0, bi), logits.narrow(0, bi, bi));
      optimizer.zero_grad();
      value.backward();
      optimizer.step();
      ++s.step;
      s.step_in_epoch = k + 1;
      s.examples += b;
      examples_here += b;
      s.epoch_loss_sum += value.item<double>() * double(b);
      step_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      progress.add();
      if (opt.checkpoint_every && s.step % opt.checkpoint_every == 0) checkpoint();
    }
    if (stop) break;
    progress.finish();
    EpochReport e;
    e.epoch = s.epoch + 1;
    e.train_loss = s.epoch_loss_sum / double(n);
    if (dev_accuracy) {
      set_train(false);
      e.dev_accuracy = dev_accuracy();
      set_train(true);
      if (e.dev_accuracy > s.best_dev) {
        s.best_dev = e.dev_accuracy;
        s.best_epoch = e.epoch;
        s.bad_epochs = 0;
        best = all_bytes(modules);
      } else {
        ++s.bad_epochs;
      }
    }
    e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
    s.epochs.push_back(e);
    log("epoch ", e.epoch, ": train loss ", e.train_loss,
        dev_accuracy ? cat(", dev pairwise acc ", e.dev_accuracy, " (best ", s.best_dev,
                           " at epoch ", s.best_epoch, ")")
                     : std::string(),
        ", ", e.seconds, " s");
    ++s.epoch;
    s.step_in_epoch = 0;
    s.epoch_loss_sum = 0;
    checkpoint();
    if (opt.patience && s.bad_epochs >= opt.patience) {
      report.early_stopped = true;
      log("early stop: no dev gain for ", s.bad_epochs, " epochs");
      break;
    }
  }
  if (!best.empty() && !report.stopped_at_max_steps)
    for (size_t i = 0; i < modules.size(); ++i) load_module_bytes(*modules[i], best[i]);
  set_train(false);

  report.steps = s.step;
  report.examples = s.examples;
  report.epochs_completed = s.epoch;
  report.best_epoch = s.best_epoch;
  report.best_dev_accuracy = s.best_dev;
  report.epochs = s.epochs;
  report.train_seconds = step_seconds;
  report.examples_per_second = step_seconds > 0 ? double(examples_here) / step_seconds : 0;
  return report;
}

}  // namespace

TrainReport train_frozen(verify::LearnedVerifier& model, const TextBank& bank,
                         std::span<const IndexedTriple> train_all, std::span<const IndexedTriple> dev,
                         const TrainOptions& opt) {
  check_options(opt);
  const auto train = scorable(train_all, [&](uint32_t id) { return bank.num_tokens(id); });
  auto& impl = model.impl();
  FrozenMaps maps(bank, train_width(opt, impl.map_size(), impl.canvas_multiple()), impl.canvas_multiple());
  torch::optim::AdamW optimizer(impl.module().parameters(),
                                torch::optim::AdamWOptions(opt.lr).weight_decay(opt.weight_decay));
  std::function<double()> dev_accuracy;
  if (!dev.empty()) dev_accuracy = [&] { return pairwise_accuracy(model, bank, dev).select(opt.dev_metric); };
  return run_loop(model, maps, {&impl.module()}, optimizer, train, dev_accuracy, opt, "|mode=frozen");
}

namespace {

// USE-lite as a trainable module plus the token ids of every bank text.
struct UseLiteTrainee {
  detail::UseLiteWeights w;
  std::vector<std::vector<int64_t>> ids;  // per bank text, cut to max_length
};

UseLiteTrainee load_trainee(const std::string& spec, const TextBank& bank) {
  UseLiteTrainee t{detail::load_use_lite_weights(spec, "end-to-end training fine-tunes USE-lite"), {}};
  for (uint32_t id = 0; id < bank.size(); ++id) t.ids.push_back(detail::use_lite_ids(t.w, bank.text(id)));
  return t;
}

// Token outputs [n_tokens, 512] of each text (not normalized), one forward pass.
std::vector<torch::Tensor> encode_texts(UseLiteTrainee& t, const std::vector<uint32_t>& texts) {
  std::vector<const std::vector<int64_t>*> ids;
  for (auto id : texts) ids.push_back(&t.ids[id]);
  const auto out = detail::run_use_lite(t.w, ids).tokens;
  std::vector<torch::Tensor> rows;
  for (size_t k = 0; k < texts.size(); ++k)
    rows.push_back(out[int64_t(k)].narrow(0, 0, int64_t(t.ids[texts[k]].size())));
  return rows;
}

class EncoderMaps final : public MapSource {
 public:
  EncoderMaps(UseLiteTrainee& t, size_t map_size, size_t multiple)
      : t_(t), map_size_(map_size), multiple_(multiple) {}
  verify::detail::MapBatch pairs(const std::vector<std::pair<uint32_t, uint32_t>>& ps) override {
    std::vector<uint32_t> texts;
    std::unordered_map<uint32_t, size_t> slot;
    for (auto [a, b] : ps)
      for (auto id : {a, b})
        if (slot.emplace(id, texts.size()).second) texts.push_back(id);
    const auto rows = encode_texts(t_, texts);
    std::vector<torch::Tensor> normalized;
    for (const auto& r : rows)
      normalized.push_back(normalize_rows(r.narrow(0, 0, std::min<int64_t>(r.size(0), int64_t(map_size_)))));
    std::vector<torch::Tensor> q, c;
    for (auto [a, b] : ps) {
      q.push_back(normalized[slot[a]]);
      c.push_back(normalized[slot[b]]);
    }
    return maps_from_rows(q, c, map_size_, multiple_);
  }

 private:
  UseLiteTrainee& t_;
  size_t map_size_, multiple_;
};

// A bank holding the current encoder's token vectors of the texts `triples` use.
TextBank encode_with_net(UseLiteTrainee& t, const TextBank& bank, std::span<const IndexedTriple> triples) {
  TextBank out;
  for (uint32_t id = 0; id < bank.size(); ++id) out.add(bank.text(id));
  std::vector<uint32_t> todo;
  std::vector<uint8_t> seen(bank.size(), 0);
  for (const auto& tr : triples)
    for (auto id : {tr.query, tr.positive, tr.negative})
      if (!seen[id]) seen[id] = 1, todo.push_back(id);
  c10::InferenceMode inference;
  constexpr size_t kChunk = 64;
  for (size_t begin = 0; begin < todo.size(); begin += kChunk) {
    std::vector<uint32_t> chunk(todo.begin() + long(begin), todo.begin() + long(std::min(todo.size(), begin + kChunk)));
    const auto rows = encode_texts(t, chunk);
    for (size_t k = 0; k < chunk.size(); ++k) {
      auto r = rows[k].contiguous();
      out.set_tokens(chunk[k], std::vector<float>(r.data_ptr<float>(), r.data_ptr<float>() + r.numel()),
                     size_t(t.w.net->shape.hidden));
    }
  }
  return out;
}

}  // namespace

TrainReport train_end_to_end(verify::LearnedVerifier& model, const TextBank& bank,
                             std::span<const IndexedTriple> train_all, std::span<const IndexedTriple> dev,
                             const TrainOptions& opt, const EndToEndOptions& e2e) {
  check_options(opt);
  VERITY_CHECK(e2e.encoder_lr > 0, ConfigError, "train: encoder lr=", e2e.encoder_lr, " must be > 0");
  VERITY_CHECK(!e2e.encoder_out.empty(), ConfigError, "train: end-to-end mode needs an output directory for the encoder");
  auto trainee = load_trainee(e2e.encoder, bank);
  const auto train = scorable(train_all, [&](uint32_t id) { return trainee.ids[id].size(); });
  auto& impl = model.impl();
  EncoderMaps maps(trainee, train_width(opt, impl.map_size(), impl.canvas_multiple()), impl.canvas_multiple());
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(impl.module().parameters(),
                      std::make_unique<torch::optim::AdamWOptions>(
                          torch::optim::AdamWOptions(opt.lr).weight_decay(opt.weight_decay)));
  groups.emplace_back(trainee.w.net->parameters(),
                      std::make_unique<torch::optim::AdamWOptions>(
                          torch::optim::AdamWOptions(e2e.encoder_lr).weight_decay(opt.weight_decay)));
  torch::optim::AdamW optimizer(std::move(groups), torch::optim::AdamWOptions(opt.lr));
  std::function<double()> dev_accuracy;
  if (!dev.empty())
    dev_accuracy = [&] {
      const auto dev_bank = encode_with_net(trainee, bank, dev);
      return pairwise_accuracy(model, dev_bank, dev).select(opt.dev_metric);
    };
  auto report = run_loop(model, maps, {&impl.module(), trainee.w.net.get()}, optimizer, train, dev_accuracy,
                         opt, cat("|mode=end2end|encoder=", path_for_report(trainee.w.model_dir), "|encoder_lr=", e2e.encoder_lr));
  if (!report.stopped_at_max_steps) detail::save_use_lite_weights(trainee.w, e2e.encoder_out, "use-lite-ft");
  return report;
}

}  // namespace verity::train
