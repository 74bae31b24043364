#include "nearmiss/spatial_converse.hpp"

#include <array>
#include <cctype>
#include <utility>
#include <vector>

namespace verity::nearmiss {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kInverse = {{
    {"left", "right"}, {"lefthand", "righthand"}, {"above", "below"}, {"upper", "lower"},
    {"top", "bottom"}, {"up", "down"}, {"over", "under"}, {"north", "south"}, {"east", "west"}}};

constexpr std::array<std::string_view, 10> kUnsupported = {
    "front", "back", "behind", "there", "between", "center", "centre", "clock", "o'clock", "beside"};

// Subject prefixes StepGame uses before the first agent.
constexpr std::array<std::string_view, 3> kSubjectPrefixes = {"The object labeled ", "The object ",
                                                              "Object "};

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '\''; }

std::string lower(std::string_view w) {
  std::string s(w);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<std::string> inverse_of(std::string_view word) {
  std::string lw = lower(word);
  for (auto [a, b] : kInverse) {
    std::string_view to;
    if (lw == a) to = b;
    else if (lw == b) to = a;
    else continue;
    std::string out(to);
    if (std::isupper(static_cast<unsigned char>(word[0])))
      out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
    return out;
  }
  return std::nullopt;
}

bool is_agent(std::string_view word) { return word.size() == 1 && word[0] >= 'A' && word[0] <= 'Z'; }

}  // namespace

std::optional<std::string> spatial_converse(std::string_view sentence, std::string* reason) {
  auto decline = [&](const char* why) -> std::optional<std::string> {
    if (reason) *reason = why;
    return std::nullopt;
  };
  // Tokenize into word and non-word runs so punctuation and spacing survive.
  struct Piece {
    std::string text;
    bool word;
  };
  std::vector<Piece> pieces;
  for (size_t i = 0; i < sentence.size();) {
    bool w = is_word_char(sentence[i]);
    size_t j = i;
    while (j < sentence.size() && is_word_char(sentence[j]) == w) ++j;
    pieces.push_back({std::string(sentence.substr(i, j - i)), w});
    i = j;
  }
  char first = 0, second = 0;
  bool has_direction = false;
  for (const auto& p : pieces) {
    if (!p.word) continue;
    if (is_agent(p.text)) {
      if (!first) first = p.text[0];
      else if (p.text[0] != first && !second) second = p.text[0];
      else if (p.text[0] != first && p.text[0] != second) return decline("agents");
      continue;
    }
    std::string lw = lower(p.text);
    for (auto u : kUnsupported)
      if (lw == u) return decline("unsupported_word");
    if (std::isdigit(static_cast<unsigned char>(lw[0])) && lw != "45") return decline("unsupported_word");
    if (inverse_of(p.text)) has_direction = true;
  }
  if (!first || !second) return decline("agents");
  // The first agent must be the sentence subject: "A is ...", "Object A is ...".
  std::string_view rest = sentence;
  for (auto prefix : kSubjectPrefixes)
    if (rest.substr(0, prefix.size()) == prefix) {
      rest.remove_prefix(prefix.size());
      break;
    }
  if (rest.size() < 3 || !is_agent(rest.substr(0, 1)) || rest[1] != ' ') return decline("subject");
  std::string_view verb = rest.substr(2);
  if (verb.substr(0, 3) != "is " && verb.substr(0, 9) != "presents ") return decline("subject");
  if (!has_direction) return decline("no_direction");

  std::string out;
  for (const auto& p : pieces) {
    if (p.word && is_agent(p.text)) {
      out.push_back(p.text[0] == first ? second : first);
    } else if (p.word) {
      auto inv = inverse_of(p.text);
      out += inv ? *inv : p.text;
    } else {
      out += p.text;
    }
  }
  return out;
}

}  // namespace verity::nearmiss
