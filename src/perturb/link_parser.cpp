#include "perturb/link_parser.hpp"

#include <link-grammar/link-includes.h>

#include <mutex>

#include "core/error.hpp"

namespace verity::perturb {
namespace {

constexpr double kMaxParseSeconds = 2.0;  // long sentences fall back to "no parse" (skip)
constexpr int kLinkageLimit = 100;

void silence_link_grammar(lg_errinfo*, void*) {}  // locale/info chatter; failures are checked

struct LinkGrammar {
  Dictionary dict = nullptr;
  Parse_Options opts = nullptr;
  std::mutex mutex;
  LinkGrammar() {
    lg_error_set_handler(silence_link_grammar, nullptr);
    dict = dictionary_create_lang("en");
    VERITY_CHECK(dict != nullptr, Error,
                 "link-grammar: cannot open the \"en\" dictionary (install link-grammar-dictionaries-en)");
    opts = parse_options_create();
    parse_options_set_verbosity(opts, 0);
    parse_options_set_max_parse_time(opts, static_cast<int>(kMaxParseSeconds));
    parse_options_set_linkage_limit(opts, kLinkageLimit);
    parse_options_set_min_null_count(opts, 0);
    parse_options_set_max_null_count(opts, 0);  // partial parses are never used
  }
  ~LinkGrammar() {
    parse_options_delete(opts);
    dictionary_delete(dict);
  }
};

LinkGrammar& link_grammar() {
  static LinkGrammar lg;
  return lg;
}

ParsedWord split_word(const char* raw, int begin, int end) {
  ParsedWord w;
  std::string s = raw ? raw : "";
  w.wall = s == "LEFT-WALL" || s == "RIGHT-WALL";
  // "dog.n" -> word "dog", tag "n"; a bare "." or "U.S." has no lowercase-tag suffix.
  auto dot = s.rfind('.');
  if (dot != std::string::npos && dot > 0 && dot + 1 < s.size()) {
    std::string tag = s.substr(dot + 1);
    bool tag_like = true;
    for (char c : tag)
      if (!((c >= 'a' && c <= 'z') || c == '-' || c == '#' || c == '!' || c == '[' || c == ']'))
        tag_like = false;
    if (tag_like) {
      w.tag = tag;
      s.resize(dot);
    }
  }
  w.word = s;
  w.begin = begin < 0 ? 0 : static_cast<size_t>(begin);
  w.end = end < 0 ? w.begin : static_cast<size_t>(end);
  return w;
}

}  // namespace

Parse link_parse(std::string_view sentence) {
  LinkGrammar& lg = link_grammar();
  std::lock_guard lock(lg.mutex);
  Parse parse;
  // Link Grammar's C API takes a C string (so no NUL inside), and crashes in
  // sentence_split on one without words: neither can parse.
  if (sentence.find('\0') != std::string_view::npos ||
      sentence.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos)
    return parse;
  std::string text(sentence);
  Sentence sent = sentence_create(text.c_str(), lg.dict);
  if (!sent) return parse;
  int linkages = sentence_parse(sent, lg.opts);
  if (linkages > 0 && sentence_null_count(sent) == 0) {
    Linkage linkage = linkage_create(0, sent, lg.opts);
    if (linkage) {
      parse.complete = true;
      int n = linkage_get_num_words(linkage);
      for (int i = 0; i < n; ++i)
        parse.words.push_back(split_word(linkage_get_word(linkage, i),
                                         linkage_get_word_byte_start(linkage, i),
                                         linkage_get_word_byte_end(linkage, i)));
      int m = linkage_get_num_links(linkage);
      for (int k = 0; k < m; ++k)
        parse.links.push_back({linkage_get_link_label(linkage, k),
                               static_cast<size_t>(linkage_get_link_lword(linkage, k)),
                               static_cast<size_t>(linkage_get_link_rword(linkage, k))});
      linkage_delete(linkage);
    }
  }
  sentence_delete(sent);
  return parse;
}

}  // namespace verity::perturb
