#include "verify/ensemble.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/io.hpp"

namespace verity::verify {
namespace {

namespace fs = std::filesystem;
constexpr const char* kFormat = "verity-verifier-ensemble";
constexpr int kVersion = 1;

std::string crc_hex(const std::string& bytes) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", crc32c(bytes.data(), bytes.size()));
  return buf;
}

}  // namespace

bool is_ensemble_file(const std::string& path) {
  if (!file_exists(path) || is_directory(path)) return false;
  std::ifstream in(path, std::ios::binary);  // the first bytes decide; weights files are large
  char c = 0;
  while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  return in && c == '{';
}

std::unique_ptr<EnsembleVerifier> EnsembleVerifier::load(const std::string& path) {
  VERITY_CHECK(file_exists(path), ConfigError, "verifier ensemble ", path, " does not exist");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw FormatError(cat(path, ": not valid JSON (", e.what(), ")"));
  }
  auto field = [&](const nlohmann::json& obj, const std::string& key, const std::string& where) {
    VERITY_CHECK(obj.is_object() && obj.contains(key), FormatError, path, ": missing field '", where, key, "'");
    return obj.at(key);
  };
  VERITY_CHECK(field(j, "format", "") == kFormat, FormatError, path, ": field 'format' must be \"", kFormat, "\"");
  VERITY_CHECK(field(j, "version", "") == kVersion, FormatError, path, ": field 'version' is ",
               j.at("version").dump(), "; this build reads version ", kVersion);
  VERITY_CHECK(field(j, "combine", "") == "logit_mean", FormatError, path,
               ": field 'combine' must be \"logit_mean\"");
  const auto& members = field(j, "members", "");
  VERITY_CHECK(members.is_array() && !members.empty(), FormatError, path,
               ": field 'members' must be a non-empty array");
  std::unique_ptr<EnsembleVerifier> e(new EnsembleVerifier());
  e->path_ = path;
  e->provenance_ = j.value("provenance", "");
  const fs::path dir = fs::path(path).parent_path();
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string where = "members[" + std::to_string(i) + "].";
    const auto& m = members[i];
    const auto file = field(m, "file", where), bytes = field(m, "bytes", where), crc = field(m, "crc32c", where);
    VERITY_CHECK(file.is_string() && bytes.is_number_unsigned() && crc.is_string(), FormatError, path,
                 ": ", where, "file/bytes/crc32c must be a string, a count and a hex string");
    const std::string member = (dir / file.get<std::string>()).lexically_normal().string();
    bool present = false;
    try {
      present = file_exists(member);
    } catch (const Error& e) {
      throw FormatError(cat(path, ": ", where, "file: ", e.what()));
    }
    VERITY_CHECK(present, FormatError, path, ": ", where, "file ", member, " does not exist");
    const std::string content = read_file(member);
    VERITY_CHECK(content.size() == bytes.get<uint64_t>(), FormatError, path, ": ", where, "bytes is ",
                 bytes.get<uint64_t>(), " but ", member, " has ", content.size(), " bytes");
    VERITY_CHECK(crc_hex(content) == crc.get<std::string>(), FormatError, path, ": ", where,
                 "crc32c does not match ", member, " (the member was replaced or damaged)");
    e->members_.push_back(LearnedVerifier::load(member));
  }
  return e;
}

void EnsembleVerifier::write(const std::string& path, const std::vector<std::string>& member_files,
                             const std::string& provenance) {
  VERITY_CHECK(!member_files.empty(), ConfigError, "verifier ensemble ", path, ": no member files");
  const fs::path dir = fs::absolute(fs::path(path)).parent_path();
  nlohmann::json members = nlohmann::json::array();
  for (const auto& f : member_files) {
    LearnedVerifier::load(f);  // refuses anything that is not a loadable F3/F4 file
    const std::string content = read_file(f);
    members.push_back({{"file", fs::absolute(f).lexically_normal().lexically_relative(dir).string()},
                       {"bytes", content.size()},
                       {"crc32c", crc_hex(content)}});
  }
  nlohmann::json j = {{"format", kFormat},      {"version", kVersion}, {"combine", "logit_mean"},
                      {"members", members},     {"provenance", provenance}};
  if (!dir.empty()) make_directories(dir.string());
  write_file_atomic(path, j.dump(2) + "\n");
}

float EnsembleVerifier::score(const SimilarityMap& map) const {
  std::span<const SimilarityMap> one(&map, 1);
  return score_batch(one).front();
}

std::vector<float> EnsembleVerifier::score_batch(std::span<const SimilarityMap> maps) const {
  std::vector<float> sum(maps.size(), 0.0f);
  for (const auto& m : members_) {
    // Logits, not probabilities: averaging them keeps one confident member from
    // being flattened, and near-misses often score below float's 1e-7 resolution.
    const auto l = m->logit_batch(maps);
    for (size_t i = 0; i < l.size(); ++i) sum[i] += l[i];
  }
  std::vector<float> out(maps.size());
  for (size_t i = 0; i < maps.size(); ++i) {
    // An empty map scores 0 for every verifier (verify/verifier.hpp), ensembles included.
    const bool empty = maps[i].rows() == 0 || maps[i].cols() == 0;
    out[i] = empty ? 0.0f : 1.0f / (1.0f + std::exp(-sum[i] / static_cast<float>(members_.size())));
  }
  return out;
}

std::string EnsembleVerifier::spec() const { return "ensemble:" + path_; }

bool EnsembleVerifier::is_trained() const {
  return std::all_of(members_.begin(), members_.end(), [](const auto& m) { return m->is_trained(); });
}

}  // namespace verity::verify
