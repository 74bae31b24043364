#pragma once
// A thin, serialized wrapper over the Link Grammar C API ("en" dictionary).
#include <string>
#include <string_view>
#include <vector>

namespace verity::perturb {

struct ParsedWord {
  std::string word;  // surface form as Link Grammar reports it (lowercased at sentence start)
  std::string tag;   // subscript after the last '.', e.g. "n", "v-d", "a"; empty if none
  size_t begin = 0, end = 0;  // byte offsets in the parsed sentence (walls: empty)
  bool wall = false;
};

struct ParsedLink {
  std::string label;  // e.g. "Ss*s", "Os", "Ds**x"
  size_t left = 0, right = 0;  // word indices
};

struct Parse {
  bool complete = false;  // >= 1 linkage and no null links
  std::vector<ParsedWord> words;
  std::vector<ParsedLink> links;  // of the best linkage; empty when none
};

// Parses with the process-wide dictionary (created on first use; throws
// verity::Error if the dictionary cannot be opened). Each call holds a global
// mutex: the dictionary is shared and Link Grammar documents no thread safety
// for concurrent parses with one Dictionary.
Parse link_parse(std::string_view sentence);

}  // namespace verity::perturb
