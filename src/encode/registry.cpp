#include "encode/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "encode/bert.hpp"
#include "encode/glove.hpp"
#include "encode/use_lite.hpp"

namespace verity::encode {
namespace fs = std::filesystem;
namespace {

std::string kinds_list() {
  std::string s;
  for (const auto& k : encoder_kinds()) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

// Reads the architecture a model directory declares.
std::string detect_kind(const std::string& dir) {
  if (verity::file_exists(dir + "/verity.json")) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_file(dir + "/verity.json"));
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(cat(dir, "/verity.json: invalid JSON: ", e.what()));
    }
    VERITY_CHECK(j.contains("architecture") && j["architecture"].is_string(), FormatError, dir,
                 "/verity.json: missing string field 'architecture'");
    return j["architecture"].get<std::string>();
  }
  if (verity::file_exists(dir + "/config.json")) return "bert";
  throw ConfigError(cat(dir, ": not a model directory (no verity.json or config.json)"));
}

std::unique_ptr<Encoder> load_kind(const std::string& kind, const std::string& dir) {
  VERITY_CHECK(verity::is_directory(dir), ConfigError, "model directory ", dir, " does not exist",
               (kind == "use-lite" || kind == "glove")
                   ? " (run scripts/setup_models.sh to convert the pretrained weights)"
                   : "");
  if (kind == "use-lite") return load_use_lite(dir);
  if (kind == "glove") return load_glove(dir);
  if (kind == "bert") return load_bert(dir);
  throw ConfigError(cat("unknown encoder kind '", kind, "' (valid: ", kinds_list(), ")"));
}
}  // namespace

std::vector<EncoderKind> encoder_kinds() {
  return {{"use-lite", "Universal Sentence Encoder lite (pretrained default, 512-d)"},
          {"glove", "GloVe 6B 100-d static word vectors, mean-pooled"},
          {"bert", "BERT-family Hugging Face checkpoint or fine-tuned verity model (bert:DIR)"}};
}

std::string model_root() {
  if (const char* env = std::getenv("VERITY_MODEL_DIR"); env && *env) return env;
  return VERITY_DEFAULT_MODEL_DIR;
}

std::unique_ptr<Encoder> make_encoder(const std::string& spec) {
  VERITY_CHECK(!spec.empty(), ConfigError, "empty encoder spec (valid kinds: ", kinds_list(), ")");
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    std::string kind = spec.substr(0, colon);
    for (const auto& k : encoder_kinds())
      if (k.name == kind) return load_kind(kind, spec.substr(colon + 1));
  }
  if (spec == "use-lite" || spec == "glove") return load_kind(spec, model_root() + "/" + spec);
  if (verity::is_directory(spec)) return load_kind(detect_kind(spec), spec);
  throw ConfigError(cat("unknown encoder '", spec, "': not a model name (use-lite, glove), ",
                        "not kind:DIR (", kinds_list(), ") and not a directory"));
}

std::string encoder_identity(const Encoder& encoder) {
  const std::string spec = encoder.spec();
  const auto colon = spec.find(':');
  if (colon == std::string::npos || !verity::is_directory(spec.substr(colon + 1))) return spec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(spec.substr(colon + 1)))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  uint32_t crc = 0;
  for (const auto& f : files) {
    const auto name = f.filename().string();
    crc = crc32c(name.data(), name.size(), crc);
    MappedFile mapped(f.string());
    crc = crc32c(mapped.bytes().data(), mapped.size(), crc);
  }
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", crc);
  return spec.substr(0, colon) + ":" + hex;
}

std::string portable_spec(const Encoder& encoder) {
  const std::string spec = encoder.spec();
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return spec;
  const std::string kind = spec.substr(0, colon);
  if (kind != "use-lite" && kind != "glove") return spec;
  std::error_code ec_dir, ec_root;
  const auto dir = fs::weakly_canonical(spec.substr(colon + 1), ec_dir);
  const auto named = fs::weakly_canonical(fs::path(model_root()) / kind, ec_root);
  return !ec_dir && !ec_root && dir == named ? kind : spec;
}

void convert_pretrained(const std::string& kind, const std::string& from, const std::string& out) {
  if (kind == "use-lite") return convert_use_lite(from, out);
  if (kind == "glove") return convert_glove(from, out);
  throw ConfigError(cat("cannot convert '", kind, "' (valid: use-lite, glove)"));
}

}  // namespace verity::encode
