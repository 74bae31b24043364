#include "perturb/inflect.hpp"

#include <set>

#include "perturb/wordnet.hpp"

namespace verity::perturb::detail {
namespace {
bool is_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }
}  // namespace

std::string third_person(std::string_view b) {
  std::string base(b);
  if (base == "have") return "has";
  if (base == "be") return "is";
  if (base.empty()) return base;
  auto ends = [&](std::string_view suf) { return base.size() >= suf.size() && base.ends_with(suf); };
  if (ends("s") || ends("x") || ends("z") || ends("ch") || ends("sh") || ends("o")) return base + "es";
  if (ends("y") && base.size() > 1 && !is_vowel(base[base.size() - 2]))
    return base.substr(0, base.size() - 1) + "ies";
  return base + "s";
}

std::string plural_present(std::string_view t) {
  std::string w(t);
  if (w == "is") return "are";
  if (w == "was") return "were";
  if (w == "has") return "have";
  if (w == "does") return "do";
  if (w == "are") return "is";
  if (w == "were") return "was";
  if (w == "have") return "has";
  if (w == "do") return "does";
  return wn_base_form(w, WordClass::verb);
}

std::vector<std::string> past_forms(std::string_view b) {
  std::string base(b);
  std::vector<std::string> out = wn_irregular_forms(base);
  // Drop -ing and -s forms that verb.exc also lists for some verbs.
  std::erase_if(out, [](const std::string& f) { return f.ends_with("ing") || f.ends_with("s"); });
  if (!out.empty()) return out;
  if (base.ends_with("e")) return {base + "d"};
  if (base.ends_with("y") && base.size() > 1 && !is_vowel(base[base.size() - 2]))
    return {base.substr(0, base.size() - 1) + "ied"};
  return {base + "ed"};
}

bool is_be_or_modal(std::string_view w) {
  static const std::set<std::string_view> words = {
      "am", "is", "are", "was", "were", "be", "can", "could", "will", "would", "shall",
      "should", "may", "might", "must", "'s", "'re", "'m", "'ll", "'d"};
  return words.count(w) > 0;
}

bool is_auxiliary(std::string_view w) {
  static const std::set<std::string_view> words = {"has", "have", "had", "does", "do", "did", "'ve"};
  return is_be_or_modal(w) || words.count(w) > 0;
}

}  // namespace verity::perturb::detail
