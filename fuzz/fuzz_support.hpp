#pragma once
// Shared by the libFuzzer harnesses in fuzz/ (what each covers: docs/RELIABILITY.md).
//
// The rule every harness enforces: a parser may reject input only by throwing a
// verity::Error subclass (whose message names the file, offset or field). Any other
// exception escaping (std::out_of_range, a raw nlohmann::json error, std::bad_alloc
// from an unbounded size, a torch c10::Error) is a bug and aborts, so libFuzzer
// records the input as a crash. Memory errors and undefined behaviour are caught by
// ASan/UBSan, which the fuzz build enables everywhere.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace verity::fuzz {

// A private scratch directory for this process (on /dev/shm when it is writable),
// removed at exit.
const std::string& scratch_dir();

// Writes bytes to scratch_dir()/name (replacing it) and returns the path.
std::string write_input(std::string_view name, std::string_view bytes);
inline std::string write_input(std::string_view name, const uint8_t* data, size_t size) {
  return write_input(name, std::string_view(reinterpret_cast<const char*>(data), size));
}

// Reports an exception that is not a verity::Error and aborts.
[[noreturn]] void unexpected_exception(const char* what);

// Runs fn; verity::Error is a clean rejection, anything else aborts.
template <typename Fn>
void expect_clean_errors(Fn&& fn) {
  try {
    fn();
  } catch (const Error&) {
  } catch (const std::exception& e) {
    unexpected_exception(e.what());
  } catch (...) {
    unexpected_exception("a non-std exception");
  }
}

// Fails the run (abort) with a message: for properties a harness checks on
// accepted input (round trips, bounds of returned values).
[[noreturn]] void property_failed(const std::string& message);
#define VERITY_FUZZ_EXPECT(cond, ...) \
  do {                                \
    if (!(cond)) ::verity::fuzz::property_failed(::verity::cat(#cond, ": ", __VA_ARGS__)); \
  } while (0)

// Recomputes the crc32c of every section of a SectionFile image, in place, so that
// mutated payloads reach the format's own checks instead of stopping at the
// checksum. Images whose section framing does not parse are left as they are.
void fix_section_crcs(std::string& image);

// write_input() of a SectionFile image after fix_section_crcs().
std::string write_section_input(std::string_view name, const uint8_t* data, size_t size);

// Where the payload of section `tag` lies in a SectionFile image: {offset, length},
// or {0, 0} when the framing does not parse or the section is absent.
std::pair<size_t, size_t> section_payload(const std::string& image, std::string_view tag);

// The source tree (fixtures, models/) as configured at build time.
std::string source_dir();

}  // namespace verity::fuzz
