#pragma once
// Runs the verity binary with arguments; captures stdout, stderr and exit status.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace verity_test {

struct Result {
  int status;
  std::string out, err;
};

// env: assignments such as "VERITY_KERNEL_ISA=portable" set for this run only.
inline Result run(const std::string& args, const std::string& env = "") {
  namespace fs = std::filesystem;
  auto err_path = fs::temp_directory_path() / ("verity_cli_err_" + std::to_string(::getpid()));
  std::string cmd = (env.empty() ? "" : "env " + env + " ") + std::string(VERITY_BINARY) + " " + args + " 2>" +
                    err_path.string();
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = ::pclose(p);
  std::ifstream e(err_path);
  std::string err((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
  fs::remove(err_path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err};
}

// Whether the converted USE-lite model is there (VERITY_MODEL_DIR, else the
// repository's models/): tests that need it skip without it, or fail where
// VERITY_REQUIRE_MODELS is set.
inline bool have_use_lite() {
  const char* dir = std::getenv("VERITY_MODEL_DIR");
  const std::string root = dir ? dir : std::string(VERITY_SOURCE_DIR) + "/models";
  return std::filesystem::exists(root + "/use-lite/verity.json");
}

}  // namespace verity_test
