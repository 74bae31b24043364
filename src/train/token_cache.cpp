#include "train/token_cache.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <unordered_set>
#include <vector>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/section_file.hpp"

namespace verity::train {
namespace {

constexpr std::string_view kMagic = "VTKC";
constexpr uint32_t kVersion = 1;

// Calls fn(text, rows) for every entry of the cache at `path` (which must exist).
template <typename Fn>
size_t for_each_cached(const std::string& path, const std::string& encoder_spec, size_t dim, Fn fn) {
  SectionFile f(path, kMagic, kVersion);
  std::string stored;
  size_t cached_dim = 0, count = 0;
  try {  // a CONF that is not an object, or a field of the wrong type, is a format error too
    const auto b = f.section("CONF");
    const auto conf = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(b.data()), b.size()));
    VERITY_CHECK(conf.is_object(), FormatError, path, ": section 'CONF' is not a JSON object");
    stored = conf.value("encoder", std::string());
    cached_dim = conf.value("dim", size_t(0));
    count = conf.value("texts", size_t(0));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": section 'CONF': ", e.what()));
  }
  VERITY_CHECK(stored == encoder_spec, ConfigError, path, ": token cache of encoder '", stored,
               "', this run encodes with '", encoder_spec, "' (use another cache file)");
  VERITY_CHECK(dim == 0 || cached_dim == dim, ConfigError, path, ": token cache dim ", cached_dim,
               " differs from ", dim);
  auto texts = f.reader("TEXT");
  const auto ntok = f.array<uint32_t>("NTOK");
  const auto rows = f.array<float>("ROWS");
  VERITY_CHECK(ntok.size() == count, FormatError, path, ": NTOK holds ", ntok.size(), " counts for ", count,
               " texts");
  size_t offset = 0;
  for (size_t i = 0; i < count; ++i) {
    const auto text = texts.read_string();
    const size_t n = size_t(ntok[i]) * cached_dim;
    VERITY_CHECK(offset + n <= rows.size(), FormatError, path, ": ROWS ends before text ", i);
    fn(text, rows.subspan(offset, n), cached_dim);
    offset += n;
  }
  VERITY_CHECK(offset == rows.size(), FormatError, path, ": ROWS holds ", rows.size() - offset,
               " values after the last text");
  return count;
}

}  // namespace

size_t load_token_cache(TextBank& bank, const std::string& path, const std::string& encoder_spec) {
  if (!verity::file_exists(path)) return 0;
  std::unordered_map<std::string, uint32_t> wanted;
  for (uint32_t id = 0; id < bank.size(); ++id)
    if (!bank.encoded(id)) wanted.emplace(bank.text(id), id);
  size_t hits = 0;
  for_each_cached(path, encoder_spec, bank.dim(), [&](const std::string& text, std::span<const float> rows, size_t dim) {
    auto it = wanted.find(text);
    if (it == wanted.end()) return;
    bank.set_tokens(it->second, std::vector<float>(rows.begin(), rows.end()), dim);
    ++hits;
  });
  return hits;
}

size_t save_token_cache(const TextBank& bank, const std::string& path, const std::string& encoder_spec) {
  ByteWriter texts;
  std::vector<uint32_t> ntok;
  std::vector<float> rows;
  std::unordered_set<std::string> written;
  size_t dim = bank.dim();
  auto add = [&](const std::string& text, std::span<const float> r, size_t d) {
    if (!written.insert(text).second) return;
    texts.write_string(text);
    ntok.push_back(uint32_t(r.size() / d));
    rows.insert(rows.end(), r.begin(), r.end());
  };
  for (uint32_t id = 0; id < bank.size(); ++id)
    if (bank.encoded(id)) add(bank.text(id), bank.tokens(id), dim);
  if (verity::file_exists(path))
    for_each_cached(path, encoder_spec, dim, [&](const std::string& text, std::span<const float> r, size_t d) {
      dim = d;
      add(text, r, d);
    });
  const nlohmann::json conf = {{"encoder", encoder_spec}, {"dim", dim}, {"texts", ntok.size()}};
  const auto conf_text = conf.dump();
  SectionWriter out(path, kMagic, kVersion);
  out.add("CONF", conf_text.data(), conf_text.size());
  out.add("TEXT", texts);
  out.add_array<uint32_t>("NTOK", ntok);
  out.add_array<float>("ROWS", rows);
  out.commit();
  return ntok.size();
}

}  // namespace verity::train
