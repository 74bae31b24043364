// verity train-verifier: trains an F3/F4 verifier on triple JSONL (frozen
// encoder), optionally mixed with BM25-mined retrieval triples of a BEIR
// dataset's train qrels. Details: docs/TRAINING.md.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <random>
#include <sstream>
#include <unordered_set>

#include "cli/command.hpp"
#include "cli/f5_report_json.hpp"
#include "cli/labelled_inputs.hpp"
#include "core/crc32c.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "data/beir.hpp"
#include "data/labelled_pairs.hpp"
#include "data/triples.hpp"
#include "encode/registry.hpp"
#include "perturb/wordnet.hpp"
#include "train/alignment_training.hpp"
#include "train/retrieval_triples.hpp"
#include "train/token_cache.hpp"
#include "train/verifier_training.hpp"
#include "verify/alignment_verifier.hpp"
#include "verify/ensemble.hpp"
#include "verify/learned.hpp"

namespace verity::cli {
namespace {

struct TrainVerifierArgs {
  CommonFlags common;
  std::vector<std::string> train;  // one or more files, concatenated, exact duplicates dropped
  std::string dev, test, out;
  std::string encoder = "use-lite";
  std::string mode = "frozen";
  std::string encoder_out;  // end2end: fine-tuned encoder directory
  std::vector<std::string> given_f3_f4_flags;  // flags of F3/F4 training the command line set
  std::vector<std::string> given_f5_flags;     // and those of F5 training
  double encoder_lr = 1e-5;
  std::string verifier = "f3";
  size_t map_size = verify::kDefaultMapSize;
  std::vector<int64_t> channels = {32, 64, 128};
  std::string f3_pool = "mean";
  size_t vit_patch = 8, vit_dim = 256, vit_layers = 2, vit_heads = 8, vit_mlp = 512;
  size_t max_train = 0;
  size_t encode_batch = 32;
  std::string retrieval;           // BEIR dataset dir (train qrels)
  double retrieval_ratio = 0.5;    // retrieval triples per near-miss training triple
  size_t retrieval_top = 20;
  double retrieval_dev_fraction = 0.1;
  int threads = 0;
  std::string token_cache;  // frozen: token vectors per text, reused across runs
  train::TrainOptions train_options;
  // F5: labelled pairs beside the triples.
  std::vector<std::string> pairs, dev_pairs;
  size_t max_pairs_per_source = 0, max_dev_pairs_per_source = 0;
  std::string f5_lexicon_words = "english";  // number words and negators in the F5 lexicon, or "none"
  std::string f5_antonyms = "wordnet";       // the lexicon's antonyms: WordNet's, or with verify::relation_antonyms
  verify::AlignmentConfig f5;
  train::AlignmentTrainOptions f5_train;
  std::string pooled_term = "none";
  std::optional<std::string> threshold_rule;  // F5: best | plateau (absent: plateau)
  std::string lr_schedule = "constant";     // F5: constant | cosine
  std::vector<std::string> source_weights;  // F5: NAME=WEIGHT per pair source
  std::vector<std::string> distill_from;    // F5: teacher verifier files
  std::optional<double> distill_weight;     // F5: absent = 0.5
  std::optional<uint64_t> sample_seed;      // F5: seed of the capped samples (absent: --seed)
};

nlohmann::json accuracy_json(const train::PairwiseAccuracy& a) {
  nlohmann::json by_type = nlohmann::json::object();
  for (const auto& [type, ct] : a.by_type)
    by_type[type] = {{"accuracy", ct.second ? double(ct.first) / double(ct.second) : 0.0},
                     {"correct", ct.first},
                     {"total", ct.second}};
  return {{"accuracy", a.accuracy()}, {"total", a.total}, {"by_type", by_type}};
}

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << std::hex << v;
  return os.str();
}

// Draws `count` of `triples` (all when count >= size) in a seeded order.
std::vector<data::Triple> sample(std::vector<data::Triple> triples, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x2545f4914f6cdd1dULL + 7);
  std::shuffle(triples.begin(), triples.end(), rng);
  if (count < triples.size()) triples.resize(count);
  return triples;
}

nlohmann::json file_json(const std::string& path, uint64_t hash, size_t n, const char* what) {
  return {{"path", std::filesystem::path(path).filename().string()}, {"fnv1a64", hex(hash)}, {what, n}};
}

// Flags that only F3/F4 training reads; F5 refuses them rather than ignore them.
constexpr std::initializer_list<const char*> kF3F4OnlyFlags = {
    "--test", "--encoder-lr", "--encoder-out", "--map-size", "--channels", "--dev-metric", "--f3-pool",
    "--vit-patch", "--vit-dim", "--vit-layers", "--vit-heads", "--vit-mlp", "--loss", "--margin", "--mnrl-scale",
    "--batch-size", "--checkpoint-dir", "--checkpoint-every", "--resume", "--max-steps", "--per-type",
    "--train-map-width", "--retrieval", "--retrieval-ratio", "--retrieval-top", "--retrieval-dev-fraction",
    "--threads"};

// Flags that only F5 training reads; F3/F4 refuse them (several also have a check of their own, first).
constexpr std::initializer_list<const char*> kF5OnlyFlags = {
    "--max-pairs-per-source", "--max-dev-pairs-per-source", "--f5-hidden", "--f5-embedding", "--f5-mlp",
    "--f5-conv", "--f5-inputs", "--f5-fold-case", "--f5-whole-words", "--f5-lexicon-words", "--steps-per-epoch", "--pairs-per-source",
    "--triples-per-step", "--lr-schedule", "--triple-weight", "--pooled-dropout", "--pooled-term"};

// F5: pairs (balanced per source) and triples, calibrated on dev.
void run_train_f5(TrainVerifierArgs& a) {
  // F5's features are computed outside autograd, so no gradient can reach the encoder through it.
  VERITY_CHECK(a.mode == "frozen", ConfigError, "--mode ", a.mode,
               " is not available for --verifier f5 (its features are computed outside autograd): fine-tune the "
               "encoder first (train-encoder) and train F5 on its maps with --encoder DIR");
  if (!a.given_f3_f4_flags.empty()) throw ConfigError(flags_refused(a.given_f3_f4_flags, "--verifier f3/f4 training", "train-verifier --help"));
  const auto pooled_term = train::parse_pooled_term(a.pooled_term);  // a bad value fails before any reading
  const auto threshold_rule = train::parse_threshold_rule(a.threshold_rule.value_or("plateau"));
  std::map<std::string, train::PairSourceData> by_source;
  nlohmann::json inputs = {{"pairs", nlohmann::json::array()}, {"dev_pairs", nlohmann::json::array()},
                           {"triples", nlohmann::json::array()}};
  auto read_pairs = [&](const std::vector<std::string>& paths, bool dev) {
    for (const auto& path : paths) {
      auto f = data::read_labelled_pairs(path, true);
      if (f.skipped) log("warning: ", path, ": skipped ", f.skipped, " invalid line(s), e.g. ", f.skip_examples.front());
      const auto name = pair_source_name(f);
      inputs[dev ? "dev_pairs" : "pairs"].push_back(file_json(path, f.content_hash, f.pairs.size(), "pairs"));
      inputs[dev ? "dev_pairs" : "pairs"].back()["source"] = name;
      auto& src = by_source[name];
      src.name = name;
      auto& dest = dev ? src.dev : src.train;
      dest.insert(dest.end(), f.pairs.begin(), f.pairs.end());
    }
  };
  read_pairs(a.pairs, false);
  read_pairs(a.dev_pairs, true);
  // The caps draw with --sample-seed, else --seed: calibrate --seed S draws
  // the dev sample of --sample-seed S.
  const uint64_t sample_seed = a.sample_seed.value_or(a.train_options.seed);
  std::vector<train::PairSourceData> sources;
  nlohmann::json samples = nlohmann::json::object();
  for (auto& [name, src] : by_source) {
    VERITY_CHECK(!src.train.empty(), ConfigError, "--dev-pairs source '", name, "' has no --pairs training file");
    src.train = seeded_sample(std::move(src.train), a.max_pairs_per_source, sample_seed);
    src.dev = seeded_sample(std::move(src.dev), a.max_dev_pairs_per_source, sample_seed + 1);
    log("f5: source ", name, ": ", src.train.size(), " train, ", src.dev.size(), " dev pairs");
    samples[name] = {{"train", src.train.size()}, {"train_fnv1a64", hex64(pairs_sample_hash(src.train))},
                     {"dev", src.dev.size()}, {"dev_fnv1a64", hex64(pairs_sample_hash(src.dev))}};
    sources.push_back(std::move(src));
  }
  inputs["samples"] = samples;
  std::vector<data::Triple> train_triples, dev_triples;
  for (const auto& path : a.train) {
    auto f = data::read_triples(path);
    inputs["triples"].push_back(file_json(path, f.content_hash, f.triples.size(), "triples"));
    train_triples.insert(train_triples.end(), f.triples.begin(), f.triples.end());
  }
  if (a.max_train) train_triples = seeded_sample(std::move(train_triples), a.max_train, sample_seed);
  if (!a.dev.empty()) {
    auto f = data::read_triples(a.dev);
    inputs["dev_triples"] = file_json(a.dev, f.content_hash, f.triples.size(), "triples");
    dev_triples = std::move(f.triples);
  }
  auto o = a.f5_train;
  for (const auto& spec : a.source_weights) {
    const auto eq = spec.find('=');
    VERITY_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(), ConfigError,
                 "--pair-source-weight: expected NAME=WEIGHT, got '", spec, "'");
    const auto name = spec.substr(0, eq), value = spec.substr(eq + 1);
    VERITY_CHECK(by_source.count(name), ConfigError, "--pair-source-weight: '", name,
                 "' is not a pair source (sources are named by the directory of their --pairs file)");
    VERITY_CHECK(!o.source_weights.count(name), ConfigError, "--pair-source-weight: '", name, "' given twice");
    double w = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), w);
    VERITY_CHECK(ec == std::errc() && end == value.data() + value.size() && std::isfinite(w) && w > 0, ConfigError,
                 "--pair-source-weight: weight of '", name, "' must be a positive number, got '", value, "'");
    o.source_weights[name] = w;
  }
  // Teachers load before the encoder, so a bad file fails before any encoding.
  std::vector<std::unique_ptr<verify::AlignmentVerifier>> teachers;
  nlohmann::json distill = nullptr;
  VERITY_CHECK(!a.distill_weight || !a.distill_from.empty(), ConfigError,
               "--distill-weight needs teachers (--distill-from)");
  if (!a.distill_from.empty()) {
    const double weight = a.distill_weight.value_or(0.5);
    VERITY_CHECK(weight > 0 && weight <= 1, ConfigError, "--distill-weight must lie in (0, 1], got ", weight);
    distill = {{"weight", weight}, {"teachers", nlohmann::json::array()}};
    for (const auto& path : a.distill_from) {
      VERITY_CHECK(verify::is_alignment_verifier_file(path), ConfigError, "--distill-from ", path,
                   ": not an F5 verifier file");
      teachers.push_back(verify::AlignmentVerifier::load(path));
      VERITY_CHECK(teachers.back()->is_trained(), ConfigError, "--distill-from ", path, ": an untrained verifier");
      const auto bytes = read_file(path);
      distill["teachers"].push_back(file_json(path, fnv1a64(bytes.data(), bytes.size()), bytes.size(), "bytes"));
      o.teachers.push_back(teachers.back().get());
    }
    o.distill_weight = weight;
  }
  auto encoder = encode::make_encoder(a.encoder);
  o.pooled_term = pooled_term;
  o.threshold_rule = threshold_rule;
  o.cosine_lr = a.lr_schedule == "cosine";
  // The options F3/F4 training shares.
  o.epochs = a.train_options.epochs;
  o.lr = a.train_options.lr;
  o.weight_decay = a.train_options.weight_decay;
  o.seed = a.train_options.seed;
  o.patience = a.train_options.patience;
  o.encode_batch = a.encode_batch;
  o.sample_cache = a.token_cache;
  const bool with_lexicon = std::find(a.f5.inputs.begin(), a.f5.inputs.end(), "lexicon") != a.f5.inputs.end();
  VERITY_CHECK(with_lexicon || a.f5_antonyms == "wordnet", ConfigError, "--f5-antonyms ", a.f5_antonyms,
               " needs the lexicon among --f5-inputs");
  if (with_lexicon) {
    o.antonyms = perturb::wn_antonym_pairs();
    log("f5: lexicon of ", o.antonyms.size(), " WordNet antonym pairs");
    inputs["lexicon"] = {{"source", "WordNet 3.0 direct antonyms (wordnet-base)"}, {"pairs", o.antonyms.size()}};
    if (a.f5_antonyms == "wordnet+relations") {
      const size_t added = verify::merge_antonyms(o.antonyms, verify::relation_antonyms());
      log("f5: plus ", added, " relation opposites");
      inputs["lexicon"]["source"] = "WordNet 3.0 direct antonyms (wordnet-base) and verity's relation opposites";
      inputs["lexicon"]["relation_pairs"] = added;
      inputs["lexicon"]["pairs"] = o.antonyms.size();
    }
    if (a.f5_lexicon_words == "english") {
      o.lexicon_words = verify::LexiconWords::english();
      inputs["lexicon"]["number_words"] = o.lexicon_words.numbers.size();
      inputs["lexicon"]["negators"] = o.lexicon_words.negators.size();
      inputs["lexicon"]["negating_clitics"] = o.lexicon_words.negating_clitics.size();
    }
  }
  nlohmann::json provenance = {
      {"argv", invocation()},
      {"verifier", "f5"},
      {"encoder", encode::encoder_identity(*encoder)},
      {"inputs", inputs},
      {"options",
       {{"epochs", o.epochs}, {"steps_per_epoch", o.steps_per_epoch}, {"pairs_per_source", o.pairs_per_source},
        {"triples_per_step", o.triples_per_step}, {"triple_weight", o.triple_weight}, {"lr", o.lr},
        {"lr_schedule", o.cosine_lr ? "cosine" : "constant"}, {"weight_decay", o.weight_decay}, {"pooled_dropout", o.pooled_dropout}, {"pooled_term", train::pooled_term_name(o.pooled_term)},
        {"threshold_rule", train::threshold_rule_name(o.threshold_rule)}, {"f5_antonyms", with_lexicon ? a.f5_antonyms : "none"},
        {"seed", o.seed}, {"sample_seed", sample_seed}, {"source_weights", o.source_weights},
        {"max_pairs_per_source", a.max_pairs_per_source}, {"max_dev_pairs_per_source", a.max_dev_pairs_per_source},
        {"max_train_triples", a.max_train}}}};
  if (!distill.is_null()) provenance["options"]["distill"] = distill;  // absent without teachers, as before
  train::AlignmentTrainReport report;
  auto model = train::train_alignment_verifier(a.f5, *encoder, sources, train_triples, dev_triples, o,
                                               provenance.dump(), report);
  model->save(a.out);
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& e : report.epochs)
    epochs.push_back({{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"dev_macro_auc", e.dev_macro_auc},
                      {"dev_network_macro_auc", e.dev_network_macro_auc},
                      {"dev_auc", e.dev_auc}, {"seconds", e.seconds}});
  nlohmann::json summary = provenance;
  summary.update({{"out", a.out},
                  {"parameters", model->parameter_count()},
                  {"train_pairs", report.train_pairs},
                  {"dev_pairs", report.dev_pairs},
                  {"train_triples", report.train_triples},
                  {"dev_triples", report.dev_triples},
                  {"steps", report.steps},
                  {"best_epoch", report.best_epoch},
                  {"best_dev_macro_auc", report.best_dev_macro_auc},
                  {"calibration", calibration_fit_json(report.fit)},
                  {"dev", dev_metrics_json(report.dev)},
                  {"dev_nearmiss_pairwise_acc", report.dev_nearmiss_by_type},
                  {"encode_seconds", report.encode_seconds},
                  {"train_seconds", report.train_seconds},
                  {"epoch_log", epochs}});
  log("wrote ", model->spec(), " (", model->parameter_count(), " parameters); best epoch ", report.best_epoch,
      ", dev macro AUC ", report.best_dev_macro_auc);
  if (a.common.json) print_json(summary);
}

void run_train_verifier(TrainVerifierArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  if (a.verifier == "f5") return run_train_f5(a);
  VERITY_CHECK(!a.train.empty(), ConfigError, "--train: F3/F4 need training triples");
  VERITY_CHECK(a.pairs.empty() && a.dev_pairs.empty(), ConfigError,
               "--pairs/--dev-pairs train F5 (--verifier f5); F3/F4 learn from triples only");
  VERITY_CHECK(a.source_weights.empty(), ConfigError, "--pair-source-weight weighs F5's pair sources (--verifier f5)");
  VERITY_CHECK(a.f5.pooled_head == 0, ConfigError, "--f5-pooled-head is F5's (--verifier f5)");
  VERITY_CHECK(a.distill_from.empty() && !a.distill_weight, ConfigError,
               "--distill-from and --distill-weight distill F5 verifiers (--verifier f5)");
  VERITY_CHECK(!a.threshold_rule, ConfigError,
               "--threshold-rule sets F5's calibrated verdict threshold (--verifier f5); F3/F4 have no calibration");
  VERITY_CHECK(!a.sample_seed, ConfigError,
               "--sample-seed draws F5's capped pair samples (--verifier f5); F3/F4 sample with --seed");
  VERITY_CHECK(a.f5_antonyms == "wordnet", ConfigError, "--f5-antonyms sets F5's lexicon (--verifier f5)");
  if (!a.given_f5_flags.empty()) throw ConfigError(flags_refused(a.given_f5_flags, "--verifier f5 training", "train-verifier --help"));
  VERITY_CHECK(a.mode == "frozen" || a.mode == "end2end", ConfigError, "--mode ", a.mode,
               " is unknown (valid: frozen, end2end)");
  VERITY_CHECK(a.verifier == "f3" || a.f3_pool == "mean", ConfigError, "--f3-pool ", a.f3_pool,
               " applies to --verifier f3 only (F4 reads its CLS token)");
  const bool end2end = a.mode == "end2end";
  if (end2end && a.encoder_out.empty()) a.encoder_out = a.out + ".encoder";
  const auto losses = train::loss_names();
  if (std::find(losses.begin(), losses.end(), a.train_options.loss) == losses.end())
    throw ConfigError(cat("--loss ", a.train_options.loss, " is unknown (valid: pairwise, margin, mnrl)"));
  nlohmann::json inputs = nlohmann::json::object();

  // Several --train files (an earlier build plus extra training data) are
  // concatenated; a triple already seen is dropped so overlaps do not weigh double.
  std::vector<data::Triple> train_triples;
  uint64_t train_hash = 0;
  size_t train_duplicates = 0;
  nlohmann::json train_files = nlohmann::json::array();
  {
    std::unordered_set<std::string> seen;
    for (const auto& path : a.train) {
      auto file = data::read_triples(path);  // strict: a bad line names path:line
      train_files.push_back({{"path", path}, {"fnv1a64", hex(file.content_hash)}, {"triples", file.triples.size()}});
      train_hash = train_files.size() == 1 ? file.content_hash
                                           : fnv1a64(&file.content_hash, sizeof file.content_hash, train_hash);
      for (auto& t : file.triples) {
        if (!seen.insert(t.query + '\x1f' + t.positive + '\x1f' + t.negative + '\x1f' + t.type).second) {
          ++train_duplicates;
          continue;
        }
        train_triples.push_back(std::move(t));
      }
    }
  }
  if (train_duplicates) log("train: dropped ", train_duplicates, " triples repeated across --train files");
  inputs["train"] = {{"path", a.train.front()},   {"fnv1a64", hex(train_hash)}, {"triples", train_triples.size()},
                     {"files", train_files}, {"duplicates_dropped", train_duplicates}};
  if (a.max_train && train_triples.size() > a.max_train)
    train_triples = sample(std::move(train_triples), a.max_train, a.train_options.seed);
  std::vector<data::Triple> dev_triples, test_triples;
  if (!a.dev.empty()) {
    auto f = data::read_triples(a.dev);
    inputs["dev"] = {{"path", a.dev}, {"fnv1a64", hex(f.content_hash)}, {"triples", f.triples.size()}};
    dev_triples = std::move(f.triples);
  }
  if (!a.test.empty()) {
    auto f = data::read_triples(a.test);
    inputs["test"] = {{"path", a.test}, {"fnv1a64", hex(f.content_hash)}, {"triples", f.triples.size()}};
    test_triples = std::move(f.triples);
  }
  const size_t near_miss_train = train_triples.size();
  if (!a.retrieval.empty()) {
    auto dataset = data::load_beir(a.retrieval, "train");
    train::RetrievalTripleOptions ro;
    ro.top = a.retrieval_top;
    ro.seed = a.train_options.seed;
    ro.threads = a.threads;
    auto mined = train::bm25_retrieval_triples(dataset, ro);
    std::vector<data::Triple> rtrain, rdev;
    for (auto& t : mined.triples) {
      // Held out by query text: every triple of a query lands on one side.
      (train::held_out_query(t.query, a.retrieval_dev_fraction) ? rdev : rtrain).push_back(std::move(t));
    }
    const auto wanted = size_t(a.retrieval_ratio * double(near_miss_train) + 0.5);
    if (wanted > rtrain.size())
      log("retrieval: ratio ", a.retrieval_ratio, " asks for ", wanted, " triples, ", rtrain.size(),
          " exist; using all");
    rtrain = sample(std::move(rtrain), wanted, a.train_options.seed);
    log("retrieval: ", mined.queries, " queries with qrels, ", mined.no_negative,
        " without a non-relevant doc in the BM25 top ", a.retrieval_top, "; ", rtrain.size(),
        " train + ", rdev.size(), " dev triples");
    inputs["retrieval"] = {{"dir", a.retrieval},
                           {"split", "train"},
                           {"corpus_fnv1a64", hex(dataset.corpus.content_hash)},
                           {"queries_fnv1a64", hex(dataset.report.queries_hash)},
                           {"qrels_fnv1a64", hex(dataset.report.qrels_hash)},
                           {"ratio", a.retrieval_ratio},
                           {"top", a.retrieval_top},
                           {"dev_fraction", a.retrieval_dev_fraction},
                           {"train_triples", rtrain.size()},
                           {"dev_triples", rdev.size()},
                           {"queries_without_negative", mined.no_negative}};
    train_triples.insert(train_triples.end(), rtrain.begin(), rtrain.end());
    dev_triples.insert(dev_triples.end(), rdev.begin(), rdev.end());
  }

  train::TextBank bank;
  const auto train_ix = train::index_triples(train_triples, bank);
  const auto dev_ix = train::index_triples(dev_triples, bank);
  const auto test_ix = train::index_triples(test_triples, bank);
  auto encoder = encode::make_encoder(a.encoder);
  double encode_seconds = 0;
  size_t cache_hits = 0;
  auto encode_bank = [&](bool use_cache) {
    const auto t_encode = std::chrono::steady_clock::now();
    if (use_cache) cache_hits = train::load_token_cache(bank, a.token_cache, encoder->spec());
    log("encoding ", bank.size() - cache_hits, " unique texts with ", encoder->spec(),
        use_cache ? cat(" (", cache_hits, " from ", a.token_cache, ")") : std::string());
    bank.encode(*encoder, a.encode_batch);
    if (use_cache && cache_hits < bank.size()) train::save_token_cache(bank, a.token_cache, encoder->spec());
    encode_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_encode).count();
  };
  if (!end2end) encode_bank(!a.token_cache.empty());

  std::unique_ptr<verify::LearnedVerifier> model;
  if (a.verifier == "f3") {
    verify::CnnConfig c;
    c.map_size = a.map_size;
    c.channels = a.channels;
    c.pool = a.f3_pool;
    model = verify::LearnedVerifier::untrained_cnn(c, a.train_options.seed);
  } else {
    verify::VitConfig c;
    c.map_size = a.map_size;
    c.patch = a.vit_patch;
    c.dim = a.vit_dim;
    c.layers = a.vit_layers;
    c.heads = a.vit_heads;
    c.mlp_dim = a.vit_mlp;
    model = verify::LearnedVerifier::untrained_vit(c, a.train_options.seed);
  }
  log("training ", a.verifier, " (", model->parameter_count(), " parameters) on ", train_ix.size(),
      " triples, dev ", dev_ix.size(), ", loss ", a.train_options.loss, ", seed ", a.train_options.seed);
  auto options = a.train_options;
  options.fingerprint = cat("train=", hex(train_hash), "|dev=", inputs.value("dev", nlohmann::json()).dump(),
                            "|retrieval=", inputs.value("retrieval", nlohmann::json()).dump(),
                            "|max_train=", a.max_train, "|encoder=", encoder->spec(),
                            "|dev_metric=", options.dev_metric);
  train::TrainReport report;
  if (end2end) {
    train::EndToEndOptions e2e;
    e2e.encoder = a.encoder;
    e2e.encoder_out = a.encoder_out;
    e2e.encoder_lr = a.encoder_lr;
    report = train::train_end_to_end(*model, bank, train_ix, dev_ix, options, e2e);
    if (!report.stopped_at_max_steps) {
      // Evaluate as search would: the verifier on maps of the fine-tuned encoder.
      encoder = encode::make_encoder(a.encoder_out);
      bank = train::TextBank();
      train::index_triples(train_triples, bank);
      train::index_triples(dev_triples, bank);
      train::index_triples(test_triples, bank);
      encode_bank(false);
    }
  } else {
    report = train::train_frozen(*model, bank, train_ix, dev_ix, options);
  }
  if (report.stopped_at_max_steps) {
    log("stopped at --max-steps ", options.max_steps, " before the planned epochs; ", a.out,
        " not written (resume with --resume)");
    if (a.common.json)
      print_json({{"argv", invocation()}, {"steps", report.steps}, {"stopped_at_max_steps", true},
                  {"examples_per_s", report.examples_per_second}});
    return;
  }

  // Accuracy through the inference path; training accuracy on at most 2000 triples.
  const std::span<const train::IndexedTriple> train_probe(train_ix.data(), std::min<size_t>(train_ix.size(), 2000));
  const auto train_acc = train::pairwise_accuracy(*model, bank, train_probe);
  const auto dev_acc = train::pairwise_accuracy(*model, bank, dev_ix);
  const auto t_test = std::chrono::steady_clock::now();
  const auto test_acc = train::pairwise_accuracy(*model, bank, test_ix);
  const double test_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_test).count();

  nlohmann::json summary = {
      {"argv", invocation()},
      {"mode", a.mode},
      {"verifier", a.verifier},
      {"parameters", model->parameter_count()},
      {"encoder", end2end ? a.encoder_out : a.encoder},
      {"encoder_spec", spec_for_report(encoder->spec())},
      {"base_encoder", a.encoder},
      {"loss", options.loss},
      {"seed", options.seed},
      {"epochs", options.epochs},
      {"batch_size", options.batch_size},
      {"per_type", options.per_type},
      {"train_map_width", options.train_map_width},
      {"lr", options.lr},
      {"inputs", inputs},
      {"near_miss_train_triples", near_miss_train},
      {"train_triples", train_ix.size()},
      {"dev_triples", dev_ix.size()},
      {"steps", report.steps},
      {"examples", report.examples},
      {"epochs_completed", report.epochs_completed},
      {"best_epoch", report.best_epoch},
      {"best_dev_pairwise_acc", report.best_dev_accuracy},
      {"dev_metric", a.train_options.dev_metric},
      {"early_stopped", report.early_stopped},
      {"stopped_at_max_steps", report.stopped_at_max_steps},
      {"resumed_from_step", report.resumed_from_step},
      {"train_seconds", report.train_seconds},
      {"examples_per_s", report.examples_per_second},
      {"encode_seconds", encode_seconds},
      {"token_cache_hits", cache_hits},
  };
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& e : report.epochs)
    epochs.push_back({{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"dev_pairwise_acc", e.dev_accuracy}});
  summary["epoch_log"] = epochs;
  summary["train_pairwise_acc"] = accuracy_json(train_acc);
  if (!dev_ix.empty()) summary["dev_pairwise_acc"] = accuracy_json(dev_acc);
  if (!test_ix.empty()) {
    summary["test_pairwise_acc"] = accuracy_json(test_acc);
    summary["test_pairs_per_s"] = test_seconds > 0 ? 2.0 * double(test_ix.size()) / test_seconds : 0.0;
  }

  auto provenance = summary;
  provenance.erase("epoch_log");
  model->mark_trained(provenance.dump());
  model->save(a.out);
  summary["out"] = a.out;
  log("wrote ", model->spec(), end2end ? cat(" and the fine-tuned encoder ", a.encoder_out) : std::string(),
      "; test pairwise acc ", test_ix.empty() ? std::string("n/a") : std::to_string(test_acc.accuracy()));
  if (a.common.json) print_json(summary);
}

void setup_train_verifier(CLI::App& app) {
  auto a = std::make_shared<TrainVerifierArgs>();
  auto* cmd = app.add_subcommand("train-verifier", "Train a verifier: F5 on labelled pairs beside near-miss triples, or F3/F4 on (query, positive, negative) triples");
  auto& o = a->train_options;
  cmd->add_option("--train", a->train,
                  "Training triples (JSONL, data/triples.hpp); repeatable, exact duplicates across files dropped");
  cmd->add_option("--dev", a->dev, "Dev triples: early stopping and best-epoch choice");
  cmd->add_option("--test", a->test, "Test triples: pairwise accuracy per type in the summary");
  cmd->add_option("--out", a->out, "Output verifier file (VVRF, written atomically)")->required();
  cmd->add_option("--encoder", a->encoder, "Encoder whose token vectors make the maps")->capture_default_str();
  cmd->add_option("--mode", a->mode, "frozen (encoder fixed, token vectors cached) | end2end (encoder fine-tuned)")
      ->capture_default_str();
  cmd->add_option("--encoder-lr", a->encoder_lr, "end2end: AdamW learning rate of the encoder")->capture_default_str();
  cmd->add_option("--encoder-out", a->encoder_out, "end2end: fine-tuned encoder directory (default: OUT.encoder)");
  cmd->add_option("--verifier", a->verifier, "f3 (CNN) | f4 (ViT) | f5 (alignment reader, pairs + triples)")
      ->check(CLI::IsMember({"f3", "f4", "f5"}))->capture_default_str();
  cmd->add_option("--map-size", a->map_size, "Map canvas size (crop/pad)")->capture_default_str();
  cmd->add_option("--channels", a->channels, "F3 channels of the three conv layers")->delimiter(',')->expected(3);
  cmd->add_option("--dev-metric", o.dev_metric,
                  "Best-epoch choice on dev: micro (all triples) | macro (mean over types) | min (worst type)")
      ->check(CLI::IsMember({"micro", "macro", "min"}))
      ->capture_default_str();
  cmd->add_option("--f3-pool", a->f3_pool, "F3 global pooling: mean | mean_max (adds the masked maximum)")
      ->check(CLI::IsMember({"mean", "mean_max"}))->capture_default_str();
  cmd->add_option("--vit-patch", a->vit_patch, "F4 patch size")->capture_default_str();
  cmd->add_option("--vit-dim", a->vit_dim, "F4 width")->capture_default_str();
  cmd->add_option("--vit-layers", a->vit_layers, "F4 transformer blocks")->capture_default_str();
  cmd->add_option("--vit-heads", a->vit_heads, "F4 attention heads")->capture_default_str();
  cmd->add_option("--vit-mlp", a->vit_mlp, "F4 MLP width")->capture_default_str();
  cmd->add_option("--loss", o.loss, "pairwise | margin | mnrl")->capture_default_str();
  cmd->add_option("--margin", o.margin, "Margin loss: required sigmoid-score gap")->capture_default_str();
  cmd->add_option("--mnrl-scale", o.mnrl_scale, "MNRL: scale on sigmoid scores")->capture_default_str();
  cmd->add_option("--epochs", o.epochs, "Maximum epochs")->capture_default_str();
  cmd->add_option("--batch-size", o.batch_size, "Triples per step")->capture_default_str();
  cmd->add_option("--lr", o.lr, "AdamW learning rate of the verifier")->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "AdamW weight decay")->capture_default_str();
  cmd->add_option("--seed", o.seed, "Initialization, shuffling, sampling")->capture_default_str();
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir, "Directory for checkpoint.vtck");
  cmd->add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints (0: each epoch)")
      ->capture_default_str();
  cmd->add_flag("--resume", o.resume, "Continue from --checkpoint-dir");
  cmd->add_option("--patience", o.patience, "Early stop after N epochs without dev gain (0: off)")
      ->capture_default_str();
  cmd->add_option("--max-steps", o.max_steps, "Stop after N optimizer steps in total (0: off)");
  cmd->add_option("--per-type", o.per_type,
                  "Balanced epochs: N triples of every type per epoch (cycled/subsampled; 0: all once)")
      ->capture_default_str();
  cmd->add_option("--train-map-width", o.train_map_width,
                  "Crop training maps to N query/candidate tokens (0: map size; inference is not cropped)")
      ->capture_default_str();
  cmd->add_option("--max-train", a->max_train, "Use at most N near-miss training triples (seeded sample)");
  cmd->add_option("--token-cache", a->token_cache,
                  "Frozen mode: file of token vectors per text (read, extended, rewritten) so runs encode once");
  cmd->add_option("--encode-batch", a->encode_batch, "Texts per encoder forward pass")->capture_default_str();
  cmd->add_option("--retrieval", a->retrieval, "BEIR dataset dir: mix in BM25 triples of its train qrels");
  cmd->add_option("--retrieval-ratio", a->retrieval_ratio, "Retrieval triples per near-miss training triple")
      ->capture_default_str();
  cmd->add_option("--retrieval-top", a->retrieval_top, "Negatives come from the BM25 top N")->capture_default_str();
  cmd->add_option("--retrieval-dev-fraction", a->retrieval_dev_fraction,
                  "Share of retrieval queries held out into dev")->capture_default_str();
  cmd->add_option("--threads", a->threads, "BM25 build threads (0: all cores)");
  auto& f5 = a->f5;
  auto& f5o = a->f5_train;
  cmd->add_option("--pairs", a->pairs, "F5: labelled pair JSONL {a, b, label} (repeatable; one source per directory)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--dev-pairs", a->dev_pairs, "F5: dev pairs per source (epoch choice, calibration, threshold)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-pairs-per-source", a->max_pairs_per_source, "F5: seeded cap on training pairs per source");
  cmd->add_option("--max-dev-pairs-per-source", a->max_dev_pairs_per_source, "F5: seeded cap on dev pairs per source");
  cmd->add_option("--f5-hidden", f5.hidden, "F5 per-token width")->capture_default_str();
  cmd->add_option("--f5-embedding", f5.token_embedding, "F5 learned vector per token bucket (0: none)")
      ->capture_default_str();
  cmd->add_option("--f5-mlp", f5.mlp, "F5 final layer width")->capture_default_str();
  cmd->add_option("--f5-pooled-head", f5.pooled_head,
                  "F5 pooled head: this many learned readings of the two pooled vectors, dimension by dimension, "
                  "beside the pair scalars (0: none; needs the pooled input)")
      ->capture_default_str();
  cmd->add_option("--f5-conv", f5.conv, "F5 1-D convolution along each text (true/false)")->capture_default_str();
  cmd->add_flag("--f5-fold-case", f5.fold_case,
                "F5 reads token identities ignoring case (exact matches, idf, lexicon), through the case folds "
                "of the encoder's vocabulary, which the file keeps");
  cmd->add_flag("--f5-whole-words", f5.whole_words,
                "F5 reads the lexicon in whole words only: a word of it inside a longer word (\"under\" of "
                "\"undermining\", \"not\" of \"notable\") is none, an inflection after it (\"colder\") aside");
  cmd->add_option("--f5-inputs", f5.inputs, "F5 input groups: map,identity,pooled,lexicon")->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--f5-lexicon-words", a->f5_lexicon_words,
                  "F5 lexicon: number words and negators beside the antonyms (english) or antonyms only (none)")
      ->check(CLI::IsMember({"english", "none"}))
      ->capture_default_str();
  cmd->add_option("--f5-antonyms", a->f5_antonyms,
                  "F5 lexicon antonyms: WordNet's direct antonyms (wordnet), or with opposites of spatial, time and "
                  "permission words WordNet lacks (wordnet+relations: under/on, behind/front, before/after, ...)")
      ->check(CLI::IsMember({"wordnet", "wordnet+relations"}))
      ->capture_default_str();
  cmd->add_option("--steps-per-epoch", f5o.steps_per_epoch, "F5 optimizer steps per epoch")->capture_default_str();
  cmd->add_option("--sample-seed", a->sample_seed,
                  "F5: seed of the capped samples (--max-pairs-per-source, --max-dev-pairs-per-source, --max-train; "
                  "default: --seed), so seeds can share one sample");
  cmd->add_option("--pairs-per-source", f5o.pairs_per_source, "F5 pairs drawn per source per step")
      ->capture_default_str();
  cmd->add_option("--triples-per-step", f5o.triples_per_step, "F5 near-miss triples per step (balanced by type)")
      ->capture_default_str();
  cmd->add_option("--lr-schedule", a->lr_schedule,
                  "F5 learning rate: constant, or cosine (decays from --lr to 0 over all epochs' steps)")
      ->check(CLI::IsMember({"constant", "cosine"}))
      ->capture_default_str();
  cmd->add_option("--triple-weight", f5o.triple_weight, "F5 weight of the triple losses")->capture_default_str();
  cmd->add_option("--pair-source-weight", a->source_weights,
                  "F5 weight of one pair source in the pair loss, NAME=WEIGHT (repeatable; others weigh 1)");
  cmd->add_option("--distill-from", a->distill_from,
                  "F5 teacher verifier file (repeatable): training targets mix the label with the teachers' mean "
                  "probability (a seed ensemble distilled into one network)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--distill-weight", a->distill_weight,
                  "F5 share of the teachers' probability in each target, (0, 1] (default 0.5; needs --distill-from)");
  cmd->add_option("--pooled-dropout", f5o.pooled_dropout, "F5 share of training pairs without the pooled cosine")
      ->capture_default_str();
  cmd->add_option("--pooled-term", a->pooled_term,
                  "F5 calibration: a pooled-cosine term beside the network's logit, fitted on dev: none | penalty "
                  "(only lowers P; the network's threshold) | refit (share by dev AUC, Platt and threshold refitted) | "
                  "gated (a linear term that may raise P, gated by the network's own verdict)")
      ->capture_default_str();
  cmd->add_option("--threshold-rule", a->threshold_rule,
                  std::string("F5 calibration's ") + kThresholdRuleHelp + " (default: plateau)");
  add_common_flags(cmd, a->common);
  cmd->callback([a, cmd] {
    a->given_f3_f4_flags = given_flags(cmd, kF3F4OnlyFlags);
    a->given_f5_flags = given_flags(cmd, kF5OnlyFlags);
    run_train_verifier(*a);
  });
}

struct EnsembleArgs {
  CommonFlags common;
  std::vector<std::string> members;
  std::string out, provenance;
};

void run_ensemble_verifier(EnsembleArgs& a) {
  apply_common_flags(a.common);
  verify::EnsembleVerifier::write(a.out, a.members, a.provenance);
  const auto e = verify::EnsembleVerifier::load(a.out);  // proves the file reads back
  log("ensemble-verifier: ", e->size(), " members -> ", a.out);
  if (a.common.json)
    print_json({{"command", invocation()}, {"out", a.out}, {"members", a.members}, {"spec", e->spec()},
                {"trained", e->is_trained()}});
}

void setup_ensemble_verifier(CLI::App& app) {
  auto a = std::make_shared<EnsembleArgs>();
  auto* cmd = app.add_subcommand("ensemble-verifier",
                                 "Write an ensemble file: the logit mean of trained F3/F4 weight files");
  cmd->add_option("--member", a->members, "A trained F3/F4 weights file (repeat; stored relative to --out)")
      ->required();
  cmd->add_option("--out", a->out, "Ensemble file to write (JSON, atomic); use it as ensemble:PATH")->required();
  cmd->add_option("--provenance", a->provenance, "How the members were chosen (kept in the file)");
  add_common_flags(cmd, a->common);
  cmd->callback([a] { run_ensemble_verifier(*a); });
}

VERITY_REGISTER_COMMAND("train-verifier", setup_train_verifier);
VERITY_REGISTER_COMMAND("ensemble-verifier", setup_ensemble_verifier);
}  // namespace
}  // namespace verity::cli
