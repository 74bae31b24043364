// Encoder training: the MNRL loss and the schedule by hand, a synthetic GloVe
// table whose loss must drop, interrupted-and-resumed runs that end identical
// to uninterrupted ones (GloVe, tiny BERT), saved models loading through
// make_encoder, dev evaluation and the training pairs / mixer.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <random>

#include "../cli/run_verity.hpp"
#include "../support/scratch_dir.hpp"
#include "../support/tiny_glove.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "data/triples.hpp"
#include "encode/model_dir.hpp"
#include "encode/registry.hpp"
#include "search/index_builder.hpp"
#include "train/encoder_training.hpp"
#include "train/training_pairs.hpp"

namespace fs = std::filesystem;
using namespace verity;
using namespace verity::train;

namespace {

fs::path temp_dir(const std::string& name) { return verity_test::fresh_dir("enc_train", name); }

// A tiny GloVe model: words a0..a5, b0..b5 and a few words of tests/fixtures/tiny_beir,
// dim 8, seeded random vectors (written as a wink package and converted).
std::string tiny_glove(const fs::path& root) { return verity_test::make_tiny_glove(root.string()); }

std::vector<data::Triple> paired_triples(size_t n = 6) {
  std::vector<data::Triple> out;
  for (size_t i = 0; i < n; ++i) {
    data::Triple t;
    t.query = cat("a", i);
    t.positive = cat("b", i);
    t.negative = cat("b", (i + 1) % n);
    out.push_back(t);
  }
  return out;
}

// (phrase, phrase + " again", a fixed unrelated sentence) per phrase.
std::vector<data::Triple> phrase_triples(std::initializer_list<const char*> phrases) {
  std::vector<data::Triple> out;
  for (const char* w : phrases) {
    data::Triple t;
    t.query = w;
    t.positive = cat(w, " again");
    t.negative = "an unrelated sentence about tea";
    out.push_back(t);
  }
  return out;
}

// MNRL loss of an encoder on triples, all in one batch (pooled vectors).
double loss_of(const std::string& spec, const std::vector<data::Triple>& triples, double scale) {
  auto enc = encode::make_encoder(spec);
  std::vector<std::string> q, c;
  for (const auto& t : triples) q.push_back(t.query), c.push_back(t.positive);
  for (const auto& t : triples) c.push_back(t.negative);
  encode::EncodeOptions eo;
  eo.with_tokens = false;
  const auto eq = enc->encode(q, eo), ec = enc->encode(c, eo);
  return mnrl_loss_value(eq.pooled, ec.pooled, enc->dim(), scale);
}

bool require_models() {
  const char* v = std::getenv("VERITY_REQUIRE_MODELS");
  return v && std::string(v) == "1";
}

}  // namespace

TEST(EncoderLoss, MnrlByHand) {
  // q1 = (1,0), q2 = (0,1); candidates p1 = (2,0), p2 = (1,1), n1 = (0,3), n2 = (-1,0).
  const std::vector<float> q = {1, 0, 0, 1};
  const std::vector<float> c = {2, 0, 1, 1, 0, 3, -1, 0};
  const double s = 20, r = 1 / std::sqrt(2.0);
  // Row 1 cosines: [1, r, 0, -1] (target column 0); row 2: [0, r, 1, 0] (target column 1).
  const double row1 = -std::log(std::exp(s) / (std::exp(s) + std::exp(s * r) + 1 + std::exp(-s)));
  const double row2 = -std::log(std::exp(s * r) / (1 + std::exp(s * r) + std::exp(s) + 1));
  EXPECT_NEAR(mnrl_loss_value(q, c, 2, s), (row1 + row2) / 2, 1e-9);
  // Masking (row 2, column 2) leaves it out of row 2's softmax.
  const std::vector<std::pair<size_t, size_t>> masked = {{1, 2}};
  const double row2m = -std::log(std::exp(s * r) / (1 + std::exp(s * r) + 1));
  EXPECT_NEAR(mnrl_loss_value(q, c, 2, s, masked), (row1 + row2m) / 2, 1e-9);
  // Scale 1: plain softmax over cosines.
  const double row1s1 = -std::log(std::exp(1.0) / (std::exp(1.0) + std::exp(r) + 1 + std::exp(-1.0)));
  const double row2s1 = -std::log(std::exp(r) / (1 + std::exp(r) + std::exp(1.0) + 1));
  EXPECT_NEAR(mnrl_loss_value(q, c, 2, 1.0), (row1s1 + row2s1) / 2, 1e-9);
}

TEST(EncoderLoss, WarmupThenLinearDecay) {
  EXPECT_EQ(warmup_steps(0.1, 10), 1u);
  EXPECT_EQ(warmup_steps(0.1, 25), 3u);
  EXPECT_EQ(warmup_steps(0.0, 25), 0u);
  EXPECT_EQ(warmup_steps(0.2, 10), 2u);
  // total 10, warmup 2: 0, 0.5, then 1 at step 2 decaying to 0 at step 10.
  EXPECT_DOUBLE_EQ(warmup_linear_factor(0, 10, 2), 0.0);
  EXPECT_DOUBLE_EQ(warmup_linear_factor(1, 10, 2), 0.5);
  EXPECT_DOUBLE_EQ(warmup_linear_factor(2, 10, 2), 1.0);
  EXPECT_DOUBLE_EQ(warmup_linear_factor(6, 10, 2), 0.5);
  EXPECT_DOUBLE_EQ(warmup_linear_factor(9, 10, 2), 0.125);
  EXPECT_DOUBLE_EQ(warmup_linear_factor(10, 10, 2), 0.0);
  // No warmup: full rate at step 0.
  EXPECT_DOUBLE_EQ(warmup_linear_factor(0, 4, 0), 1.0);
  EXPECT_DOUBLE_EQ(warmup_linear_factor(3, 4, 0), 0.25);
}

TEST(EncoderTraining, GloveLossDropsAndModelLoads) {
  const auto dir = temp_dir("glove_drop");
  const auto base = tiny_glove(dir);
  const auto triples = paired_triples();
  EncoderTrainOptions o;
  o.batch_size = 6;
  o.lr = 0.1;
  o.warmup_ratio = 0;
  o.weight_decay = 0;
  o.max_steps = 30;
  o.log_every = 5;
  o.out_dir = (dir / "ft").string();
  o.metrics_path = (dir / "metrics.jsonl").string();
  o.plot_path = (dir / "curve.svg").string();
  const auto r = train_encoder("glove:" + base, triples, o);
  EXPECT_EQ(r.architecture, "glove");
  EXPECT_EQ(r.steps, 30u);
  EXPECT_EQ(r.trainable_parameters, 12u * 8u);  // the 12 words the triples use
  const double before = loss_of("glove:" + base, triples, 20), after = loss_of(o.out_dir, triples, 20);
  EXPECT_LT(after, before * 0.5) << "before " << before << " after " << after;
  // The directory is a glove model; an untouched word keeps its vector.
  const auto cfg = encode::read_model_config(o.out_dir);
  EXPECT_EQ(cfg.architecture, "glove");
  EXPECT_EQ(cfg.get_string("fine_tuned_rows"), "12");
  auto b = encode::make_encoder("glove:" + base), t = encode::make_encoder(o.out_dir);
  encode::EncodeOptions eo;
  const std::vector<std::string> untouched = {"measles"};
  EXPECT_EQ(b->encode(untouched, eo).pooled, t->encode(untouched, eo).pooled);
  EXPECT_NE(search::encoder_fingerprint(b->spec()), search::encoder_fingerprint(t->spec()));
  EXPECT_NE(read_file(o.plot_path).find("<svg"), std::string::npos);
  const auto metrics = read_file(o.metrics_path);
  EXPECT_EQ(metrics.rfind("{", 0), 0u);
  EXPECT_EQ(nlohmann::json::parse(metrics.substr(0, metrics.find('\n'))).at("type"), "run");
  EXPECT_NE(metrics.find("\"type\":\"train\""), std::string::npos);
  const auto info = nlohmann::json::parse(read_file(o.out_dir + "/training.json"));
  EXPECT_EQ(info.at("steps"), 30);
  EXPECT_EQ(info.at("format"), "verity-training");
  // Provenance names the base model without a machine's absolute path.
  EXPECT_NE(cfg.get_string("fine_tuned_from").front(), '/') << cfg.get_string("fine_tuned_from");
  EXPECT_EQ(info.at("encoder").get<std::string>().find(":/"), std::string::npos) << info.at("encoder");
  EXPECT_EQ(info.at("fingerprint").get<std::string>().find("=glove:/"), std::string::npos) << info.at("fingerprint");
}

// Runs `total` steps straight, and again stopped at step k and resumed: the
// saved weights must be byte-identical.
void check_resume_exact(const std::string& spec, const std::vector<data::Triple>& triples, const fs::path& dir,
                        const std::string& weights_file) {
  EncoderTrainOptions o;
  o.batch_size = 3;
  o.lr = 0.01;
  o.warmup_ratio = 0.25;
  o.epochs = 3;  // 2 steps per epoch: 6 steps, order reshuffled per epoch
  o.seed = 5;
  o.out_dir = (dir / "straight").string();
  const auto straight = train_encoder(spec, triples, o);
  ASSERT_EQ(straight.steps, 6u);

  o.out_dir = (dir / "resumed").string();
  o.checkpoint_dir = (dir / "ckpt").string();
  o.checkpoint_every = 1;
  o.stop_at_step = 3;
  const auto first = train_encoder(spec, triples, o);
  EXPECT_TRUE(first.stopped_early_by_request);
  EXPECT_EQ(first.steps, 3u);
  EXPECT_FALSE(fs::exists(o.out_dir));  // no model before the run ends
  o.stop_at_step = 0;
  o.resume = true;
  const auto second = train_encoder(spec, triples, o);
  EXPECT_EQ(second.resumed_from_step, 3u);
  EXPECT_EQ(second.steps, 6u);
  EXPECT_EQ(read_file((dir / "straight" / weights_file).string()), read_file((dir / "resumed" / weights_file).string()));

  // A checkpoint of another run is refused; a damaged one is a FormatError.
  o.lr = 0.02;
  EXPECT_THROW(train_encoder(spec, triples, o), ConfigError);
  o.lr = 0.01;
  const auto ckpt = (dir / "ckpt" / "checkpoint.veck").string();
  auto bytes = read_file(ckpt);
  bytes[bytes.size() / 2] ^= 0x5a;
  write_file_atomic(ckpt, bytes);
  EXPECT_THROW(train_encoder(spec, triples, o), FormatError);
}

TEST(EncoderTraining, GloveResumeIsExact) {
  const auto dir = temp_dir("glove_resume");
  check_resume_exact("glove:" + tiny_glove(dir), paired_triples(), dir, "vectors.vgl");
}

TEST(EncoderTraining, BertResumeIsExactAndLoads) {
  const auto dir = temp_dir("bert_resume");
  const std::string base = std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/bert/tiny";
  const auto triples = phrase_triples({"the cat", "a dog", "hello world", "the end", "one two", "red blue"});
  check_resume_exact("bert:" + base, triples, dir, "model.safetensors");
  auto enc = encode::make_encoder((dir / "straight").string());
  EXPECT_EQ(enc->spec(), "bert:" + (dir / "straight").string());
  const std::vector<std::string> texts = {"the cat"};
  const auto a = enc->encode(texts, {}), b = encode::make_encoder("bert:" + base)->encode(texts, {});
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_NE(a.pooled, b.pooled);
}

TEST(EncoderTraining, UseLiteResumeIsExact) {
  if (!encode::is_model_dir(encode::model_root() + "/use-lite")) {
    if (require_models()) FAIL() << "models/use-lite missing";
    GTEST_SKIP() << "models/use-lite not converted";
  }
  const auto dir = temp_dir("use_lite_resume");
  const auto triples = phrase_triples({"the cat sat", "dogs bark", "rain falls", "stocks rose", "red sky", "cold tea"});
  check_resume_exact("use-lite", triples, dir, "model.safetensors");
}

TEST(EncoderTraining, DevEvaluationAndPatience) {
  const auto dir = temp_dir("dev");
  const auto base = tiny_glove(dir);
  EncoderTrainOptions o;
  o.batch_size = 3;
  o.lr = 0.05;
  o.epochs = 2;  // 4 steps
  o.dev_dataset = std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/tiny_beir";
  o.eval_every = 2;
  o.metrics_path = (dir / "m.jsonl").string();
  o.out_dir = (dir / "ft").string();
  const auto r = train_encoder("glove:" + base, paired_triples(), o);
  ASSERT_EQ(r.dev_curve.size(), 3u);  // steps 0 (base), 2, 4
  EXPECT_EQ(r.dev_curve[0].step, 0u);
  EXPECT_EQ(r.dev_curve[2].step, 4u);
  EXPECT_GE(r.best_ndcg10, 0.0);
  EXPECT_LE(r.best_ndcg10, 1.0);
  for (const auto& p : r.dev_curve) EXPECT_LE(p.ndcg10, r.best_ndcg10);
  EXPECT_TRUE(fs::exists(o.out_dir));

  o.patience = 1;
  o.lr = 1e-9;  // nothing moves, so nothing improves: stop after the first non-gain
  o.epochs = 10;
  const auto p = train_encoder("glove:" + base, paired_triples(), o);
  EXPECT_TRUE(p.early_stopped);
  EXPECT_EQ(p.steps, 2u);
  EXPECT_EQ(p.best_step, 0u);
}

TEST(EncoderTraining, UseLiteFineTuneLoads) {
  const auto base = encode::model_root() + "/use-lite";
  if (!encode::is_model_dir(base)) {
    if (require_models()) FAIL() << base << " missing";
    GTEST_SKIP() << "models/use-lite not converted";
  }
  const auto dir = temp_dir("use_lite");
  const auto triples = phrase_triples({"the cat sat", "dogs bark loudly", "rain falls in spring", "stocks rose today"});
  EncoderTrainOptions o;
  o.batch_size = 2;
  o.lr = 1e-4;
  o.max_steps = 2;
  o.out_dir = (dir / "ft").string();
  const auto r = train_encoder("use-lite", triples, o);
  EXPECT_EQ(r.architecture, "use-lite");
  EXPECT_GT(r.trainable_parameters, 6'000'000u);
  auto ft = encode::make_encoder(o.out_dir), b = encode::make_encoder("use-lite");
  EXPECT_EQ(ft->spec(), "use-lite:" + o.out_dir);
  EXPECT_EQ(encode::read_model_config(o.out_dir).name, "use-lite-ft");
  const std::vector<std::string> texts = {"the cat sat"};
  const auto x = ft->encode(texts, {}), y = b->encode(texts, {});
  ASSERT_EQ(x.dim, 512u);
  EXPECT_NE(x.pooled, y.pooled);
  double dot = 0;
  for (size_t i = 0; i < x.dim; ++i) dot += double(x.pooled[i]) * double(y.pooled[i]);
  EXPECT_GT(dot, 0.9);  // two small steps: still close to the base model
  EXPECT_NE(search::encoder_fingerprint(ft->spec()), search::encoder_fingerprint(b->spec()));
}

TEST(TrainingPairs, MixerKeepsBudgetAndRatio) {
  std::vector<data::Triple> standard(40), structural(30);
  for (size_t i = 0; i < standard.size(); ++i)
    standard[i] = {cat("q", i), cat("p", i), cat("n", i), "retrieval", "bm25", {}, {}, 0};
  for (size_t i = 0; i < structural.size(); ++i)
    structural[i] = {cat("s", i), cat("t", i), cat("u", i), i % 2 ? "negation" : "spatial", "generated", {}, {}, 0};
  const auto a = mix_triples(standard, structural, {0.0, 0, 1});
  EXPECT_EQ(a.triples.size(), 40u);
  EXPECT_EQ(a.structural, 0u);
  const auto b = mix_triples(standard, structural, {0.25, 0, 1});
  EXPECT_EQ(b.triples.size(), 40u);
  EXPECT_EQ(b.standard, 30u);
  EXPECT_EQ(b.structural, 10u);
  EXPECT_EQ(b.by_type.at("retrieval"), 30u);
  EXPECT_EQ(b.by_type.at("negation") + b.by_type.at("spatial"), 10u);
  const auto again = mix_triples(standard, structural, {0.25, 0, 1});
  for (size_t i = 0; i < b.triples.size(); ++i) EXPECT_EQ(b.triples[i].query, again.triples[i].query);
  EXPECT_THROW(mix_triples(standard, structural, {0.9, 0, 1}), ConfigError);  // 36 > 30 structural
  EXPECT_THROW(mix_triples(standard, structural, {1.5, 0, 1}), ConfigError);
}

TEST(TrainingPairs, CroppingAndTitleBody) {
  std::string doc;
  for (int i = 0; i < 300; ++i) doc += cat("w", i, " ");
  const std::vector<std::string> docs = {doc, doc + "extra words here"};
  CropOptions co;
  co.chunk_words = 100;
  co.min_chunk_words = 50;
  const auto crops = cropping_triples(docs, co);
  EXPECT_EQ(crops.size(), 6u);  // 3 chunks of 100 per document; the 3-word tail is dropped
  for (const auto& t : crops) {
    EXPECT_EQ(t.type, "crop");
    const auto words = [](const std::string& s) { return std::count(s.begin(), s.end(), ' ') + 1; };
    EXPECT_GE(words(t.query), 10);
    EXPECT_LE(words(t.query), 50);
    EXPECT_FALSE(t.negative.empty());
  }
  const auto data = data::load_beir(std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/tiny_beir");
  const auto tb = title_body_triples(data.corpus, 3);
  EXPECT_EQ(tb.size(), 4u);  // d5 has no title
  for (const auto& t : tb) {
    EXPECT_FALSE(t.query.empty());
    EXPECT_NE(t.positive, t.negative);
  }
}

TEST(EncoderTrainingCli, MixAndTrainJson) {
  const auto dir = temp_dir("cli");
  const auto base = tiny_glove(dir);
  std::vector<data::Triple> standard = paired_triples(), structural = paired_triples();
  for (auto& t : structural) t.type = "negation";
  data::write_triples((dir / "a.jsonl").string(), standard);
  data::write_triples((dir / "b.jsonl").string(), structural);
  auto mix = verity_test::run(cat("mix --standard ", dir / "a.jsonl", " --structural ", dir / "b.jsonl",
                                  " --ratio 0.5 --seed 2 --out ", dir / "mix.jsonl", " --json"));
  ASSERT_EQ(mix.status, 0) << mix.err;
  EXPECT_EQ(nlohmann::json::parse(mix.out).at("structural"), 3) << mix.out;
  auto tr = verity_test::run(cat("train-encoder --encoder glove:", base, " --train ", dir / "mix.jsonl",
                                 " --out ", dir / "model", " --batch-size 3 --max-steps 2 --quiet --json"));
  ASSERT_EQ(tr.status, 0) << tr.err;
  EXPECT_EQ(nlohmann::json::parse(tr.out).at("steps"), 2) << tr.out;  // stdout: one JSON object
  EXPECT_TRUE(encode::is_model_dir((dir / "model").string()));
  auto bad = verity_test::run(cat("train-encoder --encoder glove:", base, " --train ", dir / "missing.jsonl",
                                  " --out ", dir / "m2"));
  EXPECT_NE(bad.status, 0);
  auto no_metrics = verity_test::run(cat("train-encoder --encoder glove:", base, " --train ", dir / "mix.jsonl",
                                         " --plot ", dir / "c.svg", " --max-steps 1"));
  EXPECT_EQ(no_metrics.status, 2) << no_metrics.err;  // usage error: the plot needs --metrics
  EXPECT_NE(no_metrics.err.find("metrics"), std::string::npos) << no_metrics.err;
}

// Across processes: stopped at step 2 of 4, resumed, equal to a straight run.
TEST(EncoderTrainingCli, ResumeAcrossProcesses) {
  const auto dir = temp_dir("cli_resume");
  const auto base = tiny_glove(dir);
  data::write_triples((dir / "mix.jsonl").string(), paired_triples());
  const auto common = cat("train-encoder --encoder glove:", base, " --train ", dir / "mix.jsonl",
                          " --batch-size 3 --max-steps 4 --lr 0.01 --seed 3 --quiet");
  ASSERT_EQ(verity_test::run(cat(common, " --out ", dir / "straight")).status, 0);
  ASSERT_EQ(verity_test::run(cat(common, " --checkpoint-dir ", dir / "ck", " --stop-at-step 2 --out ", dir / "r"))
                .status,
            0);
  EXPECT_FALSE(fs::exists(dir / "r"));
  ASSERT_EQ(verity_test::run(cat(common, " --checkpoint-dir ", dir / "ck", " --resume --out ", dir / "r")).status, 0);
  EXPECT_EQ(read_file((dir / "straight" / "vectors.vgl").string()), read_file((dir / "r" / "vectors.vgl").string()));
}
