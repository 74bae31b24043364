#pragma once
// Error types shared by every verity library. The library never exits; only
// main() maps these to exit codes (usage errors -> 2, everything else -> 1).
#include <sstream>
#include <stdexcept>
#include <string>

namespace verity {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Malformed or damaged input: files, JSON lines, on-disk formats.
class FormatError : public Error {
 public:
  using Error::Error;
};
// Bad option values, unknown factory strings, inconsistent settings.
class ConfigError : public Error {
 public:
  using Error::Error;
};
// An optional operation that this implementation does not provide.
class Unsupported : public Error {
 public:
  using Error::Error;
};
// The user asked to stop (SIGINT/SIGTERM) and the job stopped cleanly.
class Interrupted : public Error {
 public:
  using Error::Error;
};

namespace detail {
inline void append_all(std::ostringstream&) {}
template <typename T, typename... Rest>
void append_all(std::ostringstream& os, const T& v, const Rest&... rest) {
  os << v;
  append_all(os, rest...);
}
}  // namespace detail

// Concatenates the arguments with operator<< into one message.
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  detail::append_all(os, args...);
  return os.str();
}

}  // namespace verity

// Throws ErrType with the message when cond is false. For user-facing errors
// the message itself must name the file/line/field; the source location is
// appended only for internal invariants (VERITY_ASSERT).
#define VERITY_CHECK(cond, ErrType, ...)                   \
  do {                                                     \
    if (!(cond)) throw ErrType(::verity::cat(__VA_ARGS__)); \
  } while (0)

#define VERITY_ASSERT(cond)                                                        \
  do {                                                                             \
    if (!(cond))                                                                   \
      throw ::verity::Error(::verity::cat("internal error: ", #cond, " at ", __FILE__, \
                                          ":", __LINE__));                         \
  } while (0)
