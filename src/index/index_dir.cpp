#include "index/index_dir.hpp"

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/atomic_dir.hpp"
#include "core/error.hpp"
#include "core/io.hpp"

namespace verity::index {
namespace fs = std::filesystem;
namespace {
constexpr const char* kFormat = "verity-index";
constexpr int kVersion = 1;
}  // namespace

IndexManifest read_index_manifest(const std::string& dir) {
  std::string path = dir + "/manifest.json";
  VERITY_CHECK(verity::is_directory(dir), Error, dir, ": not an index directory (build one with 'verity index')");
  VERITY_CHECK(verity::file_exists(path), FormatError, path, ": missing; ", dir, " is not a verity index");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": invalid JSON: ", e.what()));
  }
  auto field = [&](const char* name) -> const nlohmann::json& {
    VERITY_CHECK(j.contains(name), FormatError, path, ": missing field '", name, "'");
    return j.at(name);
  };
  IndexManifest m;
  try {
    VERITY_CHECK(field("format") == kFormat, FormatError, path, ": field 'format' is not '", kFormat, "'");
    m.version = field("version").get<int>();
    VERITY_CHECK(m.version >= 1 && m.version <= kVersion, FormatError, path,
                 ": unsupported index version ", m.version, " (this build reads 1..", kVersion, ")");
    const auto& corpus = field("corpus");
    m.corpus_path = corpus.at("path").get<std::string>();
    m.corpus_hash = std::stoull(corpus.at("hash").get<std::string>(), nullptr, 16);
    m.docs = corpus.at("docs").get<uint64_t>();
    m.doc_fields = corpus.at("fields").get<std::string>();
    m.parts = field("parts").get<std::map<std::string, std::string>>();
    if (j.contains("specs")) m.specs = j.at("specs").get<std::map<std::string, std::string>>();
    if (j.contains("created_by")) m.created_by = j.at("created_by").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": bad field: ", e.what()));
  } catch (const std::logic_error& e) {  // stoull
    throw FormatError(cat(path, ": field 'corpus.hash' is not a hex number"));
  }
  return m;
}

IndexDirBuilder::IndexDirBuilder(std::string final_dir) : final_dir_(std::move(final_dir)) {
  while (!final_dir_.empty() && final_dir_.back() == '/') final_dir_.pop_back();
  VERITY_CHECK(!final_dir_.empty(), ConfigError, "empty index directory name");
  if (verity::file_exists(final_dir_)) {
    VERITY_CHECK(verity::is_directory(final_dir_) && verity::file_exists(final_dir_ + "/manifest.json"), Error,
                 final_dir_, " exists and is not a verity index; refusing to replace it");
  }
  remove_stale_siblings(final_dir_);
  tmp_dir_ = final_dir_ + ".tmp." + std::to_string(::getpid());
  fs::remove_all(tmp_dir_);
  make_directories(tmp_dir_);
}

IndexDirBuilder::~IndexDirBuilder() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(tmp_dir_, ec);
  }
}

std::string IndexDirBuilder::part_path(const std::string& file_name) const {
  return tmp_dir_ + "/" + file_name;
}

void IndexDirBuilder::commit(const IndexManifest& m) {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", (unsigned long long)m.corpus_hash);
  nlohmann::json j = {{"format", kFormat},
                      {"version", kVersion},
                      {"corpus",
                       {{"path", m.corpus_path}, {"hash", hash}, {"docs", m.docs}, {"fields", m.doc_fields}}},
                      {"parts", m.parts},
                      {"specs", m.specs},
                      {"created_by", m.created_by}};
  write_file_atomic(part_path("manifest.json"), j.dump(2) + "\n");
  replace_directory(tmp_dir_, final_dir_);  // old index or new one, never neither
  committed_ = true;
}

std::string index_part_path(const std::string& dir, const IndexManifest& m, const std::string& part) {
  auto it = m.parts.find(part);
  VERITY_CHECK(it != m.parts.end(), ConfigError, dir, ": the index has no '", part,
               "' part (rebuild it with 'verity index --", part, "')");
  return dir + "/" + it->second;
}

}  // namespace verity::index
