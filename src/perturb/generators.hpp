#pragma once
// Constructors behind make_perturber (private to the module).
#include <memory>
#include <string>

#include "perturb/perturber.hpp"

namespace verity::perturb {

std::unique_ptr<Perturber> make_spatial_perturber();
std::unique_ptr<Perturber> make_numeric_perturber();
enum class NegationMode { not_only, antonym_only, mixed };
std::unique_ptr<Perturber> make_negation_perturber(NegationMode mode);
std::unique_ptr<Perturber> make_role_swap_perturber();
std::unique_ptr<Perturber> make_passive_perturber();
std::unique_ptr<Perturber> make_synonym_perturber();

}  // namespace verity::perturb
