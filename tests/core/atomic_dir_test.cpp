// Putting staged directories in place, and clearing what killed writers left.
#include "core/atomic_dir.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "core/io.hpp"
#include "../support/scratch_dir.hpp"

using namespace verity;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) { return verity_test::fresh_dir("atomic_dir", name); }

// A pid that surely is not running: a child that has exited and been reaped.
pid_t dead_pid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}
}  // namespace

TEST(AtomicDir, ReplaceSwapsInTheNewDirectoryAndDropsTheOld) {
  const auto d = fresh_dir("replace");
  const auto target = (d / "out").string(), staging = (d / "out.tmp.1").string();
  make_directories(staging);
  write_file_atomic(staging + "/a", "first");
  replace_directory(staging, target);  // no target yet: a plain rename
  EXPECT_EQ(read_file(target + "/a"), "first");
  EXPECT_FALSE(fs::exists(staging));

  make_directories(staging);
  write_file_atomic(staging + "/b", "second");
  replace_directory(staging, target);
  EXPECT_EQ(read_file(target + "/b"), "second");
  EXPECT_FALSE(fs::exists(target + "/a")) << "the old directory's files must go with it";
  EXPECT_FALSE(fs::exists(staging));
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1) << "nothing left beside it";
  EXPECT_THROW(replace_directory((d / "missing").string(), target), Error);
  fs::remove_all(d);
}

TEST(AtomicDir, StaleSiblingsOfDeadWritersAreRemoved) {
  const auto d = fresh_dir("stale");
  const auto path = (d / "index").string();
  const pid_t dead = dead_pid();
  const std::vector<std::string> stale = {cat("index.tmp.", dead), cat("index.old.", dead),
                                          cat("index.tmp.", dead, ".tmp.", dead)};
  const std::vector<std::string> kept = {cat("index.old.", ::getppid()), "index.tmp.1",  // alive: parent, init
                                         "index.tmp.abc", cat("other.tmp.", dead), cat("index.tmpx.", dead),
                                         "index"};
  for (const auto& n : kept) write_file_atomic((d / n).string(), "x");  // (writers clear stale siblings too)
  for (const auto& n : stale) make_directories((d / n).string());
  EXPECT_EQ(remove_stale_siblings(path), stale.size());
  for (const auto& n : stale) EXPECT_FALSE(fs::exists(d / n)) << n;
  for (const auto& n : kept) EXPECT_TRUE(fs::exists(d / n)) << n;
  EXPECT_EQ(remove_stale_siblings((d / "nowhere" / "x").string()), 0u);  // a missing directory is fine
  fs::remove_all(d);
}
