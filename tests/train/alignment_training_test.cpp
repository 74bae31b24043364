// F5 training: the dev calibration with its pooled-cosine term, and the
// train-verifier CLI end to end on a tiny encoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>

#include "../cli/run_verity.hpp"
#include "core/error.hpp"
#include "eval/pair_metrics.hpp"
#include "encode/registry.hpp"
#include "train/alignment_training.hpp"
#include "verify/alignment_verifier.hpp"

namespace fs = std::filesystem;
using namespace verity;
using namespace verity::train;

namespace {

double auc_of(const CalibrationGroup& g, const verify::Calibration& c) {
  std::vector<float> pos, neg;
  for (size_t i = 0; i < g.logits.size(); ++i)
    (g.labels[i] ? pos : neg).push_back(float(c.probability(g.logits[i], g.cosines[i])));
  return eval::roc_auc(pos, neg);
}

// A group whose labels follow `signal` (logit or cosine) with noise; the other
// input is noise alone.
CalibrationGroup synthetic_group(const std::string& name, bool cosine_informs, bool logit_informs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, 1);
  CalibrationGroup g{name, {}, {}, {}};
  for (int i = 0; i < 400; ++i) {
    const int y = i % 2;
    const double z = logit_informs ? 2.0 * (y - 0.5) + noise(rng) : noise(rng);
    const double c = 0.7 + 0.1 * (cosine_informs ? (y - 0.5) + 0.5 * noise(rng) : noise(rng));
    g.logits.push_back(float(z));
    g.cosines.push_back(c);
    g.labels.push_back(y);
  }
  return g;
}

// The value of a per-step curve at threshold t.
double at_step(const std::vector<double>& curve, double t) {
  return curve[size_t(std::lround(t * 100)) - kFirstThresholdStep];
}

// Eight train and eight dev pairs, one role-swap triple and the tiny BERT
// encoder fixture, in a fresh directory: enough for train-verifier to run.
struct TinyF5Data {
  fs::path dir;
  std::string train, dev, triples, encoder;
};
TinyF5Data write_tiny_f5_data(const std::string& prefix) {
  TinyF5Data d;
  d.dir = fs::temp_directory_path() / (prefix + std::to_string(::getpid()));
  fs::remove_all(d.dir);
  fs::create_directories(d.dir);
  d.train = (d.dir / "train.jsonl").string(), d.dev = (d.dir / "dev.jsonl").string();
  d.triples = (d.dir / "triples.jsonl").string();
  std::ofstream t(d.train), dv(d.dev);
  const char* same[][2] = {{"the cat sat on the mat", "a cat sat on the mat"},
                           {"how do i learn python", "how can i learn python"},
                           {"the sky is blue today", "today the sky is blue"},
                           {"open the door please", "please open the door"}};
  const char* other[][2] = {{"the cat sat on the mat", "the dog ate my homework"},
                            {"how do i learn python", "where is the train station"},
                            {"the sky is blue today", "prices rose sharply in may"},
                            {"open the door please", "the man bit the dog"}};
  for (int k = 0; k < 4; ++k) {
    t << nlohmann::json{{"a", same[k][0]}, {"b", same[k][1]}, {"label", 1}}.dump() << "\n"
      << nlohmann::json{{"a", other[k][0]}, {"b", other[k][1]}, {"label", 0}}.dump() << "\n";
    dv << nlohmann::json{{"a", same[3 - k][1]}, {"b", same[3 - k][0]}, {"label", 1}}.dump() << "\n"
       << nlohmann::json{{"a", other[3 - k][1]}, {"b", other[k][0]}, {"label", 0}}.dump() << "\n";
  }
  std::ofstream(d.triples) << R"({"query":"the dog bit the man","positive":"the dog bit the man","negative":"the man bit the dog","type":"role_swap"})"
                              "\n";
  d.encoder = std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/bert/tiny";
  return d;
}

// A one-epoch F5 run of a tiny network on that data, without --seed or --out.
std::string tiny_f5_command(const TinyF5Data& d) {
  return "train-verifier --verifier f5 --pairs " + d.train + " --dev-pairs " + d.dev + " --train " + d.triples +
         " --dev " + d.triples + " --encoder bert:" + d.encoder +
         " --f5-hidden 4 --f5-mlp 4 --f5-embedding 0 --epochs 1 --steps-per-epoch 3 --json --quiet";
}

// A labelled-pair file of one source: (a, b, label) rows.
void write_pairs(const std::string& path, const std::string& source,
                 const std::vector<std::tuple<const char*, const char*, int>>& rows) {
  std::ofstream f(path);
  for (const auto& [a, b, label] : rows)
    f << nlohmann::json{{"a", a}, {"b", b}, {"label", label}, {"source", source}}.dump() << "\n";
}

}  // namespace

// Where only the cosine carries the labels of one group, the fit gives the
// cosine a share, and that group's AUC rises well above the network's.
TEST(F5Calibration, PooledTermIsFittedWhereTheCosineInforms) {
  std::vector<CalibrationGroup> groups = {synthetic_group("cosine-only", true, false, 1),
                                          synthetic_group("logit-only", false, true, 2)};
  const auto fit = fit_calibration(groups, PooledTerm::refit);
  EXPECT_GT(fit.pooled_share, 0.0);
  EXPECT_LT(fit.pooled_share, 1.0);
  EXPECT_GT(fit.calibration.pooled_weight, 0.0f);
  EXPECT_GT(fit.macro_auc, fit.network_macro_auc + 0.05);
  verify::Calibration network_only = fit.calibration;
  network_only.pooled_weight = 0;
  EXPECT_GT(auc_of(groups[0], fit.calibration), auc_of(groups[0], network_only) + 0.2);
  // The reported macro AUC is that of the stored calibration.
  EXPECT_NEAR((auc_of(groups[0], fit.calibration) + auc_of(groups[1], fit.calibration)) / 2, fit.macro_auc, 1e-6);
  // Calibrated: the mean probability is near the share of positives (0.5).
  double mean = 0;
  size_t n = 0;
  for (const auto& g : groups)
    for (size_t i = 0; i < g.logits.size(); ++i, ++n) mean += fit.calibration.probability(g.logits[i], g.cosines[i]);
  EXPECT_NEAR(mean / double(n), 0.5, 0.03);
  EXPECT_GT(fit.calibration.threshold, 0.0f);
  EXPECT_LT(fit.calibration.threshold, 1.0f);
}

// Off, or where the cosine is noise everywhere, the network's logit stands
// alone; an unknown cosine adds nothing to the probability.
TEST(F5Calibration, NoPooledTermWhenOffOrUninformative) {
  std::vector<CalibrationGroup> groups = {synthetic_group("a", true, false, 3), synthetic_group("b", false, true, 4)};
  auto fit = fit_calibration(groups, PooledTerm::none);
  EXPECT_EQ(fit.pooled_share, 0.0);
  EXPECT_EQ(fit.calibration.pooled_weight, 0.0f);
  EXPECT_DOUBLE_EQ(fit.macro_auc, fit.network_macro_auc);
  fit = fit_calibration({synthetic_group("noise", false, true, 5)}, PooledTerm::refit);
  EXPECT_LE(fit.pooled_share, 0.2);
  const auto& c = fit.calibration;
  EXPECT_DOUBLE_EQ(c.probability(1.5f, std::nan("")), 1 / (1 + std::exp(-(double(c.scale) * 1.5f + c.bias))));
  EXPECT_THROW(fit_calibration({}, PooledTerm::refit), ConfigError);
  CalibrationGroup bad{"bad", {1.0f}, {}, {1}};
  EXPECT_THROW(fit_calibration({bad}, PooledTerm::penalty), ConfigError);
  EXPECT_THROW(parse_pooled_term("maybe"), ConfigError);
  EXPECT_EQ(parse_pooled_term("true"), PooledTerm::refit);
  EXPECT_EQ(parse_pooled_term("false"), PooledTerm::none);
}

// The penalty keeps the network's own Platt scaling and threshold and only
// lowers P: no pair the network alone rejects becomes a match, and where a
// low cosine marks the negatives the AUC rises.
TEST(F5Calibration, PenaltyOnlyLowersTheNetworksProbability) {
  // Where the network is weak, the negatives' cosines are low; where it is
  // strong, every cosine is high (as on near-misses), so the hinge is silent.
  std::vector<CalibrationGroup> groups = {synthetic_group("weak", true, false, 6),
                                          synthetic_group("strong", false, true, 7)};
  for (auto& c : groups[1].cosines) c = 0.9 + 0.1 * (c - 0.7);
  const auto none = fit_calibration(groups, PooledTerm::none);
  const auto pen = fit_calibration(groups, PooledTerm::penalty);
  EXPECT_EQ(pen.term, PooledTerm::penalty);
  EXPECT_FLOAT_EQ(pen.calibration.scale, none.calibration.scale);
  EXPECT_FLOAT_EQ(pen.calibration.bias, none.calibration.bias);
  EXPECT_FLOAT_EQ(pen.calibration.threshold, none.calibration.threshold);
  EXPECT_GT(pen.calibration.pooled_weight, 0.0f);
  EXPECT_GT(pen.pooled_share, 0.0);
  EXPECT_GT(pen.macro_auc, none.macro_auc + 0.05);
  EXPECT_NEAR((auc_of(groups[0], pen.calibration) + auc_of(groups[1], pen.calibration)) / 2, pen.macro_auc, 1e-6);
  size_t lowered = 0;
  for (const auto& g : groups)
    for (size_t i = 0; i < g.logits.size(); ++i) {
      const double p = pen.calibration.probability(g.logits[i], g.cosines[i]),
                   p0 = none.calibration.probability(g.logits[i], g.cosines[i]);
      ASSERT_LE(p, p0 + 1e-12);
      if (p0 < none.calibration.threshold) {
        EXPECT_LT(p, pen.calibration.threshold);
      }
      lowered += p < p0 - 1e-6;
    }
  EXPECT_GT(lowered, 100u);
  // Where the cosine only adds noise to the ranking, the network stands alone.
  const auto noise = fit_calibration({synthetic_group("a", false, true, 8), synthetic_group("b", false, true, 9)},
                                     PooledTerm::penalty);
  EXPECT_EQ(noise.calibration.pooled_weight, 0.0f);
  EXPECT_DOUBLE_EQ(noise.macro_auc, noise.network_macro_auc);
}

// Gated: a linear term that a high cosine raises P with, behind the
// network's own calibration as the gate: the verdicts stay the network's,
// while where the cosine informs the AUC rises.
TEST(F5Calibration, GatedKeepsTheNetworksVerdicts) {
  std::vector<CalibrationGroup> groups = {synthetic_group("weak", true, false, 10),
                                          synthetic_group("strong", false, true, 11)};
  for (auto& c : groups[1].cosines) c = 0.9 + 0.1 * (c - 0.7);  // near-misses: every cosine high
  const auto none = fit_calibration(groups, PooledTerm::none);
  const auto gated = fit_calibration(groups, PooledTerm::gated);
  const auto& c = gated.calibration;
  EXPECT_EQ(gated.term, PooledTerm::gated);
  EXPECT_EQ(pooled_term_name(gated.term), std::string("gated"));
  EXPECT_EQ(parse_pooled_term("gated"), PooledTerm::gated);
  EXPECT_GT(gated.pooled_share, 0.0);
  EXPECT_EQ(c.pooled_form, verify::Calibration::PooledForm::linear);
  ASSERT_TRUE(c.gate.has_value());
  EXPECT_FLOAT_EQ(c.gate->scale, none.calibration.scale);
  EXPECT_FLOAT_EQ(c.gate->bias, none.calibration.bias);
  EXPECT_FLOAT_EQ(c.gate->threshold, none.calibration.threshold);
  EXPECT_FLOAT_EQ(c.threshold, none.calibration.threshold);
  EXPECT_GT(gated.macro_auc, none.macro_auc + 0.05);
  EXPECT_NEAR((auc_of(groups[0], c) + auc_of(groups[1], c)) / 2, gated.macro_auc, 1e-6);
  EXPECT_NEAR(gated.mean_accuracy, none.mean_accuracy, 1e-9);
  size_t raised = 0;
  for (const auto& g : groups)
    for (size_t i = 0; i < g.logits.size(); ++i) {
      const double p = c.probability(g.logits[i], g.cosines[i]),
                   p0 = none.calibration.probability(g.logits[i], g.cosines[i]);
      ASSERT_EQ(p >= c.threshold, p0 >= none.calibration.threshold);
      if (p0 < none.calibration.threshold) {
        ASSERT_LE(p, p0 + 1e-12);
      }
      raised += p > p0 + 1e-6;
    }
  EXPECT_GT(raised, 50u);  // unlike the penalty, a high cosine can raise P where the network accepts
  // Where the cosine only adds noise, the network stands alone: no term, no gate.
  const auto noise = fit_calibration({synthetic_group("a", false, true, 12), synthetic_group("b", false, true, 13)},
                                     PooledTerm::gated);
  EXPECT_EQ(noise.pooled_share, 0.0);
  EXPECT_EQ(noise.calibration.pooled_weight, 0.0f);
  EXPECT_FALSE(noise.calibration.gate.has_value());
  EXPECT_EQ(noise.calibration.pooled_form, verify::Calibration::PooledForm::hinge);
}

// A gate band lets the cosine turn the verdicts of unsure pairs without an
// identity signal only: pairs flagged keep the network's verdict; a band needs
// the gated term.
TEST(F5Calibration, GateBandTurnsOnlyUnsureVerdictsWithoutASignal) {
  std::vector<CalibrationGroup> groups = {synthetic_group("weak", true, false, 10),
                                          synthetic_group("strong", false, true, 11)};
  for (auto& g : groups)
    for (size_t i = 0; i < g.logits.size(); ++i) g.signals.push_back(i % 3 == 0 ? verify::AlignmentVerifier::kIdentitySignalBit : 0);
  const auto gated = fit_calibration(groups, PooledTerm::gated);
  const auto band = fit_calibration(groups, PooledTerm::gated, ThresholdRule::plateau, std::nullopt, 0.2);
  ASSERT_TRUE(band.calibration.gate.has_value());
  EXPECT_FLOAT_EQ(band.calibration.gate->band, 0.2f);
  size_t turned = 0;
  for (const auto& g : groups)
    for (size_t i = 0; i < g.logits.size(); ++i) {
      const auto& c = band.calibration;
      const bool verdict = c.probability(g.logits[i], g.cosines[i], {g.identity_signal(i)}) >= c.threshold;
      const bool network = gated.calibration.probability(g.logits[i], g.cosines[i]) >= gated.calibration.threshold;
      if (g.identity_signal(i)) {
        ASSERT_EQ(verdict, network) << g.name << " " << i;
      }
      turned += verdict != network;
    }
  EXPECT_GT(turned, 0u);
  EXPECT_THROW(fit_calibration(groups, PooledTerm::none, ThresholdRule::plateau, std::nullopt, 0.2), ConfigError);
  EXPECT_THROW(fit_calibration(groups, PooledTerm::gated, ThresholdRule::plateau, std::nullopt, 0.5), ConfigError);
}

// A fixed gate (a file's own calibration, `calibrate --gate file`) is kept as
// given, not refitted: every verdict is that calibration's, even where a refit
// on these groups would move the threshold, and the cosine still reorders.
TEST(F5Calibration, FixedGateKeepsThatCalibrationsVerdicts) {
  std::vector<CalibrationGroup> groups = {synthetic_group("weak", true, false, 14),
                                          synthetic_group("strong", false, true, 15)};
  verify::Calibration file;  // far from what these groups would refit
  file.scale = 0.5f, file.bias = 0.8f, file.threshold = 0.62f;
  const verify::CalibrationGate gate{file.scale, file.bias, file.threshold};
  const auto refit = fit_calibration(groups, PooledTerm::gated);
  ASSERT_TRUE(refit.calibration.gate.has_value());
  ASSERT_NE(refit.calibration.gate->bias, gate.bias);
  const auto fixed = fit_calibration(groups, PooledTerm::gated, ThresholdRule::plateau, gate);
  const auto& c = fixed.calibration;
  ASSERT_TRUE(c.gate.has_value());
  EXPECT_FLOAT_EQ(c.gate->scale, gate.scale);
  EXPECT_FLOAT_EQ(c.gate->bias, gate.bias);
  EXPECT_FLOAT_EQ(c.gate->threshold, gate.threshold);
  EXPECT_FLOAT_EQ(c.threshold, gate.threshold);
  EXPECT_GT(fixed.pooled_share, 0.0);
  EXPECT_GT(fixed.macro_auc, fixed.network_macro_auc + 0.05);
  double mean_accuracy = 0;
  for (const auto& g : groups) {
    size_t right = 0;
    for (size_t i = 0; i < g.logits.size(); ++i) {
      const bool verdict = c.probability(g.logits[i], g.cosines[i]) >= c.threshold;
      ASSERT_EQ(verdict, file.probability(g.logits[i], g.cosines[i]) >= file.threshold) << g.name << " " << i;
      right += verdict == (g.labels[i] == 1);
    }
    mean_accuracy += double(right) / double(g.logits.size()) / double(groups.size());
  }
  EXPECT_NEAR(fixed.mean_accuracy, mean_accuracy, 1e-9);
  // Where the cosine adds nothing, the result is the gate's own calibration.
  const auto noise = fit_calibration({synthetic_group("a", false, true, 16), synthetic_group("b", false, true, 17)},
                                     PooledTerm::gated, ThresholdRule::plateau, gate);
  EXPECT_EQ(noise.pooled_share, 0.0);
  EXPECT_FALSE(noise.calibration.gate.has_value());
  EXPECT_FLOAT_EQ(noise.calibration.scale, file.scale);
  EXPECT_FLOAT_EQ(noise.calibration.bias, file.bias);
  EXPECT_FLOAT_EQ(noise.calibration.threshold, file.threshold);
  EXPECT_EQ(noise.calibration.pooled_weight, 0.0f);
  // A fixed gate belongs to the gated term only.
  EXPECT_THROW(fit_calibration(groups, PooledTerm::refit, ThresholdRule::plateau, gate), ConfigError);
  EXPECT_EQ(parse_gate_source("file"), GateSource::file);
  EXPECT_EQ(std::string(gate_source_name(GateSource::refit)), "refit");
  EXPECT_THROW(parse_gate_source("maybe"), ConfigError);
}

// The best rule takes the curve's argmax, however narrow its peak; the
// plateau rule the middle of the broad stretch, whose windowed mean is higher.
TEST(F5Calibration, ThresholdRulesReadTheAccuracyCurve) {
  const size_t steps = kLastThresholdStep - kFirstThresholdStep + 1;
  std::vector<double> curve(steps, 0.60);
  auto at = [&](double t) -> double& { return curve[size_t(std::lround(t * 100)) - kFirstThresholdStep]; };
  for (int step = 30; step <= 60; ++step) at(step / 100.0) = 0.80;  // a broad plateau at 0.30 ... 0.60
  at(0.80) = 0.82;                                                   // a narrow, higher peak
  EXPECT_DOUBLE_EQ(threshold_from_accuracy_curve(curve, ThresholdRule::best), 0.80);
  EXPECT_DOUBLE_EQ(threshold_from_accuracy_curve(curve, ThresholdRule::plateau), 0.35);  // first full window
  at(0.45) = 0.81;  // a bump inside the plateau: its window wins
  EXPECT_DOUBLE_EQ(threshold_from_accuracy_curve(curve, ThresholdRule::plateau), 0.40);
  // Near the ends only the best rule may go: the plateau rule needs a full window.
  std::vector<double> rising(steps);
  for (size_t k = 0; k < steps; ++k) rising[k] = double(k);
  EXPECT_DOUBLE_EQ(threshold_from_accuracy_curve(rising, ThresholdRule::best), 0.98);
  EXPECT_DOUBLE_EQ(threshold_from_accuracy_curve(rising, ThresholdRule::plateau), 0.93);
  EXPECT_THROW(threshold_from_accuracy_curve(std::vector<double>(steps - 1, 0.5), ThresholdRule::best), ConfigError);
  EXPECT_THROW(parse_threshold_rule("median"), ConfigError);
  EXPECT_EQ(parse_threshold_rule("best"), ThresholdRule::best);
  EXPECT_STREQ(threshold_rule_name(ThresholdRule::plateau), "plateau");

  // fit_calibration reads its threshold off the mean accuracy of its own
  // calibrated probability, with the rule it is given (the plateau by default).
  const std::vector<CalibrationGroup> groups = {synthetic_group("a", false, true, 14),
                                                synthetic_group("b", false, true, 15)};
  const auto plateau = fit_calibration(groups, PooledTerm::none);
  const auto best = fit_calibration(groups, PooledTerm::none, ThresholdRule::best);
  EXPECT_EQ(plateau.threshold_rule, ThresholdRule::plateau);
  EXPECT_EQ(best.threshold_rule, ThresholdRule::best);
  EXPECT_EQ(plateau.calibration.scale, best.calibration.scale);  // the rule moves the threshold only
  std::vector<double> mean(steps, 0);
  for (size_t k = 0; k < steps; ++k)
    for (const auto& g : groups) {
      size_t right = 0;
      for (size_t i = 0; i < g.logits.size(); ++i)
        right += (plateau.calibration.probability(g.logits[i], g.cosines[i]) >= (kFirstThresholdStep + k) / 100.0) ==
                 (g.labels[i] == 1);
      mean[k] += double(right) / double(g.logits.size()) / double(groups.size());
    }
  EXPECT_FLOAT_EQ(plateau.calibration.threshold, float(threshold_from_accuracy_curve(mean, ThresholdRule::plateau)));
  EXPECT_FLOAT_EQ(best.calibration.threshold, float(threshold_from_accuracy_curve(mean, ThresholdRule::best)));
  EXPECT_DOUBLE_EQ(best.mean_accuracy, *std::max_element(mean.begin(), mean.end()));
  EXPECT_DOUBLE_EQ(plateau.mean_accuracy, at_step(mean, plateau.calibration.threshold));
}

// The cosine schedule starts at --lr, halves it midway and ends near 0; the
// constant one keeps --lr.
TEST(F5Training, CosineScheduleDecaysTheLearningRateToZero) {
  AlignmentTrainOptions o;
  o.lr = 2e-3, o.epochs = 4, o.steps_per_epoch = 50;
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 0), 2e-3);
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 199), 2e-3);
  o.cosine_lr = true;
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 0), 2e-3);
  EXPECT_NEAR(scheduled_lr(o, 100), 1e-3, 1e-12);
  EXPECT_LT(scheduled_lr(o, 199), 1e-6);
  EXPECT_GT(scheduled_lr(o, 199), 0.0);
  for (size_t s = 1; s < 200; ++s) EXPECT_LT(scheduled_lr(o, s), scheduled_lr(o, s - 1)) << s;
}

// train-verifier --verifier f5 on a tiny BERT: the summary carries the
// calibration keys, the file holds the same calibration, and without
// --pooled-term true the pooled weight stays zero.
TEST(TrainVerifierF5Cli, TrainsCalibratesAndRecordsThePooledTerm) {
  const auto data = write_tiny_f5_data("verity_f5_cli_");
  const auto& [dir, train, dev, triples, encoder] = data;
  const auto out = (dir / "f5.valn").string();
  const std::string unseeded = tiny_f5_command(data);
  const std::string common = unseeded + " --seed 2";
  auto r = verity_test::run(common + " --pooled-term true --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& cal = j.at("calibration");
  for (const char* key : {"scale", "bias", "threshold", "pooled_weight", "pooled_center", "pooled_form", "gate", "pooled_share", "dev_macro_auc"})
    EXPECT_TRUE(cal.contains(key)) << key;
  EXPECT_EQ(j.at("options").at("pooled_term").get<std::string>(), "refit");  // "true" is refit
  EXPECT_EQ(j.at("options").at("lr_schedule").get<std::string>(), "constant");  // the default
  EXPECT_EQ(cal.at("pooled_term").get<std::string>(), "refit");
  // The epoch is chosen by the calibrated score's dev macro AUC.
  EXPECT_NEAR(j.at("best_dev_macro_auc").get<double>(), cal.at("dev_macro_auc").get<double>(), 1e-9);
  ASSERT_FALSE(j.at("epoch_log").empty());
  EXPECT_TRUE(j.at("epoch_log")[0].contains("dev_network_macro_auc"));
  auto v = verify::AlignmentVerifier::load(out);
  ASSERT_TRUE(v->calibration().has_value());
  EXPECT_FLOAT_EQ(v->calibration()->pooled_weight, cal.at("pooled_weight").get<float>());
  EXPECT_FLOAT_EQ(v->calibration()->pooled_center, cal.at("pooled_center").get<float>());
  EXPECT_FLOAT_EQ(v->calibration()->scale, cal.at("scale").get<float>());

  // The caps draw with --sample-seed, else --seed; the summary names the
  // pairs drawn, and calibrate --seed S draws the dev sample of --sample-seed S.
  {
    const std::string capped = " --max-pairs-per-source 6 --max-dev-pairs-per-source 6 --out " + out;
    auto samples_of = [&](const std::string& flags) {
      auto run = verity_test::run(unseeded + flags + capped);
      EXPECT_EQ(run.status, 0) << run.err;
      auto summary = nlohmann::json::parse(run.out);
      EXPECT_EQ(summary.at("inputs").at("samples").size(), 1u);
      return std::make_pair(summary.at("options").at("sample_seed").get<uint64_t>(),
                            summary.at("inputs").at("samples").begin().value());
    };
    const auto [seed1, one] = samples_of(" --seed 1");
    const auto [seed2, two] = samples_of(" --seed 2");
    const auto [shared_seed, shared] = samples_of(" --seed 2 --sample-seed 1");
    EXPECT_EQ(seed1, 1u);
    EXPECT_EQ(seed2, 2u);
    EXPECT_EQ(shared_seed, 1u);
    EXPECT_EQ(one.at("train").get<size_t>(), 6u);
    EXPECT_EQ(one.at("dev").get<size_t>(), 6u);
    EXPECT_NE(one.at("train_fnv1a64"), two.at("train_fnv1a64"));
    EXPECT_NE(one.at("dev_fnv1a64"), two.at("dev_fnv1a64"));
    EXPECT_EQ(shared.at("train_fnv1a64"), one.at("train_fnv1a64"));
    EXPECT_EQ(shared.at("dev_fnv1a64"), one.at("dev_fnv1a64"));
    for (uint64_t seed : {1, 2}) {
      auto cal = verity_test::run("calibrate --verifier " + out + " --dev-pairs " + dev + " --encoder bert:" + encoder +
                                  " --max-pairs-per-source 6 --seed " + std::to_string(seed) + " --out " +
                                  (dir / "f5-sampled.valn").string() + " --json --quiet");
      ASSERT_EQ(cal.status, 0) << cal.err;
      const auto drawn = nlohmann::json::parse(cal.out).at("samples").begin().value();
      EXPECT_EQ(drawn.at("pairs").get<size_t>(), 6u);
      EXPECT_EQ(drawn.at("fnv1a64"), (seed == 1 ? one : two).at("dev_fnv1a64")) << seed;
    }
  }

  r = verity_test::run(common + " --out " + out);  // off by default
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("calibration").at("pooled_weight").get<double>(), 0.0);
  EXPECT_EQ(j.at("calibration").at("pooled_share").get<double>(), 0.0);
  EXPECT_EQ(j.at("options").at("pooled_term").get<std::string>(), "none");
  EXPECT_EQ(verify::AlignmentVerifier::load(out)->calibration()->pooled_weight, 0.0f);
  EXPECT_EQ(j.at("options").at("threshold_rule").get<std::string>(), "plateau");  // the default
  EXPECT_EQ(j.at("calibration").at("threshold_rule").get<std::string>(), "plateau");
  r = verity_test::run(common + " --threshold-rule best --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("options").at("threshold_rule").get<std::string>(), "best");
  EXPECT_EQ(j.at("calibration").at("threshold_rule").get<std::string>(), "best");
  EXPECT_EQ(nlohmann::json::parse(verify::AlignmentVerifier::load(out)->provenance()).at("options").at("threshold_rule"),
            "best");
  r = verity_test::run(common + " --threshold-rule median --out " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("median"), std::string::npos) << r.err;
  r = verity_test::run(common + " --mode end2end --out " + out);  // F5 trains on a fixed encoder's maps only
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--mode end2end is not available for --verifier f5"), std::string::npos) << r.err;
  r = verity_test::run(common + " --loss mnrl --resume --out " + out);  // F3/F4 flags are refused, not ignored
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--loss, --resume apply to --verifier f3/f4 training only"), std::string::npos) << r.err;
  r = verity_test::run(common + " --test " + triples + " --out " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--test applies to --verifier f3/f4 training only"), std::string::npos) << r.err;
  // ... and F3/F4 refuse F5's (a cosine schedule would have stayed constant).
  r = verity_test::run("train-verifier --verifier f3 --train " + triples + " --lr-schedule cosine --out " + out + " --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--lr-schedule applies to --verifier f5 training only"), std::string::npos) << r.err;
  r = verity_test::run("train-verifier --verifier f3 --train " + triples + " --threshold-rule best --out " + out +
                       " --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--threshold-rule"), std::string::npos) << r.err;
  r = verity_test::run("train-verifier --verifier f3 --train " + triples + " --sample-seed 1 --out " + out + " --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--sample-seed"), std::string::npos) << r.err;
  r = verity_test::run(common + " --lr-schedule cosine --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("options").at("lr_schedule").get<std::string>(), "cosine");
  EXPECT_EQ(verity_test::run(common + " --lr-schedule linear --out " + out).status, 2);
  // A pair source's weight in the pair loss: recorded, and it changes the
  // loss (two sources: the fixture's and one with its labels flipped); a name
  // that is no source, a bad weight, a repeat are refused.
  {
    fs::create_directories(dir / "flipped");
    const auto flipped = (dir / "flipped" / "train.jsonl").string();
    std::ifstream in(train);
    std::ofstream f(flipped);
    for (std::string line; std::getline(in, line);) {
      auto p = nlohmann::json::parse(line);
      p["label"] = 1 - p.at("label").get<int>();
      f << p.dump() << "\n";
    }
    f.close();
    const std::string source = fs::path(train).parent_path().filename().string();
    const std::string two = common + " --pairs " + flipped + " --out " + (dir / "f5-weighted.valn").string();
    r = verity_test::run(two);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto plain = nlohmann::json::parse(r.out);
    EXPECT_TRUE(plain.at("options").at("source_weights").empty());
    r = verity_test::run(two + " --pair-source-weight " + source + "=3");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto weighted = nlohmann::json::parse(r.out);
    EXPECT_EQ(weighted.at("options").at("source_weights").at(source).get<double>(), 3.0);
    EXPECT_NE(weighted.at("epoch_log")[0].at("train_loss").get<double>(),
              plain.at("epoch_log")[0].at("train_loss").get<double>());
    for (const std::string& bad : {std::string("nosuchsource=2"), source + "=0", source + "=abc", source,
                                  source + "=2 --pair-source-weight " + source + "=3"}) {
      r = verity_test::run(two + " --pair-source-weight " + bad);
      EXPECT_EQ(r.status, 2) << bad;
      EXPECT_NE(r.err.find("--pair-source-weight"), std::string::npos) << bad << ": " << r.err;
    }
  }
  // Distillation from a trained F5: recorded with the teacher's file name,
  // size and hash; the teacher's probabilities enter the targets, so the loss
  // moves; a bad weight, a file that is no F5, a teacher of another encoder
  // and the flag with F3 are refused.
  {
    const auto student = (dir / "f5-student.valn").string();
    r = verity_test::run(common + " --out " + student);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto plain = nlohmann::json::parse(r.out);
    EXPECT_FALSE(plain.at("options").contains("distill"));
    r = verity_test::run(common + " --distill-from " + out + " --distill-weight 0.75 --out " + student);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto distilled = nlohmann::json::parse(r.out);
    const auto& d = distilled.at("options").at("distill");
    EXPECT_EQ(d.at("weight").get<double>(), 0.75);
    ASSERT_EQ(d.at("teachers").size(), 1u);
    EXPECT_EQ(d.at("teachers")[0].at("path").get<std::string>(), "f5.valn");
    EXPECT_EQ(d.at("teachers")[0].at("bytes").get<uint64_t>(), fs::file_size(out));
    EXPECT_FALSE(d.at("teachers")[0].at("fnv1a64").get<std::string>().empty());
    EXPECT_NE(distilled.at("epoch_log")[0].at("train_loss").get<double>(),
              plain.at("epoch_log")[0].at("train_loss").get<double>());
    EXPECT_TRUE(verify::AlignmentVerifier::load(student)->is_trained());
    for (const std::string& bad : {std::string("0"), std::string("1.5"), std::string("-1")}) {
      r = verity_test::run(common + " --distill-from " + out + " --distill-weight " + bad + " --out " + student);
      EXPECT_EQ(r.status, 2) << bad;
      EXPECT_NE(r.err.find("--distill-weight"), std::string::npos) << bad << ": " << r.err;
    }
    r = verity_test::run(common + " --distill-weight 0.5 --out " + student);  // no teacher
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--distill-from"), std::string::npos) << r.err;
    r = verity_test::run(common + " --distill-from " + triples + " --out " + student);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(triples), std::string::npos) << r.err;
    auto other = verify::AlignmentVerifier::load(out);
    other->set_encoder("some-other-encoder");
    const auto other_path = (dir / "f5-other-encoder.valn").string();
    other->save(other_path);
    r = verity_test::run(common + " --distill-from " + other_path + " --out " + student);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("some-other-encoder"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("bert"), std::string::npos) << r.err;
    r = verity_test::run("train-verifier --verifier f3 --train " + triples + " --distill-from " + out +
                         " --encoder bert:" + encoder + " --out " + (dir / "f3.vvrf").string() + " --quiet");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--distill-from"), std::string::npos) << r.err;
  }

  // calibrate refits that file's calibration on labelled pairs: the network is
  // unchanged, the provenance keeps the training run, the summary reports both
  // calibrations.
  const auto recal = (dir / "f5-recal.valn").string();
  r = verity_test::run("calibrate --verifier " + out + " --dev-pairs " + train + " --dev-triples " + triples +
                       " --encoder bert:" + encoder + " --pooled-term penalty --out " + recal + " --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("pairs").get<size_t>(), 10u);
  EXPECT_EQ(j.at("calibration").at("pooled_term").get<std::string>(), "penalty");
  EXPECT_EQ(j.at("calibration").at("threshold_rule").get<std::string>(), "plateau");
  for (const char* key : {"scale", "bias", "threshold", "pooled_weight", "pooled_center", "dev_macro_auc",
                          "network_macro_auc", "mean_accuracy"})
    EXPECT_TRUE(j.at("calibration").contains(key)) << key;
  EXPECT_TRUE(j.at("previous_calibration").is_object());
  EXPECT_TRUE(j.at("dev").contains("nearmiss"));
  EXPECT_EQ(j.at("dev").size(), 2u);  // the train file's source and the triples
  EXPECT_EQ(j.at("previous_dev").size(), 2u);
  const auto before = verify::AlignmentVerifier::load(out), after = verify::AlignmentVerifier::load(recal);
  EXPECT_FLOAT_EQ(after->calibration()->threshold, j.at("calibration").at("threshold").get<float>());
  EXPECT_FLOAT_EQ(after->calibration()->pooled_weight, j.at("calibration").at("pooled_weight").get<float>());
  EXPECT_EQ(after->parameter_count(), before->parameter_count());
  EXPECT_EQ(after->encoder(), before->encoder());
  const auto prov = nlohmann::json::parse(after->provenance());
  EXPECT_TRUE(prov.at("recalibrated").contains("argv"));
  EXPECT_EQ(prov.at("trained"), nlohmann::json::parse(before->provenance()));

  // Gated: the file holds what the summary reports, a gate at the verdict threshold or none.
  const auto gated_path = (dir / "f5-gated.valn").string();
  r = verity_test::run("calibrate --verifier " + out + " --dev-pairs " + train + " --dev-triples " + triples +
                       " --encoder bert:" + encoder + " --pooled-term gated --out " + gated_path + " --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("calibration").at("pooled_term").get<std::string>(), "gated");
  const auto gated = verify::AlignmentVerifier::load(gated_path);
  const auto& gate_json = j.at("calibration").at("gate");
  ASSERT_EQ(gated->calibration()->gate.has_value(), !gate_json.is_null());
  if (!gate_json.is_null()) {
    EXPECT_EQ(j.at("calibration").at("pooled_form").get<std::string>(), "linear");
    EXPECT_FLOAT_EQ(gated->calibration()->gate->threshold, gated->calibration()->threshold);
  }

  // --gate file keeps the file's own verdicts: the gate is its calibration.
  const auto kept_path = (dir / "f5-gated-file.valn").string();
  {
    auto with_term = verify::AlignmentVerifier::load(out);
    auto cal = *with_term->calibration();
    cal.pooled_weight = 2.0f;  // a pooled term: its verdicts are not the network's alone
    with_term->set_calibration(cal);
    with_term->save((dir / "f5-with-term.valn").string());
  }
  r = verity_test::run("calibrate --verifier " + (dir / "f5-with-term.valn").string() + " --dev-pairs " + train +
                       " --encoder bert:" + encoder + " --pooled-term gated --gate file --out " + kept_path + " --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("pooled term"), std::string::npos) << r.err;
  r = verity_test::run("calibrate --verifier " + out + " --dev-pairs " + train + " --dev-triples " + triples +
                       " --encoder bert:" + encoder + " --pooled-term gated --gate file --out " + kept_path +
                       " --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  {
    const auto kept = verify::AlignmentVerifier::load(kept_path);
    const auto& was = *before->calibration();
    const auto& now = *kept->calibration();
    EXPECT_FLOAT_EQ(now.threshold, was.threshold);
    if (now.gate) {
      EXPECT_FLOAT_EQ(now.gate->scale, was.scale);
      EXPECT_FLOAT_EQ(now.gate->bias, was.bias);
    } else {
      EXPECT_FLOAT_EQ(now.scale, was.scale);
      EXPECT_FLOAT_EQ(now.bias, was.bias);
    }
    EXPECT_EQ(nlohmann::json::parse(kept->provenance()).at("recalibrated").at("gate"), "file");
  }
  r = verity_test::run("calibrate --verifier " + out + " --dev-pairs " + train + " --encoder bert:" + encoder +
                       " --gate file --out " + kept_path + " --quiet");  // the gate needs the gated term
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("gated"), std::string::npos) << r.err;

  // Maps of another encoder than the file's are refused, naming both.
  auto other = verify::AlignmentVerifier::load(out);
  other->set_encoder("some-other-encoder@0123");
  const auto other_path = (dir / "f5-other.valn").string();
  other->save(other_path);
  r = verity_test::run("calibrate --verifier " + other_path + " --dev-pairs " + train + " --encoder bert:" + encoder +
                       " --out " + recal + " --quiet");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("some-other-encoder@0123"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(before->encoder()), std::string::npos) << r.err;
  // So do the evaluations and the cache, which read maps through the same scorers.
  const auto other_spec = "f5:" + other_path;
  for (const std::string& command :
       {"pairs-eval --data " + train + " --verifier " + other_spec,
        "nearmiss-eval --data " + triples + " --verifier " + other_spec,
        "cache put --db " + (dir / "other.sqlite").string() + " --verifier " + other_spec + " --prompt p --response r"}) {
    r = verity_test::run(command + " --encoder bert:" + encoder + " --quiet");
    EXPECT_EQ(r.status, 2) << command;
    EXPECT_NE(r.err.find("some-other-encoder@0123"), std::string::npos) << command << ": " << r.err;
    EXPECT_NE(r.err.find(before->encoder()), std::string::npos) << command << ": " << r.err;
  }
  r = verity_test::run("pairs-eval --data " + train + " --verifier f5:" + out + " --encoder bert:" + encoder + " --quiet");
  EXPECT_EQ(r.status, 0) << r.err;  // its own encoder
  // Not an F5 file; no labelled input; an unknown pooled term.
  r = verity_test::run("calibrate --verifier " + train + " --dev-pairs " + train + " --out " + recal + " --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not an F5 file"), std::string::npos) << r.err;
  r = verity_test::run("calibrate --verifier " + out + " --out " + recal + " --quiet");
  EXPECT_EQ(r.status, 2);
  r = verity_test::run("calibrate --verifier " + out + " --dev-pairs " + train + " --pooled-term maybe --out " +
                       recal + " --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("maybe"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// A pooled head: trained from the pooled vectors the sample cache keeps (a
// second run from the cache scores the same), its dimension the encoder's,
// recorded in the file; more parameters than without; F3 refuses the flag.
TEST(TrainVerifierF5Cli, PooledHeadTrainsFromTheSampleCache) {
  const auto data = write_tiny_f5_data("verity_f5_head_");
  const auto cache = (data.dir / "samples.vpsc").string(), out = (data.dir / "head.valn").string();
  const std::string command = tiny_f5_command(data) + " --seed 3 --token-cache " + cache;
  auto plain = verity_test::run(command + " --out " + (data.dir / "plain.valn").string());
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_TRUE(fs::exists(cache));
  auto first = verity_test::run(command + " --f5-pooled-head 2 --out " + out);
  ASSERT_EQ(first.status, 0) << first.err;
  auto second = verity_test::run(command + " --f5-pooled-head 2 --out " + out);
  ASSERT_EQ(second.status, 0) << second.err;
  const auto a = nlohmann::json::parse(first.out), b = nlohmann::json::parse(second.out);
  EXPECT_EQ(a.at("best_dev_macro_auc"), b.at("best_dev_macro_auc"));
  EXPECT_EQ(a.at("calibration"), b.at("calibration"));
  auto v = verify::AlignmentVerifier::load(out);
  auto encoder = encode::make_encoder("bert:" + data.encoder);
  EXPECT_EQ(v->config().pooled_head, 2u);
  EXPECT_EQ(v->config().pooled_dim, encoder->dim());
  EXPECT_EQ(a.at("parameters").get<size_t>(),
            // the head (2 readings of 2 · dim values, biases), their rows in the final layer (mlp 4) and the linear path
            nlohmann::json::parse(plain.out).at("parameters").get<size_t>() + (2 * (2 * encoder->dim()) + 2) + 2 * 4 + 2);
  auto f3 = verity_test::run("train-verifier --verifier f3 --train " + data.triples + " --f5-pooled-head 2 --out " +
                             (data.dir / "f3.vvrf").string() + " --quiet");
  EXPECT_EQ(f3.status, 2);
  EXPECT_NE(f3.err.find("--f5-pooled-head"), std::string::npos) << f3.err;
}

// --f5-fold-case: the file reads identities ignoring case, with the folds of
// the encoder's vocabulary (the tiny BERT's are its upper-case special
// tokens), kept through calibrate; F3 refuses the flag.
TEST(TrainVerifierF5Cli, FoldCaseKeepsTheEncodersFolds) {
  const auto data = write_tiny_f5_data("verity_f5_fold_");
  const auto out = (data.dir / "fold.valn").string(), recalibrated = (data.dir / "recalibrated.valn").string();
  auto r = verity_test::run(tiny_f5_command(data) + " --seed 1 --f5-fold-case --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto v = verify::AlignmentVerifier::load(out);
  EXPECT_TRUE(v->config().fold_case);
  EXPECT_EQ(v->case_folds().size(), 5u);  // [PAD] [UNK] [CLS] [SEP] [MASK]
  EXPECT_EQ(v->case_folds().fold(verify::token_identity("[CLS]")), verify::token_identity("[cls]"));
  r = verity_test::run("calibrate --dev-pairs " + data.dev + " --encoder bert:" + data.encoder + " --verifier " + out +
                       " --out " + recalibrated + " --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto w = verify::AlignmentVerifier::load(recalibrated);
  EXPECT_TRUE(w->config().fold_case);
  EXPECT_EQ(w->case_folds().entries(), v->case_folds().entries());
  r = verity_test::run(tiny_f5_command(data) + " --seed 1 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(verify::AlignmentVerifier::load(out)->config().fold_case);
  EXPECT_TRUE(verify::AlignmentVerifier::load(out)->case_folds().empty());
  auto f3 = verity_test::run("train-verifier --verifier f3 --train " + data.triples + " --f5-fold-case --out " +
                             (data.dir / "f3.vvrf").string() + " --quiet");
  EXPECT_EQ(f3.status, 2);
  EXPECT_NE(f3.err.find("--f5-fold-case"), std::string::npos) << f3.err;
}

// --f5-antonyms wordnet+relations: the relation opposites join WordNet's in the
// file's lexicon and the summary counts them; F3 and an F5 without the
// lexicon input refuse the flag.
TEST(TrainVerifierF5Cli, RelationOppositesJoinTheLexicon) {
  const auto data = write_tiny_f5_data("verity_f5_relations_");
  const auto out = (data.dir / "relations.valn").string();
  const std::string command = tiny_f5_command(data) + " --seed 1";
  auto plain = verity_test::run(command + " --out " + out);
  ASSERT_EQ(plain.status, 0) << plain.err;
  const auto wordnet = nlohmann::json::parse(plain.out).at("inputs").at("lexicon");
  EXPECT_FALSE(wordnet.contains("relation_pairs"));
  EXPECT_EQ(nlohmann::json::parse(plain.out).at("options").at("f5_antonyms"), "wordnet");
  auto r = verity_test::run(command + " --f5-antonyms wordnet+relations --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  const auto lexicon = summary.at("inputs").at("lexicon");
  const auto relations = verify::relation_antonyms();
  EXPECT_EQ(lexicon.at("relation_pairs").get<size_t>(), relations.size());
  EXPECT_EQ(lexicon.at("pairs").get<size_t>(), wordnet.at("pairs").get<size_t>() + relations.size());
  EXPECT_EQ(summary.at("options").at("f5_antonyms"), "wordnet+relations");
  EXPECT_NE(lexicon.at("source").get<std::string>().find("relation opposites"), std::string::npos);
  const auto v = verify::AlignmentVerifier::load(out);
  const auto& words = v->lexicon().antonym_words();
  EXPECT_EQ(words.size(), lexicon.at("pairs").get<size_t>());
  EXPECT_NE(std::find(words.begin(), words.end(), std::pair<std::string, std::string>{"under", "on"}), words.end());
  EXPECT_TRUE(v->lexicon().antonyms(verify::token_identity("\u2581behind"), verify::token_identity("\u2581front")));

  // calibrate --add-antonyms relations adds them to a file trained without:
  // recorded in its summary and provenance; a second pass adds none.
  const auto plain_file = (data.dir / "plain.valn").string(), added = (data.dir / "added.valn").string();
  ASSERT_EQ(verity_test::run(command + " --out " + plain_file).status, 0);
  const auto before = verify::AlignmentVerifier::load(plain_file)->lexicon().antonym_words();
  std::set<std::pair<std::string, std::string>> held;
  for (const auto& [x, y] : before) held.insert(std::minmax(x, y));
  size_t missing = 0;
  for (const auto& [x, y] : relations) missing += held.count(std::minmax(x, y)) == 0;
  const std::string calibrate = "calibrate --dev-pairs " + data.dev + " --encoder bert:" + data.encoder + " --json --quiet";
  r = verity_test::run(calibrate + " --verifier " + plain_file + " --add-antonyms relations --out " + added);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("added_antonyms").at("pairs").get<size_t>(), missing);
  const auto recalibrated = verify::AlignmentVerifier::load(added);
  EXPECT_EQ(recalibrated->lexicon().antonym_words().size(), before.size() + missing);
  EXPECT_TRUE(recalibrated->lexicon().antonyms(verify::token_identity("\u2581under"), verify::token_identity("\u2581on")));
  EXPECT_EQ(nlohmann::json::parse(recalibrated->provenance()).at("recalibrated").at("added_antonyms").at("source"),
            "relations");
  r = verity_test::run(calibrate + " --verifier " + added + " --add-antonyms relations --out " + added);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("added_antonyms").at("pairs").get<size_t>(), 0u);
  r = verity_test::run(calibrate + " --verifier " + plain_file + " --out " + added);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out).contains("added_antonyms"));
  EXPECT_EQ(verify::AlignmentVerifier::load(added)->lexicon().antonym_words().size(), before.size());
  EXPECT_EQ(verity_test::run(calibrate + " --verifier " + plain_file + " --add-antonyms all --out " + added).status, 2);
  // Lists join with '+'; the spatial relation changes come on top of what the file holds.
  r = verity_test::run(calibrate + " --verifier " + plain_file + " --add-antonyms relations+spatial --out " + added);
  ASSERT_EQ(r.status, 0) << r.err;
  held.clear();
  for (const auto& [x, y] : before) held.insert(std::minmax(x, y));
  size_t missing_joined = 0;
  for (const auto& list : {relations, verify::spatial_relation_changes()})
    for (const auto& [x, y] : list) missing_joined += held.insert(std::minmax(x, y)).second;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("added_antonyms").at("pairs").get<size_t>(), missing_joined);
  EXPECT_TRUE(verify::AlignmentVerifier::load(added)->lexicon().antonyms(verify::token_identity("\u2581above"),
                                                                          verify::token_identity("\u2581beside")));
  r = verity_test::run(calibrate + " --verifier " + plain_file + " --add-antonyms relations+colours --out " + added);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("'colours'"), std::string::npos) << r.err;

  r = verity_test::run(command + " --f5-antonyms wordnet+relations --f5-inputs map,identity,pooled --out " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--f5-antonyms"), std::string::npos) << r.err;
  // A file trained without the lexicon input: calibrate --add-antonyms names the flag and the file.
  const auto bare = (data.dir / "bare.valn").string();
  r = verity_test::run(command + " --f5-inputs map,identity,pooled --out " + bare);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("options").at("f5_antonyms"), "none");
  r = verity_test::run(calibrate + " --verifier " + bare + " --add-antonyms relations --out " + added);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--add-antonyms relations"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(bare), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no lexicon input"), std::string::npos) << r.err;
  // --whole-words: recorded in the file's config and its recalibration; refused without the lexicon input.
  r = verity_test::run(calibrate + " --verifier " + plain_file + " --whole-words --out " + added);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("whole_words"), true);
  EXPECT_TRUE(verify::AlignmentVerifier::load(added)->config().whole_words);
  EXPECT_FALSE(verify::AlignmentVerifier::load(plain_file)->config().whole_words);
  EXPECT_EQ(nlohmann::json::parse(verify::AlignmentVerifier::load(added)->provenance()).at("recalibrated").at(
                "whole_words"),
            true);
  r = verity_test::run(calibrate + " --verifier " + bare + " --whole-words --out " + added);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--whole-words"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no lexicon input"), std::string::npos) << r.err;
  r = verity_test::run(command + " --f5-antonyms all --out " + out);
  EXPECT_EQ(r.status, 2);
  r = verity_test::run("train-verifier --verifier f3 --train " + data.triples +
                       " --f5-antonyms wordnet+relations --out " + (data.dir / "f3.vvrf").string() + " --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--f5-antonyms"), std::string::npos) << r.err;
  fs::remove_all(data.dir);
}

// calibrate --spell-lexicon stores how the encoder's tokenizer writes every
// antonym form it splits, capitalized forms too, without special tokens; the
// file holds them, the summary and provenance count them, and the polarity
// feature then fires across the pieces.
TEST(TrainVerifierF5Cli, SpelledLexiconHoldsTheTokenizersSplitForms) {
  const auto data = write_tiny_f5_data("verity_f5_spelled_");
  const auto trained = (data.dir / "trained.valn").string(), spelled = (data.dir / "spelled.valn").string();
  auto r = verity_test::run(tiny_f5_command(data) + " --seed 1 --out " + trained);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string calibrate = "calibrate --dev-pairs " + data.dev + " --encoder bert:" + data.encoder +
                                " --verifier " + trained + " --json --quiet --out " + spelled;
  r = verity_test::run(calibrate + " --spell-lexicon");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  const auto v = verify::AlignmentVerifier::load(spelled);
  const auto& spellings = v->lexicon().spellings();
  EXPECT_EQ(summary.at("spelled_forms").get<size_t>(), spellings.size());
  EXPECT_EQ(nlohmann::json::parse(v->provenance()).at("recalibrated").at("spelled_forms"), spellings.size());

  // What the tokenizer makes of each form, from the encoder itself.
  const auto encoder = encode::make_encoder("bert:" + data.encoder);
  auto forms = v->lexicon().antonym_forms();  // then the number words no antonym form is
  for (const auto& n : v->lexicon().words().numbers)
    if (std::find(forms.begin(), forms.end(), n) == forms.end()) forms.push_back(n);
  std::vector<std::string> texts;
  for (const auto& f : forms) {
    texts.push_back(f);
    if (f[0] >= 'a' && f[0] <= 'z') texts.push_back(char(f[0] - 'a' + 'A') + f.substr(1));
  }
  const auto pieces = encoder->pieces(texts);
  verify::LexiconSpellings expected;  // a capitalized form only where its pieces differ (an uncased BERT's do not)
  for (size_t i = 0; i < texts.size(); ++i)
    if (pieces[i].size() >= 2 && !(i > 0 && texts[i][0] >= 'A' && texts[i][0] <= 'Z' && pieces[i] == pieces[i - 1]))
      expected.emplace_back(texts[i], pieces[i]);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(spellings, expected);
  for (const auto& [form, p] : spellings)
    for (const auto& piece : p) EXPECT_TRUE(piece != "[CLS]" && piece != "[SEP]") << form;
  size_t seen = 0;  // each spelled form's run is its word: one with an antonym, or a number word
  for (const auto& [form, p] : spellings) {
    const auto run = v->lexicon().spelled_at(verify::token_identities(p), 0);
    EXPECT_EQ(run.length, p.size()) << form;
    seen += run.word != verify::Lexicon::kNoWord || run.number != 0;
  }
  EXPECT_EQ(seen, spellings.size());
  // Without the flag the file keeps no spellings and the summary says nothing of them.
  r = verity_test::run(calibrate);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out).contains("spelled_forms"));
  EXPECT_TRUE(verify::AlignmentVerifier::load(spelled)->lexicon().spellings().empty());
  // A gate band needs the gated term; with it the band reaches the file and its record.
  r = verity_test::run(calibrate + " --gate-band 0.1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--gate-band needs --pooled-term gated"), std::string::npos) << r.err;
  r = verity_test::run(calibrate + " --pooled-term gated --gate-band 0.1");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto banded = verify::AlignmentVerifier::load(spelled);
  if (const auto& c = banded->calibration(); c && c->gate) {  // a gate only where the cosine helped on dev
    EXPECT_FLOAT_EQ(c->gate->band, 0.1f);
    EXPECT_FLOAT_EQ(nlohmann::json::parse(r.out).at("calibration").at("gate").at("band").get<float>(), 0.1f);
  }
  EXPECT_EQ(nlohmann::json::parse(banded->provenance()).at("recalibrated").at("gate_band"), 0.1);

  // A flip cap is fitted on the dev pairs that differ only by an opposite; with none, it cannot be.
  r = verity_test::run(calibrate + " --flip-cap");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("no dev pair differs only by a polarity flip"), std::string::npos) << r.err;
  const auto flips = (data.dir / "flips.jsonl").string();
  write_pairs(flips, "flips",
              {{"the upper room", "the lower room", 0},
               {"the cat sat on the upper table", "the cat sat on the lower table", 0},
               {"the lower desk", "the upper desk", 0},
               {"the room is upper", "the room is not lower", 1}});  // a negator and an opposite cancel
  r = verity_test::run(calibrate + " --add-antonyms relations --flip-cap --dev-pairs " + flips);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto capped = nlohmann::json::parse(r.out);
  const auto& fit = capped.at("flip_cap");
  EXPECT_EQ(fit.at("pairs"), 3);
  EXPECT_EQ(fit.at("same"), 0);
  EXPECT_DOUBLE_EQ(fit.at("cap").get<double>(), 1.0 / 5.0);  // (same + 1) / (pairs + 2)
  EXPECT_EQ(fit.at("by_group").at("flips").at("pairs"), 3);
  const auto with_cap = verify::AlignmentVerifier::load(spelled);
  ASSERT_TRUE(with_cap->calibration().has_value());
  EXPECT_FLOAT_EQ(with_cap->calibration()->flip_cap, 0.2f);
  EXPECT_FLOAT_EQ(capped.at("calibration").at("flip_cap").get<float>(), 0.2f);
  EXPECT_EQ(nlohmann::json::parse(with_cap->provenance()).at("recalibrated").at("flip_cap").at("pairs"), 3);
  // The flips score at most the cap; the pair whose negator and opposite cancel does not need to.
  r = verity_test::run("pairs-eval --data " + flips + " --encoder bert:" + data.encoder + " --verifier f5:" + spelled +
                       " --scores-out " + (data.dir / "scores.jsonl").string() + " --json --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream scores(data.dir / "scores.jsonl");
  std::string line;
  size_t capped_flips = 0;
  while (std::getline(scores, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("label") == 0) capped_flips += j.at("score").get<double>() <= 0.2 + 1e-6;
  }
  EXPECT_EQ(capped_flips, 3u);
  fs::remove_all(data.dir);
}

// calibrate --surface-floor counts the dev pairs whose texts are the same on
// the surface (case and sentence punctuation aside) and floors their P at
// (same + 1) / (pairs + 2); with --keep-calibration every other part of the
// file's calibration stays, so only those pairs' scores move.
TEST(TrainVerifierF5Cli, SurfaceFloorOnAKeptCalibration) {
  const auto data = write_tiny_f5_data("verity_f5_surface_");
  const auto trained = (data.dir / "trained.valn").string(), floored = (data.dir / "floored.valn").string();
  auto r = verity_test::run(tiny_f5_command(data) + " --seed 1 --out " + trained);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto surface = (data.dir / "surface.jsonl").string();
  write_pairs(surface, "surface",
              {{"The cat sat on the mat.", "the cat sat on the mat", 1},
               {"the cat sat on the mat !", "The Cat sat on the mat", 1},
               {"the cat sat on the mat?", "the cat sat on the mat", 0},
               {"the cat sat on the mat", "the mat sat on the cat", 0}});  // the same words, not the same text
  const std::string calibrate = "calibrate --dev-pairs " + data.dev + " --encoder bert:" + data.encoder +
                                " --verifier " + trained + " --json --quiet --out " + floored;
  // Keeping the calibration fits only a cap or a floor; a floor needs a surface match among the dev pairs.
  r = verity_test::run(calibrate + " --keep-calibration");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("none was asked for"), std::string::npos) << r.err;
  r = verity_test::run(calibrate + " --keep-calibration --surface-floor");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("no dev pair is the same text on the surface"), std::string::npos) << r.err;
  // The tiny BERT is uncased: it spells no capital, so no pair is a name swap.
  write_pairs((data.dir / "names.jsonl").string(), "names",
              {{"How do I install Python on Windows?", "How do I install Java on Windows?", 0}});
  r = verity_test::run(calibrate + " --keep-calibration --name-cap --dev-pairs " + (data.dir / "names.jsonl").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("no dev pair differs by a swapped name"), std::string::npos) << r.err;

  r = verity_test::run(calibrate + " --keep-calibration --surface-floor --dev-pairs " + surface);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  const auto& fit = summary.at("surface_floor");
  EXPECT_EQ(fit.at("pairs"), 3);
  EXPECT_EQ(fit.at("same"), 2);
  EXPECT_DOUBLE_EQ(fit.at("floor").get<double>(), 3.0 / 5.0);
  EXPECT_EQ(fit.at("by_group").at("surface").at("pairs"), 3);
  EXPECT_EQ(summary.at("calibration").at("kept"), true);
  EXPECT_FALSE(summary.at("calibration").contains("pooled_term"));
  const auto before = verify::AlignmentVerifier::load(trained), after = verify::AlignmentVerifier::load(floored);
  ASSERT_TRUE(before->calibration() && after->calibration());
  auto kept = *after->calibration();
  EXPECT_FLOAT_EQ(kept.surface_floor, 0.6f);
  kept.surface_floor = 0;
  EXPECT_EQ(verify::calibration_json(kept), verify::calibration_json(*before->calibration()));
  const auto record = nlohmann::json::parse(after->provenance()).at("recalibrated");
  EXPECT_EQ(record.at("kept_calibration"), true);
  EXPECT_EQ(record.at("surface_floor").at("pairs"), 3);

  // Scored: the surface matches reach the floor, the reordered pair scores as before.
  auto scores = [&](const std::string& verifier) {
    const auto out = (data.dir / "scores.jsonl").string();
    const auto run = verity_test::run("pairs-eval --data " + surface + " --encoder bert:" + data.encoder +
                                      " --verifier f5:" + verifier + " --scores-out " + out + " --json --quiet");
    EXPECT_EQ(run.status, 0) << run.err;
    std::vector<double> s;
    std::ifstream in(out);
    for (std::string line; std::getline(in, line);) s.push_back(nlohmann::json::parse(line).at("score").get<double>());
    return s;
  };
  const auto plain = scores(trained), raised = scores(floored);
  ASSERT_EQ(plain.size(), 4u);
  ASSERT_EQ(raised.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(raised[i], std::max(plain[i], 0.6), 1e-6) << i;
  EXPECT_DOUBLE_EQ(raised[3], plain[3]);
  fs::remove_all(data.dir);
}
