#pragma once
// Shared by the cache and /cache tests: models/use-lite (required when
// VERITY_REQUIRE_MODELS is set, else the test is skipped) and a fresh
// directory per test for the database.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cache/cache.hpp"
#include "core/log.hpp"

namespace verity_test {

inline std::string use_lite_dir() {
  if (const char* v = std::getenv("VERITY_MODEL_DIR"); v && *v) return std::string(v) + "/use-lite";
  return std::string(VERITY_SOURCE_DIR) + "/models/use-lite";
}

class CacheFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    verity::set_quiet(true);
    if (!std::filesystem::exists(use_lite_dir() + "/verity.json")) {
      if (std::getenv("VERITY_REQUIRE_MODELS")) FAIL() << "models/use-lite missing";
      GTEST_SKIP() << "models/use-lite not converted (scripts/setup_models.sh)";
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("verity_cache_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string db() const { return (dir_ / "cache.sqlite").string(); }
  // use-lite, and F1 as the verifier: parameter-free, so decisions in tests do
  // not move when the trained default changes.
  static verity::cache::CacheOptions options() {
    verity::cache::CacheOptions o;
    o.encoder = "use-lite:" + use_lite_dir();
    o.verifier = "f1";
    return o;
  }
  std::filesystem::path dir_;
};

}  // namespace verity_test
