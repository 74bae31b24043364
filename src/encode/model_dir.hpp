#pragma once
// verity's own model format: a directory holding
//   verity.json        this config (format "verity-model", format_version 1)
//   model.safetensors  the weights (see safetensors.hpp)
//   tokenizer files    named by the architecture (e.g. vocab.txt)
// verity.json layout:
//   {"format": "verity-model", "format_version": 1, "name": "...",
//    "architecture": "bert" | "use-lite" | "glove", "pooling": "cls" | "mean" | ...,
//    "dim": 384, "max_length": 256, "extra": {"key": "value", ...}}
// "extra" holds architecture-specific settings; they are written as strings and
// read from strings, numbers or booleans.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace verity::encode {

class SafetensorsFile;

inline constexpr int kModelFormatVersion = 1;
inline constexpr const char* kModelConfigFile = "verity.json";
inline constexpr const char* kModelWeightsFile = "model.safetensors";

struct ModelConfig {
  int format_version = kModelFormatVersion;
  std::string name;
  std::string architecture;  // "bert" | "use-lite" | "glove"
  std::string pooling;       // "cls" | "mean" | "max" | model-specific
  size_t dim = 0;
  size_t max_length = 0;
  std::map<std::string, std::string> extra;
  std::string source_path;  // the verity.json this was read from ("" if built in code)

  // Typed access to extra fields; ConfigError naming the file and field when
  // missing or not convertible.
  bool has(const std::string& key) const { return extra.count(key) > 0; }
  const std::string& get_string(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_double(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_double(const std::string& key, double fallback) const;
};

// Reads <dir>/verity.json. Errors (ConfigError/FormatError) name the file and
// the field: missing file, invalid JSON, wrong "format", unsupported
// format_version, missing field, wrong type.
ModelConfig read_model_config(const std::string& dir);
// Writes <dir>/verity.json atomically (creates dir if needed).
void write_model_config(const std::string& dir, const ModelConfig& config);
// True when dir contains a verity.json.
bool is_model_dir(const std::string& dir);

// Writes a model directory atomically: files go into a temporary sibling
// ("<dir>.tmp.<pid>"), and commit() renames it to dir, replacing an existing
// verity model directory there (anything else at dir is an error, checked up
// front). Destroying an uncommitted writer removes the temporary directory.
class ModelDirWriter {
 public:
  explicit ModelDirWriter(const std::string& dir);
  ~ModelDirWriter();
  ModelDirWriter(const ModelDirWriter&) = delete;
  ModelDirWriter& operator=(const ModelDirWriter&) = delete;
  // Path of a file inside the staging directory.
  std::string file(std::string_view name) const;
  const std::string& staging_dir() const { return staging_; }
  void commit();

 private:
  std::string target_, staging_;
  bool committed_ = false;
};

// For model loaders: throws FormatError naming the weights file, the tensor
// and what the config expects when the tensor is missing or its shape differs.
void check_tensor_shape(const SafetensorsFile& weights, std::string_view tensor,
                        const std::vector<int64_t>& expected, std::string_view why);

}  // namespace verity::encode
