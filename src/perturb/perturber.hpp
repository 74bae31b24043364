#pragma once
// Structural near-miss generators: each Perturber makes one small, typed edit
// to a sentence (negation, role swap, spatial/temporal relation, quantity) or a
// meaning-preserving rewrite (passive, synonym), or declines with a reason.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verity::perturb {

// Deterministic across platforms (splitmix64): the same seed and input give
// the same edits everywhere, unlike std::uniform_int_distribution.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, n); n must be > 0.
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }

 private:
  uint64_t state_;
};

struct Perturbation {
  std::string text;                  // the whole edited sentence
  std::string type;                  // generator kind, e.g. "negation"
  size_t span_begin = 0, span_end = 0;  // byte offsets of the edited span in `text`
  std::string original_span;         // the input bytes that span replaced
  std::string new_span;              // == text.substr(span_begin, span_end - span_begin)
};

class Perturber {
 public:
  virtual ~Perturber() = default;
  // One edit of `sentence`, or nullopt when the generator has no safe edit;
  // skip_reason() then says why (stable short strings, counted by the CLI).
  // Deterministic given the rng state. Thread-compatible: the parsers behind
  // it serialize themselves (see docs/PERTURB.md).
  virtual std::optional<Perturbation> apply(std::string_view sentence, Rng& rng) const = 0;
  virtual std::string spec() const = 0;
  // Why the last apply() on this thread returned nullopt.
  static const std::string& skip_reason();

 protected:
  static void set_skip_reason(std::string reason);
};

// "negation[:mode=not|antonym|mixed]", "role_swap", "spatial", "numeric",
// "passive", "synonym". Unknown kinds or keys throw ConfigError listing the valid ones.
std::unique_ptr<Perturber> make_perturber(std::string_view spec);
std::vector<std::string> perturber_kinds();

// True when Link Grammar parses `sentence` completely (at least one linkage,
// no null links). Used for the validity measurement.
bool reparses(std::string_view sentence);

}  // namespace verity::perturb
