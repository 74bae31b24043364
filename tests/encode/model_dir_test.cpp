#include "encode/model_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/io.hpp"
#include "encode/safetensors.hpp"

using namespace verity;
using namespace verity::encode;

namespace {

std::string temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("verity_h4_md_" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
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

ModelConfig sample() {
  ModelConfig c;
  c.name = "tiny";
  c.architecture = "bert";
  c.pooling = "mean";
  c.dim = 32;
  c.max_length = 64;
  c.extra = {{"num_layers", "2"}, {"layer_norm_eps", "1e-12"}, {"vocab", "vocab.txt"}};
  return c;
}

}  // namespace

TEST(ModelDir, RoundTrip) {
  auto dir = temp_dir("roundtrip");
  write_model_config(dir, sample());
  EXPECT_TRUE(is_model_dir(dir));
  ModelConfig c = read_model_config(dir);
  EXPECT_EQ(c.name, "tiny");
  EXPECT_EQ(c.architecture, "bert");
  EXPECT_EQ(c.pooling, "mean");
  EXPECT_EQ(c.dim, 32u);
  EXPECT_EQ(c.max_length, 64u);
  EXPECT_EQ(c.format_version, kModelFormatVersion);
  EXPECT_EQ(c.get_int("num_layers"), 2);
  EXPECT_DOUBLE_EQ(c.get_double("layer_norm_eps"), 1e-12);
  EXPECT_EQ(c.get_string("vocab"), "vocab.txt");
  EXPECT_EQ(c.get_int("missing", 7), 7);
  EXPECT_NE(error_of([&] { c.get_int("vocab"); }).find("extra.vocab"), std::string::npos);
  EXPECT_NE(error_of([&] { c.get_string("nope"); }).find("verity.json"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ModelDir, ReadsNumericExtras) {
  auto dir = temp_dir("numeric");
  write_file_atomic(dir + "/verity.json",
                    R"({"format":"verity-model","format_version":1,"name":"n","architecture":"glove",
                        "pooling":"mean","dim":100,"max_length":0,"extra":{"k":3,"f":0.5,"b":true}})");
  ModelConfig c = read_model_config(dir);
  EXPECT_EQ(c.get_int("k"), 3);
  EXPECT_DOUBLE_EQ(c.get_double("f"), 0.5);
  EXPECT_EQ(c.get_string("b"), "true");
  std::filesystem::remove_all(dir);
}

TEST(ModelDir, ClearErrors) {
  auto dir = temp_dir("errors");
  EXPECT_NE(error_of([&] { read_model_config(dir); }).find("no verity.json"), std::string::npos);
  const std::string base =
      R"("format":"verity-model","name":"n","architecture":"bert","pooling":"cls","max_length":8)";
  struct Case {
    std::string json, expect;
  };
  std::vector<Case> cases = {
      {"{", "invalid JSON"},
      {"{" + base + R"(,"format_version":2,"dim":4})", "unsupported format_version 2"},
      {"{" + base + R"(,"format_version":"1","dim":4})", "'format_version' must be an integer"},
      {"{" + base + R"(,"format_version":1})", "missing field 'dim'"},
      {"{" + base + R"(,"format_version":1,"dim":-4})", "'dim' must be a non-negative integer"},
      {"{" + base + R"(,"format_version":1,"dim":"4"})", "'dim' must be a non-negative integer"},
      {"{" + base + R"(,"format_version":1,"dim":4,"extra":[]})", "'extra' must be an object"},
      {R"({"format":"other","format_version":1})", "expected 'verity-model'"},
  };
  for (const auto& c : cases) {
    write_file_atomic(dir + "/verity.json", c.json);
    std::string msg = error_of([&] { read_model_config(dir); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.json << " -> " << msg;
    EXPECT_NE(msg.find("verity.json"), std::string::npos) << msg;
  }
  std::filesystem::remove_all(dir);
}

TEST(ModelDir, CheckTensorShape) {
  auto dir = temp_dir("shapes");
  std::vector<float> w(6, 0.f);
  write_safetensors(dir + "/model.safetensors", {f32_tensor("emb", {2, 3}, w)});
  SafetensorsFile f(dir + "/model.safetensors");
  EXPECT_NO_THROW(check_tensor_shape(f, "emb", {2, 3}, "vocab x dim"));
  std::string msg = error_of([&] { check_tensor_shape(f, "emb", {2, 4}, "vocab x dim=4"); });
  EXPECT_NE(msg.find("[2,3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2,4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'emb'"), std::string::npos) << msg;
  EXPECT_THROW(check_tensor_shape(f, "other", {1}, "x"), FormatError);
  std::filesystem::remove_all(dir);
}
