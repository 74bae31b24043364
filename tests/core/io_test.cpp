// Path checks that take paths from users: a path that cannot be checked is a verity
// Error naming it, never std::filesystem's own exception.
#include "core/io.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../support/scratch_dir.hpp"

using namespace verity;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) { return verity_test::fresh_dir("io", name); }

// Runs f, which must throw a verity Error (not a filesystem_error) whose message contains `part`.
template <class F>
void expect_verity_error(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << part << "'";
  } catch (const fs::filesystem_error& e) {
    ADD_FAILURE() << "std::filesystem's own error escaped: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}
}  // namespace

TEST(PathChecks, AnswerForFilesDirectoriesAndMissingPaths) {
  const auto dir = fresh_dir("answers");
  const std::string file = (dir / "f.txt").string();
  write_file_atomic(file, "12345");
  EXPECT_TRUE(file_exists(file));
  EXPECT_FALSE(is_directory(file));
  EXPECT_EQ(file_size(file), 5u);
  EXPECT_TRUE(file_exists(dir.string()));
  EXPECT_TRUE(is_directory(dir.string()));
  EXPECT_FALSE(is_empty_directory(dir.string()));
  fs::create_directories(dir / "empty");
  EXPECT_TRUE(is_empty_directory((dir / "empty").string()));
  // An empty file is not an empty directory.
  write_file_atomic((dir / "zero").string(), "");
  EXPECT_FALSE(is_empty_directory((dir / "zero").string()));
  EXPECT_EQ(file_size((dir / "zero").string()), 0u);
  // Missing is an answer, not an error.
  EXPECT_FALSE(file_exists((dir / "missing").string()));
  EXPECT_FALSE(is_directory((dir / "missing").string()));
  fs::remove_all(dir);
}

TEST(PathChecks, UncheckablePathsAreVerityErrorsNamingThePath) {
  const auto dir = fresh_dir("uncheckable");
  // A component longer than NAME_MAX (255) cannot be checked at all.
  const std::string too_long = (dir / std::string(300, 'x')).string();
  expect_verity_error([&] { file_exists(too_long); }, "cannot check path");
  expect_verity_error([&] { is_directory(too_long); }, "cannot check path");
  expect_verity_error([&] { file_size(too_long); }, "cannot read the size of");
  expect_verity_error([&] { is_empty_directory(too_long); }, "cannot list");
  // Missing files have no size, and the error names them.
  const std::string missing = (dir / "missing.bin").string();
  expect_verity_error([&] { file_size(missing); }, missing);
  expect_verity_error([&] { is_empty_directory(missing); }, missing);
  fs::remove_all(dir);
}

// Reports name paths relative to the working directory, never by a machine's
// absolute prefix; a relative path or a spec without a path is kept as given.
TEST(ReportPaths, RelativeUnderTheWorkingDirectoryElseTheFileName) {
  const auto cwd = fs::current_path();
  EXPECT_EQ(path_for_report((cwd / "assets" / "verifiers" / "default.valn").string()), "assets/verifiers/default.valn");
  EXPECT_EQ(path_for_report((cwd / "models" / "use-lite" / "").string()), "models/use-lite/");
  EXPECT_EQ(path_for_report((cwd / "a" / ".." / "b.valn").string()), "b.valn");
  EXPECT_EQ(path_for_report("out/x.valn"), "out/x.valn");
  EXPECT_EQ(path_for_report("/nowhere-" + std::to_string(::getpid()) + "/deep/v7.valn"), "v7.valn");
  EXPECT_EQ(path_for_report("/nowhere/models/use-lite/"), "use-lite");
  EXPECT_EQ(spec_for_report("f5:" + (cwd / "x" / "default.valn").string()), "f5:x/default.valn");
  EXPECT_EQ(spec_for_report("use-lite:/elsewhere/models/use-lite"), "use-lite:use-lite");
  for (const char* kept : {"cosine", "f1", "f2:lambda=0.5,tau=0.1", "f5:out/x.valn", "default", "f5:"})
    EXPECT_EQ(spec_for_report(kept), kept);
}
