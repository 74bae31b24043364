// Verifier training: losses on hand-computed inputs, a synthetic task the CNN
// must learn, checkpoint/resume exactness, checkpoint damage, and the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "../cli/run_verity.hpp"
#include "../support/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/section_file.hpp"
#include "data/triples.hpp"
#include "train/detail/losses.hpp"
#include "train/retrieval_triples.hpp"
#include "train/token_cache.hpp"
#include "train/verifier_training.hpp"
#include "verify/detail/learned_modules.hpp"

namespace fs = std::filesystem;
using namespace verity;
using namespace verity::train;

namespace {

fs::path temp_dir(const std::string& name) { return verity_test::fresh_dir("train", name); }

TEST(Losses, PairwiseLogisticByHand) {
  auto loss = train::detail::make_loss("pairwise", 0.2, 1.0);
  auto v = loss->forward(torch::tensor({2.0f, 0.0f}), torch::tensor({0.0f, 0.0f})).item<double>();
  // (softplus(-2) + softplus(0)) / 2 = (log(1 + e^-2) + log 2) / 2
  EXPECT_NEAR(v, (std::log1p(std::exp(-2.0)) + std::log(2.0)) / 2, 1e-6);
}

TEST(Losses, MarginByHand) {
  auto loss = train::detail::make_loss("margin", 0.2, 1.0);
  EXPECT_NEAR(loss->forward(torch::tensor({0.0f}), torch::tensor({0.0f})).item<double>(), 0.2, 1e-7);
  // sigmoid(1) - sigmoid(0) = 0.2310586 > 0.2: no loss.
  EXPECT_NEAR(loss->forward(torch::tensor({1.0f}), torch::tensor({0.0f})).item<double>(), 0.0, 1e-7);
  // 0.2 - (sigmoid(0.5) - sigmoid(0)) = 0.2 - 0.1224593
  EXPECT_NEAR(loss->forward(torch::tensor({0.5f}), torch::tensor({0.0f})).item<double>(),
              0.2 - (1 / (1 + std::exp(-0.5)) - 0.5), 1e-6);
}

TEST(Losses, MnrlByHand) {
  auto loss = train::detail::make_loss("mnrl", 0.2, 2.0);
  ASSERT_TRUE(loss->needs_in_batch());
  // Row b: [pos_1, pos_2, neg_1, neg_2]; target column b; softmax over 2 * sigmoid(logit).
  auto all = torch::tensor({1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.5f, 0.0f, 1.0f}).view({2, 4});
  auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
  const double e1 = std::exp(2 * sig(1)), eh = std::exp(2 * sig(0.5)), e0 = std::exp(1.0);
  const double row0 = -std::log(e1 / (e1 + 3 * e0));
  const double row1 = -std::log(eh / (e0 + eh + e0 + e1));
  EXPECT_NEAR(loss->forward(all, torch::Tensor()).item<double>(), (row0 + row1) / 2, 1e-6);
}

TEST(Losses, UnknownNameListsValid) {
  try {
    train::detail::make_loss("hinge", 0.2, 1.0);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("pairwise, margin, mnrl"), std::string::npos) << e.what();
  }
  EXPECT_THROW(train::detail::make_loss("margin", 0.0, 1.0), ConfigError);
}

// Synthetic structure task: the query is a sequence of random unit tokens, the
// positive the same sequence (diagonal map), the negative the same tokens in
// reverse order (anti-diagonal map). Both candidates hold the same token set,
// so only the map's structure separates them.
struct Synthetic {
  TextBank bank;
  std::vector<IndexedTriple> train, test;
};

Synthetic make_synthetic(size_t n_train, size_t n_test, uint64_t seed) {
  Synthetic s;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<size_t> length(4, 10);
  const size_t dim = 8;
  for (size_t k = 0; k < n_train + n_test; ++k) {
    const size_t n = length(rng);
    std::vector<float> q(n * dim), rev(n * dim);
    for (auto& x : q) x = normal(rng);
    for (size_t i = 0; i < n; ++i)
      std::copy_n(q.begin() + (n - 1 - i) * dim, dim, rev.begin() + i * dim);
    IndexedTriple t;
    t.query = s.bank.add("q" + std::to_string(k));
    t.positive = s.bank.add("p" + std::to_string(k));
    t.negative = s.bank.add("n" + std::to_string(k));
    t.type = k % 2 ? "odd" : "even";
    s.bank.set_tokens(t.query, q, dim);
    s.bank.set_tokens(t.positive, q, dim);
    s.bank.set_tokens(t.negative, rev, dim);
    (k < n_train ? s.train : s.test).push_back(t);
  }
  return s;
}

std::unique_ptr<verify::LearnedVerifier> tiny_cnn(uint64_t seed) {
  verify::CnnConfig c;
  c.map_size = 16;
  c.channels = {4, 8, 8};
  return verify::LearnedVerifier::untrained_cnn(c, seed);
}

// The recipe that learns the synthetic task in a fraction of a second.
TrainOptions synthetic_recipe() {
  TrainOptions o;
  o.epochs = 12;
  o.batch_size = 16;
  o.lr = 3e-3;
  o.seed = 5;
  return o;
}

TEST(TrainFrozen, LearnsDiagonalVersusAntiDiagonal) {
  set_quiet(true);
  auto data = make_synthetic(256, 128, 1);
  auto model = tiny_cnn(3);
  auto o = synthetic_recipe();
  const auto before = pairwise_accuracy(*model, data.bank, data.test);
  const auto report = train_frozen(*model, data.bank, data.train, data.test, o);
  const auto after = pairwise_accuracy(*model, data.bank, data.test);
  EXPECT_GE(after.accuracy(), 0.95) << "before " << before.accuracy();
  EXPECT_EQ(after.total, 128u);
  EXPECT_EQ(after.by_type.at("odd").second + after.by_type.at("even").second, 128u);
  ASSERT_FALSE(report.epochs.empty());
  EXPECT_LT(report.epochs.back().train_loss, report.epochs.front().train_loss);
  EXPECT_EQ(report.steps, report.epochs_completed * 16);  // 256 / 16 steps per epoch
  EXPECT_GT(report.examples_per_second, 0);
  // The best dev epoch's weights are the ones kept.
  EXPECT_DOUBLE_EQ(after.accuracy(), report.best_dev_accuracy);
}

TEST(TrainFrozen, MarginAndMnrlAlsoLearn) {
  set_quiet(true);
  auto data = make_synthetic(192, 96, 2);
  for (const std::string loss : {"margin", "mnrl"}) {
    auto model = tiny_cnn(4);
    TrainOptions o;
    o.loss = loss;
    o.margin = 0.3;
    o.epochs = 12;
    o.batch_size = 16;
    o.lr = 3e-3;
    train_frozen(*model, data.bank, data.train, {}, o);
    EXPECT_GE(pairwise_accuracy(*model, data.bank, data.test).accuracy(), 0.9) << loss;
  }
}

std::vector<torch::Tensor> weights(verify::LearnedVerifier& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.impl().module().parameters()) out.push_back(p.detach().clone());
  return out;
}

TEST(TrainFrozen, ResumeMatchesUninterruptedRun) {
  set_quiet(true);
  auto data = make_synthetic(64, 32, 3);
  TrainOptions o;
  o.epochs = 3;
  o.batch_size = 16;  // 4 steps per epoch
  o.seed = 9;
  o.checkpoint_every = 3;
  const auto dir_a = temp_dir("full"), dir_b = temp_dir("cut");

  auto full = tiny_cnn(1);
  o.checkpoint_dir = dir_a.string();
  const auto full_report = train_frozen(*full, data.bank, data.train, data.test, o);

  // Interrupted mid-epoch 2 (step 6; the last checkpoint is at step 6), then resumed
  // by a fresh process-like run: new model object with a different init.
  auto cut = tiny_cnn(1);
  o.checkpoint_dir = dir_b.string();
  o.max_steps = 6;
  const auto cut_report = train_frozen(*cut, data.bank, data.train, data.test, o);
  EXPECT_TRUE(cut_report.stopped_at_max_steps);
  EXPECT_EQ(cut_report.steps, 6u);

  auto resumed = tiny_cnn(77);
  o.max_steps = 0;
  o.resume = true;
  const auto resumed_report = train_frozen(*resumed, data.bank, data.train, data.test, o);
  EXPECT_EQ(resumed_report.resumed_from_step, 6u);
  EXPECT_EQ(resumed_report.steps, full_report.steps);
  EXPECT_EQ(resumed_report.best_epoch, full_report.best_epoch);
  const auto a = weights(*full), b = weights(*resumed);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
  ASSERT_EQ(full_report.epochs.size(), resumed_report.epochs.size());
  for (size_t e = 0; e < full_report.epochs.size(); ++e)
    EXPECT_DOUBLE_EQ(full_report.epochs[e].train_loss, resumed_report.epochs[e].train_loss);
  fs::remove_all(dir_a);
  fs::remove_all(dir_b);
}

TEST(TrainFrozen, ResumeRejectsOtherRunAndDamagedCheckpoint) {
  set_quiet(true);
  auto data = make_synthetic(32, 8, 4);
  const auto dir = temp_dir("reject");
  TrainOptions o;
  o.epochs = 1;
  o.batch_size = 16;
  o.checkpoint_dir = dir.string();
  auto m = tiny_cnn(1);
  train_frozen(*m, data.bank, data.train, {}, o);
  o.resume = true;
  o.lr = 0.5;  // a different run
  auto other = tiny_cnn(1);
  try {
    train_frozen(*other, data.bank, data.train, {}, o);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("different run"), std::string::npos) << e.what();
  }
  // Flip one byte near the end (inside a section payload): crc mismatch.
  const auto path = dir / "checkpoint.vtck";
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-200, std::ios::end);
    char c;
    f.get(c);
    f.seekp(-200, std::ios::end);
    f.put(char(c ^ 0x5a));
  }
  o.lr = 1e-3;
  EXPECT_THROW(train_frozen(*other, data.bank, data.train, {}, o), FormatError);
  fs::remove_all(dir);
}

TEST(TrainFrozen, EarlyStopsWithPatience) {
  set_quiet(true);
  auto data = make_synthetic(64, 32, 6);
  TrainOptions o;
  o.epochs = 50;
  o.batch_size = 16;
  o.lr = 1e-9;  // no learning: dev accuracy cannot improve after epoch 1
  o.patience = 2;
  auto m = tiny_cnn(2);
  const auto r = train_frozen(*m, data.bank, data.train, data.test, o);
  EXPECT_TRUE(r.early_stopped);
  EXPECT_EQ(r.epochs_completed, 3u);
  EXPECT_EQ(r.best_epoch, 1u);
}

// Balanced epochs: per_type triples of every type per epoch, however
// unbalanced the training set (here 60 "even" and 4 "odd" triples).
TEST(TrainFrozen, PerTypeBalancedEpochs) {
  set_quiet(true);
  auto data = make_synthetic(120, 16, 7);
  std::vector<IndexedTriple> skewed;
  size_t odd = 0;
  for (const auto& t : data.train)
    if (t.type == "even" || odd++ < 4) skewed.push_back(t);
  TrainOptions o;
  o.epochs = 2;
  o.batch_size = 8;
  o.per_type = 20;
  auto m = tiny_cnn(3);
  const auto r = train_frozen(*m, data.bank, skewed, {}, o);
  EXPECT_EQ(r.examples, 2u * 2u * 20u);  // epochs x types x per_type
  EXPECT_EQ(r.steps, 2u * 5u);           // 40 triples / batch 8 per epoch
  o.per_type = 0;
  auto plain = tiny_cnn(3);
  EXPECT_EQ(train_frozen(*plain, data.bank, skewed, {}, o).examples, 2u * skewed.size());
}

// Cropped training maps: the model still learns the synthetic task (whose
// structure is visible in the leading 8x8 block) and a width that is not a
// multiple of the model's canvas step is refused.
TEST(TrainFrozen, CroppedTrainingMapsStillLearn) {
  set_quiet(true);
  auto data = make_synthetic(256, 128, 8);
  auto model = tiny_cnn(3);
  auto o = synthetic_recipe();
  o.train_map_width = 8;
  train_frozen(*model, data.bank, data.train, {}, o);
  EXPECT_GE(pairwise_accuracy(*model, data.bank, data.test).accuracy(), 0.9);
  o.train_map_width = 6;
  auto other = tiny_cnn(3);
  EXPECT_THROW(train_frozen(*other, data.bank, data.train, {}, o), ConfigError);
}

TEST(TokenCache, RoundTripUnionAndEncoderCheck) {
  const auto dir = temp_dir("cache");
  const auto path = (dir / "tokens.vtkc").string();
  TextBank a;
  a.set_tokens(a.add("alpha"), {1, 2, 3, 4, 5, 6}, 3);  // 2 tokens
  a.set_tokens(a.add("beta"), {7, 8, 9}, 3);
  a.add("not encoded");
  EXPECT_EQ(load_token_cache(a, path, "enc:1"), 0u);  // no file yet
  EXPECT_EQ(save_token_cache(a, path, "enc:1"), 2u);

  TextBank b;
  b.set_tokens(b.add("gamma"), {0, 0, 1}, 3);
  const auto beta = b.add("beta"), alpha = b.add("alpha"), other = b.add("delta");
  EXPECT_EQ(load_token_cache(b, path, "enc:1"), 2u);
  ASSERT_TRUE(b.encoded(alpha) && b.encoded(beta));
  EXPECT_FALSE(b.encoded(other));
  EXPECT_EQ(b.num_tokens(alpha), 2u);
  EXPECT_EQ(std::vector<float>(b.tokens(beta).begin(), b.tokens(beta).end()), (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(save_token_cache(b, path, "enc:1"), 3u);  // alpha, beta, gamma

  TextBank c;
  const auto gamma = c.add("gamma");
  EXPECT_EQ(load_token_cache(c, path, "enc:1"), 1u);
  EXPECT_EQ(c.tokens(gamma)[2], 1.0f);
  TextBank d;
  d.add("alpha");
  try {
    load_token_cache(d, path, "enc:2");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("enc:1"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// Found by fuzzing (fuzz/seeds/token_cache/found-cfb1107d78d7): a CONF section
// that is valid JSON but not an object, or a field of the wrong type, made
// nlohmann's type_error escape; it is a FormatError naming the file.
TEST(TokenCache, ConfThatIsNotAnObjectIsAFormatError) {
  const auto dir = temp_dir("cache-conf");
  const auto path = (dir / "tokens.vtkc").string();
  for (const std::string conf : {R"("glove")", R"({"encoder": "enc:1", "dim": "three", "texts": 0})"}) {
    SectionWriter w(path, "VTKC", 1);
    w.add("CONF", conf.data(), conf.size());
    w.add("TEXT", "", 0);
    w.add("NTOK", "", 0);
    w.add("ROWS", "", 0);
    w.commit();
    TextBank bank;
    bank.add("alpha");
    try {
      load_token_cache(bank, path, "enc:1");
      FAIL() << "no error for CONF " << conf;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("CONF"), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

TEST(RetrievalTriples, HeldOutSplitIsStableAndProportional) {
  size_t held = 0;
  for (int i = 0; i < 2000; ++i) held += held_out_query("q" + std::to_string(i), 0.25);
  EXPECT_NEAR(double(held) / 2000, 0.25, 0.04);
  EXPECT_EQ(held_out_query("abc", 0.25), held_out_query("abc", 0.25));
  EXPECT_FALSE(held_out_query("abc", 0.0));
  EXPECT_TRUE(held_out_query("abc", 1.0));
  EXPECT_THROW(held_out_query("abc", 1.5), ConfigError);
}

TEST(RetrievalTriples, NegativesAreNonRelevantBm25Hits) {
  data::BeirDataset d;
  d.corpus.docs = {{"d1", "", "cats purr on warm mats"},
                   {"d2", "", "cats chase mice at night"},
                   {"d3", "", "dogs bark at cats"},
                   {"d4", "", "stock markets fell sharply"}};
  for (size_t i = 0; i < d.corpus.docs.size(); ++i) d.corpus.index_of[d.corpus.docs[i].id] = i;
  d.queries = {{"q1", "why do cats purr"}, {"q2", "stock markets"}};
  d.qrels["q1"]["d1"] = 1;
  d.qrels["q2"]["d4"] = 1;
  RetrievalTripleOptions o;
  o.top = 3;
  const auto r = bm25_retrieval_triples(d, o);
  EXPECT_EQ(r.queries, 2u);
  EXPECT_EQ(r.no_negative, 1u);  // "stock markets" matches d4 only
  ASSERT_EQ(r.triples.size(), 1u);
  EXPECT_EQ(r.triples[0].positive, "cats purr on warm mats");
  EXPECT_TRUE(r.triples[0].negative == "cats chase mice at night" || r.triples[0].negative == "dogs bark at cats");
  EXPECT_EQ(r.triples[0].type, "retrieval");
}

// ---- CLI ----

TEST(TrainVerifierCli, MissingTrainFileNamesIt) {
  auto r = verity_test::run("train-verifier --train /nonexistent/t.jsonl --out /tmp/x.vvrf");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("/nonexistent/t.jsonl"), std::string::npos) << r.err;
}

TEST(TrainVerifierCli, BadTripleLineNamesFileAndLine) {
  const auto dir = temp_dir("cli_bad");
  const auto path = (dir / "t.jsonl").string();
  std::ofstream(path) << R"({"query":"a","positive":"b","negative":"c"})" "\n"
                      << R"({"query":"a","positive":"b"})" "\n";
  auto r = verity_test::run("train-verifier --train " + path + " --out " + (dir / "o.vvrf").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(path + ":2"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "o.vvrf"));
  fs::remove_all(dir);
}

TEST(TrainVerifierCli, UnknownLossAndModeAreUsageErrors) {
  const auto dir = temp_dir("cli_loss");
  const auto path = (dir / "t.jsonl").string();
  std::ofstream(path) << R"({"query":"a b","positive":"a b","negative":"b a"})" "\n";
  auto r = verity_test::run("train-verifier --train " + path + " --out " + (dir / "o.vvrf").string() +
                            " --loss hinge --encoder glove");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("pairwise, margin, mnrl"), std::string::npos) << r.err;
  r = verity_test::run("train-verifier --train " + path + " --out " + (dir / "o.vvrf").string() +
                       " --mode sideways");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("sideways"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// Two --train files with an overlap: the repeated triple counts once, both
// files are recorded, and --dev-metric / --f3-pool reach the summary and file.
TEST(TrainVerifierCli, SeveralTrainFilesAndOptions) {
  const auto dir = temp_dir("cli_two");
  const auto a = (dir / "a.jsonl").string(), b = (dir / "b.jsonl").string();
  std::ofstream(a) << R"({"query":"the cat sat","positive":"the cat sat down","negative":"sat the cat","type":"role_swap"})" "\n"
                   << R"({"query":"red sky","positive":"a red sky","negative":"sky red","type":"role_swap"})" "\n";
  std::ofstream(b) << R"({"query":"red sky","positive":"a red sky","negative":"sky red","type":"role_swap"})" "\n"
                   << R"({"query":"one two","positive":"one two three","negative":"two one","type":"numeric"})" "\n";
  const std::string encoder = std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/bert/tiny";
  const auto out = (dir / "o.vvrf").string();
  auto r = verity_test::run("train-verifier --train " + a + " --train " + b + " --dev " + b + " --out " + out +
                            " --encoder bert:" + encoder +
                            " --map-size 16 --channels 4,8,8 --f3-pool mean_max --dev-metric min"
                            " --epochs 2 --batch-size 2 --seed 3 --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["inputs"]["train"]["triples"], 3);
  EXPECT_EQ(j["inputs"]["train"]["duplicates_dropped"], 1);
  EXPECT_EQ(j["inputs"]["train"]["files"].size(), 2u);
  EXPECT_EQ(j["dev_metric"], "min");
  EXPECT_EQ(verify::LearnedVerifier::load(out, "f3")->parameter_count(),
            verify::LearnedVerifier::untrained_cnn({16, {4, 8, 8}, "mean_max"}, 0)->parameter_count());
  r = verity_test::run("train-verifier --train " + a + " --out " + out + " --dev-metric median --quiet");
  EXPECT_EQ(r.status, 2) << r.err;
  r = verity_test::run("train-verifier --train " + a + " --out " + out + " --verifier f4 --f3-pool mean_max --quiet");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--f3-pool"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace

// Dev selection metrics over a hand-made tally: micro counts triples, macro
// averages the types, min takes the worst type.
TEST(TrainFrozen, DevMetricsByHand) {
  PairwiseAccuracy acc;
  acc.total = 110;
  acc.correct = 100 + 5;
  acc.by_type = {{"big", {100, 100}}, {"small", {5, 10}}};
  EXPECT_DOUBLE_EQ(acc.select("micro"), 105.0 / 110.0);
  EXPECT_DOUBLE_EQ(acc.select("macro"), 0.75);
  EXPECT_DOUBLE_EQ(acc.select("min"), 0.5);
  EXPECT_THROW(acc.select("median"), ConfigError);
  set_quiet(true);
  auto data = make_synthetic(32, 16, 9);
  auto o = synthetic_recipe();
  o.epochs = 1;
  o.dev_metric = "worst";
  auto m = tiny_cnn(4);
  EXPECT_THROW(train_frozen(*m, data.bank, data.train, data.test, o), ConfigError);
  // With a dev set, the reported best value is the chosen metric of the kept weights.
  o.dev_metric = "min";
  o.epochs = 3;
  const auto r = train_frozen(*m, data.bank, data.train, data.test, o);
  EXPECT_DOUBLE_EQ(r.best_dev_accuracy, pairwise_accuracy(*m, data.bank, data.test).worst());
}
