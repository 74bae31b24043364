// The torch half of encoder training: trainable backbones, the MNRL loss, the
// loop (AdamW, warmup + linear decay, clipping), checkpoints, dev nDCG@10.
#include "train/encoder_training.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <unordered_map>

#include "core/atomic_dir.hpp"
#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "core/section_file.hpp"
#include "data/beir.hpp"
#include "encode/bert.hpp"
#include "encode/detail/bert_model.hpp"
#include "encode/glove.hpp"
#include "encode/model_dir.hpp"
#include "encode/registry.hpp"
#include "eval/metrics.hpp"
#include "train/detail/torch_state.hpp"

namespace verity::train {
namespace fs = std::filesystem;
using detail::load_module_bytes;
using detail::module_bytes;

namespace {

constexpr std::string_view kCheckpointMagic = "VECK";
constexpr uint32_t kCheckpointVersion = 1;

// An encoder whose pooled output is differentiable in its trainable weights.
class Backbone {
 public:
  virtual ~Backbone() = default;
  virtual std::string architecture() const = 0;
  virtual std::string base_spec() const = 0;
  virtual std::string base_name() const = 0;
  virtual torch::nn::Module& module() = 0;
  // Pooled sentence vectors [B, D], not normalized.
  virtual torch::Tensor embed(const std::vector<const std::string*>& texts) = 0;
  virtual void save(const std::string& dir, const std::string& name) = 0;
};

// Token ids per text, computed once.
class TokenCache {
 public:
  using Tokenize = std::function<std::vector<int64_t>(const std::string&)>;
  explicit TokenCache(Tokenize f) : f_(std::move(f)) {}
  const std::vector<int64_t>& operator()(const std::string& text) {
    auto it = cache_.find(text);
    if (it == cache_.end()) it = cache_.emplace(text, f_(text)).first;
    return it->second;
  }

 private:
  Tokenize f_;
  std::unordered_map<std::string, std::vector<int64_t>> cache_;
};

class UseLiteBackbone final : public Backbone {
 public:
  UseLiteBackbone(const std::string& spec, size_t max_length)
      : w_(detail::load_use_lite_weights(spec, "use-lite training")),
        ids_([this](const std::string& t) { return detail::use_lite_ids(w_, t); }) {
    if (max_length > 0) w_.max_length = std::min(w_.max_length, max_length);
  }
  std::string architecture() const override { return "use-lite"; }
  std::string base_spec() const override { return w_.encoder->spec(); }
  std::string base_name() const override { return w_.config.name; }
  torch::nn::Module& module() override { return *w_.net; }
  torch::Tensor embed(const std::vector<const std::string*>& texts) override {
    std::vector<const std::vector<int64_t>*> ids;
    for (const auto* t : texts) ids.push_back(&ids_(*t));
    return detail::run_use_lite(w_, ids).pooled;
  }
  void save(const std::string& dir, const std::string& name) override {
    detail::save_use_lite_weights(w_, dir, name);
  }

 private:
  detail::UseLiteWeights w_;
  TokenCache ids_;
};

class BertBackbone final : public Backbone {
 public:
  BertBackbone(std::unique_ptr<encode::Encoder> encoder, size_t max_length)
      : encoder_(std::move(encoder)), bert_(dynamic_cast<encode::BertEncoder&>(*encoder_)),
        max_length_(max_length > 0 ? std::min(max_length, bert_.max_length()) : bert_.max_length()),
        ids_([this](const std::string& t) {
          const auto e = bert_.tokenizer().encode(t, max_length_);
          return std::vector<int64_t>(e.ids.begin(), e.ids.end());
        }) {}
  std::string architecture() const override { return "bert"; }
  std::string base_spec() const override { return bert_.spec(); }
  std::string base_name() const override { return bert_.impl().name; }
  torch::nn::Module& module() override { return *bert_.impl().model; }
  torch::Tensor embed(const std::vector<const std::string*>& texts) override {
    std::vector<const std::vector<int64_t>*> rows;
    for (const auto* t : texts) rows.push_back(&ids_(*t));
    const auto [ids, mask] = encode::detail::pad_batch(rows, int64_t(bert_.tokenizer().pad_id()));
    return encode::detail::pool_hidden(bert_.impl().model->forward(ids, mask), mask, bert_.pooling());
  }
  void save(const std::string& dir, const std::string& name) override { encode::save_bert(bert_, dir, name); }

 private:
  std::unique_ptr<encode::Encoder> encoder_;
  encode::BertEncoder& bert_;
  size_t max_length_;
  TokenCache ids_;
};

// GloVe: the rows of the words that occur in the training texts are the
// trainable parameters (a [V_train, D] table initialized from the vectors);
// every other word keeps its vector. Pooling = mean over in-vocabulary tokens
// (OOV dropped), as GloveEncoder computes it.
struct GloveTable : torch::nn::Module {
  explicit GloveTable(torch::Tensor init) { weight = register_parameter("weight", std::move(init)); }
  torch::Tensor weight;
};

class GloveBackbone final : public Backbone {
 public:
  GloveBackbone(std::unique_ptr<encode::Encoder> encoder, size_t max_length,
                std::span<const data::Triple> train)
      : encoder_(std::move(encoder)), glove_(dynamic_cast<encode::GloveEncoder&>(*encoder_)),
        max_length_(max_length),
        rows_([this](const std::string& t) {
          std::vector<int64_t> rows;
          for (const auto& tok : glove_.analyze(t)) {
            if (tok.row < 0) continue;
            if (max_length_ > 0 && rows.size() >= max_length_) break;
            rows.push_back(tok.row);
          }
          return rows;
        }) {
    std::vector<int64_t> vocab;
    for (const auto& t : train)
      for (const auto* text : {&t.query, &t.positive, &t.negative})
        for (auto r : rows_(*text))
          if (slot_.emplace(r, int64_t(vocab.size())).second) vocab.push_back(r);
    const auto d = int64_t(glove_.dim());
    auto init = torch::empty({int64_t(vocab.size()), d});
    for (size_t i = 0; i < vocab.size(); ++i) {
      const auto v = glove_.vector(vocab[i]);
      std::copy(v.begin(), v.end(), init[int64_t(i)].data_ptr<float>());
    }
    vocab_ = std::move(vocab);
    table_ = std::make_shared<GloveTable>(init);
  }
  std::string architecture() const override { return "glove"; }
  std::string base_spec() const override { return glove_.spec(); }
  std::string base_name() const override { return encode::read_model_config(base_dir()).name; }
  torch::nn::Module& module() override { return *table_; }
  torch::Tensor embed(const std::vector<const std::string*>& texts) override {
    const auto b = int64_t(texts.size()), d = int64_t(glove_.dim());
    std::vector<int64_t> text_of, slot_of;
    auto frozen = torch::zeros({b, d});
    auto counts = torch::zeros({b, 1});
    for (int64_t i = 0; i < b; ++i) {
      const auto& rows = rows_(*texts[size_t(i)]);
      counts[i][0] = double(rows.size());
      float* f = frozen[i].data_ptr<float>();
      for (auto r : rows) {
        auto it = slot_.find(r);
        if (it != slot_.end()) {
          text_of.push_back(i);
          slot_of.push_back(it->second);
        } else {
          const auto v = glove_.vector(r);
          for (int64_t k = 0; k < d; ++k) f[k] += v[size_t(k)];
        }
      }
    }
    auto sum = frozen;
    if (!slot_of.empty())
      sum = frozen.index_add(0, torch::tensor(text_of, torch::kLong),
                             table_->weight.index_select(0, torch::tensor(slot_of, torch::kLong)));
    return sum / counts.clamp_min(1);
  }
  void save(const std::string& dir, const std::string& name) override {
    std::vector<float> table(glove_.vocab_size() * glove_.dim());
    for (size_t r = 0; r < glove_.vocab_size(); ++r) {
      const auto v = glove_.vector(int64_t(r));
      std::copy(v.begin(), v.end(), table.begin() + ptrdiff_t(r * glove_.dim()));
    }
    auto w = table_->weight.detach().contiguous();
    for (size_t i = 0; i < vocab_.size(); ++i)
      std::copy(w[int64_t(i)].data_ptr<float>(), w[int64_t(i)].data_ptr<float>() + glove_.dim(),
                table.begin() + ptrdiff_t(size_t(vocab_[i]) * glove_.dim()));
    encode::save_glove(glove_, table, dir, name,
                       {{"fine_tuned_from", path_for_report(base_dir())}, {"fine_tuned_rows", std::to_string(vocab_.size())}});
  }

 private:
  std::string base_dir() const { return glove_.spec().substr(std::string("glove:").size()); }
  std::unique_ptr<encode::Encoder> encoder_;
  encode::GloveEncoder& glove_;
  size_t max_length_;
  TokenCache rows_;
  std::unordered_map<int64_t, int64_t> slot_;  // vocabulary row -> trainable row
  std::vector<int64_t> vocab_;                 // trainable row -> vocabulary row
  std::shared_ptr<GloveTable> table_;
};

std::unique_ptr<Backbone> make_backbone(const std::string& spec, const EncoderTrainOptions& o,
                                        std::span<const data::Triple> train) {
  auto encoder = encode::make_encoder(spec);
  if (dynamic_cast<encode::GloveEncoder*>(encoder.get()))
    return std::make_unique<GloveBackbone>(std::move(encoder), o.max_length, train);
  if (dynamic_cast<encode::BertEncoder*>(encoder.get()))
    return std::make_unique<BertBackbone>(std::move(encoder), o.max_length);
  return std::make_unique<UseLiteBackbone>(spec, o.max_length);  // ConfigError when not use-lite
}

torch::Tensor unit_rows(const torch::Tensor& x) { return x / x.norm(2, {1}, true).clamp_min(1e-12); }

// MNRL on embeddings: q [B, D], c [C, D]; mask [B, C] bool (true = left out) or undefined.
torch::Tensor mnrl_loss(const torch::Tensor& q, const torch::Tensor& c, const torch::Tensor& mask, double scale) {
  auto logits = unit_rows(q).matmul(unit_rows(c).t()) * scale;
  if (mask.defined()) logits = logits.masked_fill(mask, -std::numeric_limits<double>::infinity());
  return torch::nn::functional::cross_entropy(logits, torch::arange(q.size(0), torch::kLong));
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

// Dev evaluation: exact dense retrieval over an in-memory (sub)corpus.
class DevSet {
 public:
  DevSet(const EncoderTrainOptions& o) {
    auto ds = data::load_beir(o.dev_dataset, o.dev_split);
    for (const auto& q : ds.queries) {
      auto it = ds.qrels.find(q.id);
      if (it == ds.qrels.end()) continue;
      if (o.dev_max_queries && queries_.size() >= o.dev_max_queries) break;
      queries_.push_back(q);
      qrels_[q.id] = it->second;
    }
    VERITY_CHECK(!queries_.empty(), ConfigError, o.dev_dataset, ": split '", o.dev_split,
                 "' has no query with qrels");
    std::vector<uint8_t> keep(ds.corpus.size(), o.dev_max_docs == 0);
    size_t kept = o.dev_max_docs == 0 ? ds.corpus.size() : 0;
    if (o.dev_max_docs) {
      for (const auto& [qid, docs] : qrels_)
        for (const auto& [doc, grade] : docs)
          if (auto i = ds.corpus.find(doc); i && !keep[*i]) keep[*i] = 1, ++kept;
      std::vector<size_t> order(ds.corpus.size());
      std::iota(order.begin(), order.end(), 0);
      std::mt19937_64 rng(0x5eed);  // fixed: the same dev corpus for every training seed
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t i : order) {
        if (kept >= o.dev_max_docs) break;
        if (!keep[i]) keep[i] = 1, ++kept;
      }
    }
    for (size_t i = 0; i < ds.corpus.size(); ++i)
      if (keep[i]) {
        doc_ids_.push_back(ds.corpus.docs[i].id);
        doc_texts_.push_back(ds.corpus.indexed_text(i));
      }
    log("dev: ", queries_.size(), " queries of ", o.dev_dataset, " (", o.dev_split, "), ", doc_ids_.size(),
        " of ", ds.corpus.size(), " documents");
  }

  double ndcg10(Backbone& model) const {
    torch::NoGradGuard no_grad;
    model.module().train(false);
    const auto docs = embed_all(model, doc_texts_);
    std::vector<std::string> qtexts;
    for (const auto& q : queries_) qtexts.push_back(q.text);
    const auto qs = embed_all(model, qtexts);
    model.module().train(true);
    const auto scores = qs.matmul(docs.t());
    const auto k = std::min<int64_t>(10, scores.size(1));
    const auto [values, idx] = scores.topk(k, 1);
    eval::Run run;
    for (size_t i = 0; i < queries_.size(); ++i) {
      auto& list = run[queries_[i].id];
      for (int64_t j = 0; j < k; ++j)
        list.push_back({doc_ids_[size_t(idx[int64_t(i)][j].item<int64_t>())],
                        values[int64_t(i)][j].item<double>()});
    }
    eval::EvalOptions eo;
    eo.metrics = {{eval::Metric::kNdcg, 10}};
    return eval::evaluate(run, qrels_, eo).mean.at("ndcg@10");
  }
  size_t queries() const { return queries_.size(); }
  size_t docs() const { return doc_ids_.size(); }

 private:
  static torch::Tensor embed_all(Backbone& model, const std::vector<std::string>& texts) {
    // Similar lengths together: less padding.
    std::vector<size_t> order(texts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return texts[a].size() < texts[b].size(); });
    std::vector<torch::Tensor> parts(texts.size());
    constexpr size_t kChunk = 64;
    for (size_t begin = 0; begin < order.size(); begin += kChunk) {
      check_interrupt();
      std::vector<const std::string*> chunk;
      for (size_t i = begin; i < std::min(order.size(), begin + kChunk); ++i) chunk.push_back(&texts[order[i]]);
      const auto e = unit_rows(model.embed(chunk));
      for (size_t i = 0; i < chunk.size(); ++i) parts[order[begin + i]] = e[int64_t(i)];
    }
    return torch::stack(parts);
  }
  std::vector<data::Query> queries_;
  eval::Qrels qrels_;
  std::vector<std::string> doc_ids_, doc_texts_;
};

// Everything besides tensors that a resumed run needs to continue exactly.
struct LoopState {
  size_t step = 0, examples = 0, best_step = 0, bad_evals = 0;
  double best = -1;
  std::vector<DevPoint> curve;
  double window_loss = 0;  // loss sum since the last metrics line
  size_t window_steps = 0;
};

std::string checkpoint_path(const std::string& dir) { return (fs::path(dir) / "checkpoint.veck").string(); }

void save_checkpoint(const std::string& dir, const LoopState& s, const std::string& fingerprint,
                     Backbone& model, const torch::optim::Optimizer& optimizer, const std::string& best) {
  fs::create_directories(dir);
  nlohmann::json curve = nlohmann::json::array();
  for (const auto& p : s.curve) curve.push_back({p.step, p.ndcg10});
  const nlohmann::json state = {{"fingerprint", fingerprint}, {"step", s.step},
                                {"examples", s.examples},     {"best_step", s.best_step},
                                {"bad_evals", s.bad_evals},   {"best", s.best},
                                {"curve", curve},             {"window_loss", s.window_loss},
                                {"window_steps", s.window_steps}, {"has_best", !best.empty()}};
  SectionWriter out(checkpoint_path(dir), kCheckpointMagic, kCheckpointVersion);
  const auto text = state.dump(2);
  out.add("STAT", text.data(), text.size());
  const auto weights = module_bytes(model.module());
  out.add("MODL", weights.data(), weights.size());
  if (!best.empty()) out.add("BEST", best.data(), best.size());
  const auto optim = detail::optimizer_bytes(optimizer);
  out.add("OPTM", optim.data(), optim.size());
  out.commit();
}

void load_checkpoint(const std::string& dir, LoopState& s, const std::string& fingerprint, Backbone& model,
                     torch::optim::Optimizer& optimizer, std::string& best) {
  const auto path = checkpoint_path(dir);
  SectionFile f(path, kCheckpointMagic, kCheckpointVersion);
  bool has_best = false;
  try {
    const auto j = nlohmann::json::parse(detail::section_string(f, "STAT"));
    const auto stored = j.at("fingerprint").get<std::string>();
    VERITY_CHECK(stored == fingerprint, ConfigError, path,
                 ": checkpoint was made for a different run; stored fingerprint '", stored, "', this run '",
                 fingerprint, "'");
    s.step = j.at("step").get<size_t>();
    s.examples = j.at("examples").get<size_t>();
    s.best_step = j.at("best_step").get<size_t>();
    s.bad_evals = j.at("bad_evals").get<size_t>();
    s.best = j.at("best").get<double>();
    s.window_loss = j.at("window_loss").get<double>();
    s.window_steps = j.at("window_steps").get<size_t>();
    s.curve.clear();
    for (const auto& p : j.at("curve")) s.curve.push_back({p.at(0).get<size_t>(), p.at(1).get<double>()});
    has_best = j.at("has_best").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": section 'STAT': ", e.what()));
  }
  try {
    load_module_bytes(model.module(), detail::section_string(f, "MODL"));
    detail::load_optimizer_bytes(optimizer, detail::section_string(f, "OPTM"));
  } catch (const c10::Error& e) {
    throw FormatError(cat(path, ": model/optimizer state does not load: ", e.what_without_backtrace()));
  }
  best = has_best ? detail::section_string(f, "BEST") : std::string();
}

// Keeps the metrics lines of steps <= `step` (a resumed run rewrites the rest).
void truncate_metrics(const std::string& path, size_t step) {
  if (!file_exists(path)) return;
  std::string kept;
  for_each_line(path, [&](std::string_view line, size_t) {
    if (line.empty()) return;
    try {
      if (nlohmann::json::parse(line).at("step").get<size_t>() <= step) kept += cat(line, "\n");
    } catch (const nlohmann::json::exception&) {  // a torn last line of a killed run
    }
  });
  write_file_atomic(path, kept);
}

uint64_t triples_hash(std::span<const data::Triple> train) {
  uint64_t h = fnv1a64("", 0);
  for (const auto& t : train)
    for (const auto* s : {&t.query, &t.positive, &t.negative}) {
      h = fnv1a64(s->data(), s->size(), h);
      h = fnv1a64("\x1f", 1, h);
    }
  return h;
}

void check_options(const EncoderTrainOptions& o) {
  VERITY_CHECK(o.batch_size >= 1, ConfigError, "train-encoder: batch size must be >= 1");
  VERITY_CHECK(o.lr > 0, ConfigError, "train-encoder: lr=", o.lr, " must be > 0");
  VERITY_CHECK(o.scale > 0, ConfigError, "train-encoder: scale=", o.scale, " must be > 0");
  VERITY_CHECK(o.warmup_ratio >= 0 && o.warmup_ratio <= 1, ConfigError, "train-encoder: warmup ratio ",
               o.warmup_ratio, " must be in [0, 1]");
  VERITY_CHECK(o.weight_decay >= 0, ConfigError, "train-encoder: weight decay must be >= 0");
  VERITY_CHECK(o.grad_clip >= 0, ConfigError, "train-encoder: grad clip must be >= 0 (0 = off)");
  VERITY_CHECK(o.epochs >= 1 || o.max_steps >= 1, ConfigError, "train-encoder: epochs or max steps must be >= 1");
  VERITY_CHECK(!o.resume || !o.checkpoint_dir.empty(), ConfigError,
               "train-encoder: resume needs a checkpoint directory");
  VERITY_CHECK(o.patience == 0 || !o.dev_dataset.empty(), ConfigError,
               "train-encoder: patience needs a dev dataset");
  VERITY_CHECK(o.plot_path.empty() || !o.metrics_path.empty(), ConfigError,
               "train-encoder: the plot is drawn from the metrics log; set a metrics path");
}

}  // namespace

double warmup_linear_factor(size_t step, size_t total, size_t warmup) {
  if (step < warmup) return double(step) / double(warmup);
  if (total <= warmup) return 0.0;
  return std::max(0.0, double(total - std::min(step, total)) / double(total - warmup));
}

size_t warmup_steps(double ratio, size_t total) { return size_t(std::ceil(ratio * double(total) - 1e-9)); }

double mnrl_loss_value(std::span<const float> queries, std::span<const float> candidates, size_t dim,
                       double scale, std::span<const std::pair<size_t, size_t>> masked) {
  VERITY_CHECK(dim > 0 && queries.size() % dim == 0 && candidates.size() % dim == 0 &&
                   candidates.size() >= queries.size(),
               ConfigError, "mnrl_loss_value: shapes do not fit dim ", dim);
  const auto b = int64_t(queries.size() / dim), c = int64_t(candidates.size() / dim);
  auto q = torch::from_blob(const_cast<float*>(queries.data()), {b, int64_t(dim)}).to(torch::kDouble);
  auto cand = torch::from_blob(const_cast<float*>(candidates.data()), {c, int64_t(dim)}).to(torch::kDouble);
  torch::Tensor mask;
  if (!masked.empty()) {
    mask = torch::zeros({b, c}, torch::kBool);
    for (auto [i, j] : masked) mask[int64_t(i)][int64_t(j)] = true;
  }
  return mnrl_loss(q, cand, mask, scale).item<double>();
}

EncoderTrainReport train_encoder(const std::string& base_spec, std::span<const data::Triple> train_all,
                                 const EncoderTrainOptions& o) {
  check_options(o);
  if (o.threads > 0) torch::set_num_threads(o.threads);
  EncoderTrainReport report;
  std::vector<data::Triple> train;
  for (const auto& t : train_all)
    if (!t.query.empty() && !t.positive.empty() && !t.negative.empty()) train.push_back(t);
  report.dropped_triples = train_all.size() - train.size();
  report.train_triples = train.size();
  VERITY_CHECK(!train.empty(), ConfigError, "train-encoder: no training triples");
  if (report.dropped_triples) log("train-encoder: dropped ", report.dropped_triples, " triples with an empty text");

  auto model = make_backbone(base_spec, o, train);
  // The spec as provenance names it: a resolved model directory relative to the
  // working directory, never a machine's absolute path.
  report.base_spec = spec_for_report(model->base_spec());
  report.architecture = model->architecture();
  auto params = model->module().parameters();
  for (const auto& p : params) report.trainable_parameters += size_t(p.numel());
  torch::optim::AdamW optimizer(params, torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));

  const size_t n = train.size(), bsz = o.batch_size;
  const size_t per_epoch = (n + bsz - 1) / bsz;
  const size_t total = o.max_steps ? o.max_steps : o.epochs * per_epoch;
  const size_t warmup = warmup_steps(o.warmup_ratio, total);
  report.total_steps = total;
  const std::string fingerprint =
      cat(o.fingerprint, "|encoder=", report.base_spec, "|arch=", report.architecture,
          "|params=", report.trainable_parameters, "|train=", n, "/", triples_hash(train), "|scale=", o.scale,
          "|batch=", bsz, "|lr=", o.lr, "|warmup=", warmup, "|wd=", o.weight_decay, "|clip=", o.grad_clip,
          "|total=", total, "|seed=", o.seed, "|max_length=", o.max_length, "|dev=", o.dev_dataset, "/",
          o.dev_split, "/", o.dev_max_queries, "/", o.dev_max_docs, "/", o.eval_every);

  std::unique_ptr<DevSet> dev;
  if (!o.dev_dataset.empty()) dev = std::make_unique<DevSet>(o);

  LoopState s;
  std::string best;  // module bytes of the best evaluation
  if (o.resume) {
    if (verity::file_exists(checkpoint_path(o.checkpoint_dir))) {
      load_checkpoint(o.checkpoint_dir, s, fingerprint, *model, optimizer, best);
      report.resumed_from_step = s.step;
      log("resumed from ", checkpoint_path(o.checkpoint_dir), " at step ", s.step, " of ", total);
    } else {
      log("no checkpoint in ", o.checkpoint_dir, "; starting from scratch");
    }
  }
  const nlohmann::json provenance = {
      {"type", "run"},          {"step", 0},
      {"encoder", report.base_spec}, {"architecture", report.architecture},
      {"fingerprint", fingerprint}, {"command", o.command},
      {"seed", o.seed},         {"batch_size", bsz},
      {"lr", o.lr},             {"scale", o.scale},
      {"warmup_steps", warmup}, {"total_steps", total},
      {"weight_decay", o.weight_decay}, {"grad_clip", o.grad_clip},
      {"train_triples", n},     {"trainable_parameters", report.trainable_parameters}};
  if (!o.metrics_path.empty()) {
    if (s.step > 0) truncate_metrics(o.metrics_path, s.step);
    else write_file_atomic(o.metrics_path, provenance.dump() + "\n");
  }
  std::ofstream metrics;
  if (!o.metrics_path.empty()) {
    metrics.open(o.metrics_path, std::ios::app);
    VERITY_CHECK(metrics.is_open(), Error, o.metrics_path, ": cannot open the metrics log for appending");
  }
  auto metric_line = [&](const nlohmann::json& j) {
    if (!metrics.is_open()) return;
    metrics << j.dump() << "\n";
    metrics.flush();
  };
  auto checkpoint = [&] {
    if (!o.checkpoint_dir.empty()) save_checkpoint(o.checkpoint_dir, s, fingerprint, *model, optimizer, best);
  };
  const auto run_start = std::chrono::steady_clock::now();
  auto evaluate = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    const double v = dev->ndcg10(*model);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.curve.push_back({s.step, v});
    if (v > s.best) {
      s.best = v;
      s.best_step = s.step;
      s.bad_evals = 0;
      best = module_bytes(model->module());
    } else {
      ++s.bad_evals;
    }
    log("step ", s.step, ": dev nDCG@10 ", v, " (best ", s.best, " at step ", s.best_step, "), ", secs, " s");
    metric_line({{"type", "eval"}, {"step", s.step}, {"ndcg@10", v}, {"best_ndcg@10", s.best},
                 {"seconds", secs}});
  };

  model->module().train(true);
  double step_seconds = 0;
  size_t examples_here = 0, order_epoch = SIZE_MAX;
  std::vector<size_t> order;
  Progress progress("train-encoder", total);
  progress.add(s.step);
  try {
    const auto eval_due = [&](size_t step) {
      return dev && (step == 0 || step == total || (o.eval_every ? step % o.eval_every == 0 : step % per_epoch == 0));
    };
    // The base model's score; after a resume, an evaluation an interruption cut short.
    if (eval_due(s.step) && (s.curve.empty() || s.curve.back().step != s.step)) evaluate();
    while (s.step < total) {
      check_interrupt();
      if (o.stop_at_step && s.step >= o.stop_at_step) {
        report.stopped_early_by_request = true;
        break;
      }
      if (o.patience && s.bad_evals >= o.patience) {
        report.early_stopped = true;
        log("early stop: no dev gain in ", s.bad_evals, " evaluations");
        break;
      }
      const size_t epoch = s.step / per_epoch, k = s.step % per_epoch;
      if (epoch != order_epoch) order = detail::epoch_order(n, o.seed, epoch), order_epoch = epoch;
      const auto t0 = std::chrono::steady_clock::now();
      const size_t begin = k * bsz, end = std::min(n, begin + bsz), b = end - begin;
      // Unique texts of the batch, one forward pass.
      std::vector<const std::string*> texts;
      std::unordered_map<std::string_view, int64_t> slot;
      auto slot_of = [&](const std::string& t) {
        auto [it, added] = slot.emplace(t, int64_t(texts.size()));
        if (added) texts.push_back(&t);
        return it->second;
      };
      std::vector<int64_t> qi, ci;
      for (size_t i = begin; i < end; ++i) qi.push_back(slot_of(train[order[i]].query));
      for (size_t i = begin; i < end; ++i) ci.push_back(slot_of(train[order[i]].positive));
      for (size_t i = begin; i < end; ++i) ci.push_back(slot_of(train[order[i]].negative));
      // Not negatives of row i: a candidate with the text of row i's positive, and
      // the positive of another row with the same query text (also relevant to it).
      auto mask = torch::zeros({int64_t(b), int64_t(ci.size())}, torch::kBool);
      bool any_masked = false;
      for (size_t i = 0; i < b; ++i)
        for (size_t j = 0; j < ci.size(); ++j)
          if (j != i && (ci[j] == ci[i] || (j < b && qi[j] == qi[i])))
            mask[int64_t(i)][int64_t(j)] = true, any_masked = true;
      const double lr = o.lr * warmup_linear_factor(s.step, total, warmup);
      for (auto& g : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
      const auto emb = model->embed(texts);
      const auto loss = mnrl_loss(emb.index_select(0, torch::tensor(qi, torch::kLong)),
                                  emb.index_select(0, torch::tensor(ci, torch::kLong)),
                                  any_masked ? mask : torch::Tensor(), o.scale);
      optimizer.zero_grad();
      loss.backward();
      double grad_norm = 0;
      if (o.grad_clip > 0) grad_norm = torch::nn::utils::clip_grad_norm_(params, o.grad_clip);
      optimizer.step();
      const double value = loss.item<double>();
      ++s.step;
      s.examples += b;
      examples_here += b;
      s.window_loss += value;
      ++s.window_steps;
      step_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      progress.add();
      if (o.log_every && (s.step % o.log_every == 0 || s.step == total)) {
        report.final_loss = s.window_loss / double(s.window_steps);
        metric_line({{"type", "train"}, {"step", s.step}, {"epoch", double(s.step) / double(per_epoch)},
                     {"loss", report.final_loss}, {"lr", lr}, {"grad_norm", grad_norm},
                     {"examples_per_s", step_seconds > 0 ? double(examples_here) / step_seconds : 0.0},
                     {"elapsed_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count()}});
        s.window_loss = 0;
        s.window_steps = 0;
      }
      const bool eval_now = eval_due(s.step);
      if (eval_now) evaluate();
      if ((o.checkpoint_every && s.step % o.checkpoint_every == 0) || eval_now) checkpoint();
    }
  } catch (const Interrupted&) {
    checkpoint();  // between steps: the state is consistent
    throw;
  }
  progress.finish();
  checkpoint();
  report.steps = s.step;
  report.examples = s.examples;
  report.best_step = s.best_step;
  report.best_ndcg10 = s.best;
  report.dev_curve = s.curve;
  if (report.final_loss == 0 && s.window_steps) report.final_loss = s.window_loss / double(s.window_steps);
  report.train_seconds = step_seconds;
  report.examples_per_second = step_seconds > 0 ? double(examples_here) / step_seconds : 0;
  if (!report.stopped_early_by_request) {
    if (!best.empty()) load_module_bytes(model->module(), best);
    model->module().train(false);
    if (!o.out_dir.empty()) {
      // The model and its training.json appear together: both are written into a
      // staging directory that then replaces out_dir in one step.
      fs::path out_path = fs::path(o.out_dir).lexically_normal();
      if (out_path.filename().empty()) out_path = out_path.parent_path();
      const std::string out_dir = out_path.string();
      VERITY_CHECK(!verity::file_exists(out_dir) || encode::is_model_dir(out_dir) ||
                       verity::is_empty_directory(out_dir),
                   ConfigError, out_dir, " exists and is not a verity model directory; not replacing it");
      remove_stale_siblings(out_dir);
      const std::string staging = out_dir + ".tmp." + std::to_string(::getpid());
      struct RemoveUnlessMoved {
        std::string path;
        ~RemoveUnlessMoved() {
          std::error_code ec;
          if (!path.empty()) fs::remove_all(path, ec);
        }
      } cleanup{staging};
      model->save(staging, o.name.empty() ? model->base_name() + "-ft" : o.name);
      report.out_dir = o.out_dir;
      nlohmann::json curve = nlohmann::json::array();
      for (const auto& p : s.curve) curve.push_back({{"step", p.step}, {"ndcg@10", p.ndcg10}});
      auto info = provenance;
      info.erase("type");
      info.erase("step");
      info["format"] = "verity-training";
      info["steps"] = s.step;
      info["examples"] = s.examples;
      info["best_step"] = s.best_step;
      info["best_ndcg@10"] = s.best;
      info["dev"] = {{"dataset", o.dev_dataset}, {"split", o.dev_split}, {"curve", curve}};
      write_file_atomic((fs::path(staging) / "training.json").string(), info.dump(2) + "\n");
      replace_directory(staging, out_dir);
      cleanup.path.clear();
    }
    if (!o.plot_path.empty()) {  // check_options: a plot needs the metrics log
      metrics.close();
      write_training_plot(o.metrics_path, o.plot_path);
    }
  }
  report.peak_rss_mb = peak_rss_mb();
  return report;
}

}  // namespace verity::train
