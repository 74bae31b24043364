#include "perturb/perturber.hpp"

#include "core/error.hpp"
#include "perturb/generators.hpp"
#include "perturb/link_parser.hpp"

namespace verity::perturb {
namespace {
thread_local std::string t_skip_reason;
}  // namespace

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

const std::string& Perturber::skip_reason() { return t_skip_reason; }
void Perturber::set_skip_reason(std::string reason) { t_skip_reason = std::move(reason); }

std::vector<std::string> perturber_kinds() {
  return {"negation", "role_swap", "spatial", "numeric", "passive", "synonym"};
}

std::unique_ptr<Perturber> make_perturber(std::string_view spec) {
  std::string s(spec);
  auto colon = s.find(':');
  std::string kind = s.substr(0, colon);
  std::string params = colon == std::string::npos ? "" : s.substr(colon + 1);
  auto no_params = [&] {
    VERITY_CHECK(params.empty(), ConfigError, "perturber '", kind, "' takes no parameters, got '", params, "'");
  };
  if (kind == "negation") {
    NegationMode mode = NegationMode::not_only;
    if (!params.empty()) {
      VERITY_CHECK(params.starts_with("mode="), ConfigError, "perturber 'negation': unknown parameter '",
                   params, "' (valid: mode=not|antonym|mixed)");
      std::string m = params.substr(5);
      if (m == "not") mode = NegationMode::not_only;
      else if (m == "antonym") mode = NegationMode::antonym_only;
      else if (m == "mixed") mode = NegationMode::mixed;
      else throw ConfigError(cat("perturber 'negation': mode='", m, "' (valid: not, antonym, mixed)"));
    }
    return make_negation_perturber(mode);
  }
  no_params();
  if (kind == "role_swap") return make_role_swap_perturber();
  if (kind == "spatial") return make_spatial_perturber();
  if (kind == "numeric") return make_numeric_perturber();
  if (kind == "passive") return make_passive_perturber();
  if (kind == "synonym") return make_synonym_perturber();
  throw ConfigError(cat("unknown perturber '", kind,
                        "' (valid: negation, role_swap, spatial, numeric, passive, synonym)"));
}

bool reparses(std::string_view sentence) { return link_parse(sentence).complete; }

}  // namespace verity::perturb
