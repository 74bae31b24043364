#include "encode/model_dir.hpp"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/atomic_dir.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "encode/safetensors.hpp"

namespace verity::encode {
namespace {

constexpr const char* kFormatName = "verity-model";

std::string config_path(const std::string& dir) {
  return (std::filesystem::path(dir) / kModelConfigFile).string();
}

std::string where(const ModelConfig& c) { return c.source_path.empty() ? "model config" : c.source_path; }

const nlohmann::json& required(const nlohmann::json& j, const char* field, const std::string& path) {
  auto it = j.find(field);
  VERITY_CHECK(it != j.end(), ConfigError, path, ": missing field '", field, "'");
  return *it;
}

std::string required_string(const nlohmann::json& j, const char* field, const std::string& path) {
  const auto& v = required(j, field, path);
  VERITY_CHECK(v.is_string(), ConfigError, path, ": field '", field, "' must be a string, got ",
               v.dump());
  return v.get<std::string>();
}

uint64_t required_unsigned(const nlohmann::json& j, const char* field, const std::string& path) {
  const auto& v = required(j, field, path);
  VERITY_CHECK(v.is_number_unsigned(), ConfigError, path, ": field '", field,
               "' must be a non-negative integer, got ", v.dump());
  return v.get<uint64_t>();
}

}  // namespace

const std::string& ModelConfig::get_string(const std::string& key) const {
  auto it = extra.find(key);
  VERITY_CHECK(it != extra.end(), ConfigError, where(*this), ": missing field 'extra.", key, "'");
  return it->second;
}

int64_t ModelConfig::get_int(const std::string& key) const {
  const std::string& s = get_string(key);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  VERITY_CHECK(ec == std::errc() && end == s.data() + s.size(), ConfigError, where(*this),
               ": field 'extra.", key, "' must be an integer, got '", s, "'");
  return v;
}

double ModelConfig::get_double(const std::string& key) const {
  const std::string& s = get_string(key);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  VERITY_CHECK(ec == std::errc() && end == s.data() + s.size(), ConfigError, where(*this),
               ": field 'extra.", key, "' must be a number, got '", s, "'");
  return v;
}

int64_t ModelConfig::get_int(const std::string& key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}
double ModelConfig::get_double(const std::string& key, double fallback) const {
  return has(key) ? get_double(key) : fallback;
}

bool is_model_dir(const std::string& dir) { return file_exists(config_path(dir)); }

ModelConfig read_model_config(const std::string& dir) {
  const std::string path = config_path(dir);
  VERITY_CHECK(file_exists(path), ConfigError, dir, ": not a verity model directory (no ",
               kModelConfigFile, ")");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": invalid JSON: ", e.what()));
  }
  VERITY_CHECK(j.is_object(), FormatError, path, ": must be a JSON object");
  const std::string format = required_string(j, "format", path);
  VERITY_CHECK(format == kFormatName, FormatError, path, ": field 'format' is '", format,
               "', expected '", kFormatName, "'");
  const auto& version = required(j, "format_version", path);
  VERITY_CHECK(version.is_number_integer(), ConfigError, path,
               ": field 'format_version' must be an integer, got ", version.dump());
  VERITY_CHECK(version.get<int64_t>() >= 1 && version.get<int64_t>() <= kModelFormatVersion,
               FormatError, path, ": unsupported format_version ", version.dump(),
               " (this build reads 1..", kModelFormatVersion, ")");
  ModelConfig c;
  c.source_path = path;
  c.format_version = int(version.get<int64_t>());
  c.name = required_string(j, "name", path);
  c.architecture = required_string(j, "architecture", path);
  c.pooling = required_string(j, "pooling", path);
  c.dim = required_unsigned(j, "dim", path);
  c.max_length = required_unsigned(j, "max_length", path);
  VERITY_CHECK(c.dim > 0, ConfigError, path, ": field 'dim' must be positive");
  if (auto it = j.find("extra"); it != j.end()) {
    VERITY_CHECK(it->is_object(), ConfigError, path, ": field 'extra' must be an object");
    for (auto e = it->begin(); e != it->end(); ++e) {
      const auto& v = e.value();
      VERITY_CHECK(v.is_string() || v.is_number() || v.is_boolean(), ConfigError, path,
                   ": field 'extra.", e.key(), "' must be a string, number or boolean");
      c.extra[e.key()] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  return c;
}

void write_model_config(const std::string& dir, const ModelConfig& config) {
  VERITY_CHECK(!config.architecture.empty() && config.dim > 0, ConfigError,
               "write_model_config(", dir, "): architecture and dim are required");
  nlohmann::json j = {{"format", kFormatName},
                      {"format_version", config.format_version},
                      {"name", config.name},
                      {"architecture", config.architecture},
                      {"pooling", config.pooling},
                      {"dim", config.dim},
                      {"max_length", config.max_length}};
  nlohmann::json extra = nlohmann::json::object();
  for (const auto& [k, v] : config.extra) extra[k] = v;
  j["extra"] = extra;
  make_directories(dir);
  write_file_atomic(config_path(dir), j.dump(2) + "\n");
}

ModelDirWriter::ModelDirWriter(const std::string& dir) {
  std::filesystem::path target = std::filesystem::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  target_ = target.string();
  VERITY_CHECK(!verity::file_exists(target) || is_model_dir(target_) ||
                   verity::is_empty_directory(target),
               ConfigError, target_, " exists and is not a verity model directory; not replacing it");
  remove_stale_siblings(target_);
  staging_ = target_ + ".tmp." + std::to_string(::getpid());
  std::filesystem::remove_all(staging_);
  std::filesystem::create_directories(staging_);
}

ModelDirWriter::~ModelDirWriter() {
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove_all(staging_, ec);
  }
}

std::string ModelDirWriter::file(std::string_view name) const {
  return (std::filesystem::path(staging_) / name).string();
}

void ModelDirWriter::commit() {
  VERITY_CHECK(file_exists(file(kModelConfigFile)), Error, staging_, ": no ", kModelConfigFile,
               " written; refusing to commit an incomplete model directory");
  replace_directory(staging_, target_);  // old model or new one, never neither
  committed_ = true;
}

void check_tensor_shape(const SafetensorsFile& weights, std::string_view tensor,
                        const std::vector<int64_t>& expected, std::string_view why) {
  auto text = [](const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(s[i]);
    }
    return out + "]";
  };
  VERITY_CHECK(weights.has(tensor), FormatError, weights.path(), ": missing tensor '", tensor,
               "' (", why, ")");
  const auto& shape = weights.tensor(tensor).shape;
  VERITY_CHECK(shape == expected, FormatError, weights.path(), ": tensor '", tensor,
               "' has shape ", text(shape), " but the config (", why, ") expects ", text(expected));
}

}  // namespace verity::encode
