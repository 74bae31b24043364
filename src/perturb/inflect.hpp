#pragma once
// English verb inflection for the generators (WordNet exceptions + regular rules).
#include <string>
#include <string_view>
#include <vector>

namespace verity::perturb::detail {

std::string third_person(std::string_view base);  // run -> runs, go -> goes, have -> has
std::string plural_present(std::string_view third);  // runs -> run, has -> have, is -> are
// Past tense / past participle candidates: irregular forms from verb.exc first, else "-ed".
std::vector<std::string> past_forms(std::string_view base);
bool is_be_or_modal(std::string_view w);  // is, was, can, will, ... (take "not" directly)
bool is_auxiliary(std::string_view w);    // be/modal + have/do forms

}  // namespace verity::perturb::detail
