#pragma once
// A fresh, empty directory for one test: <temp>/verity_<prefix>_<name>_<pid>, emptied first so a
// run never sees what an earlier one left.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace verity_test {

inline std::filesystem::path fresh_dir(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  auto d = fs::temp_directory_path() / ("verity_" + prefix + "_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace verity_test
