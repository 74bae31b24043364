// Force-included (-include) in clang builds only (the sanitizer and fuzz builds).
// libtorch 1.13's headers keep std::vector<c10::IValue> members while IValue is still
// incomplete; libstdc++ 12 makes vector and string constexpr in C++20, and clang 14
// instantiates constexpr members where they are named, so those headers fail to
// compile. Turning off libstdc++'s C++20 constexpr containers (no ABI change: no
// mangled name differs) restores what GCC accepts. verity code evaluates no
// std::vector or std::string at compile time.
#include <bits/c++config.h>
#undef _GLIBCXX20_CONSTEXPR
#define _GLIBCXX20_CONSTEXPR
#undef _GLIBCXX_HAVE_IS_CONSTANT_EVALUATED
// <type_traits> no longer declares it then; <memory>'s assume_aligned still calls it.
namespace std {
constexpr inline bool is_constant_evaluated() noexcept { return __builtin_is_constant_evaluated(); }
}  // namespace std
