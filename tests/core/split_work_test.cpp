// split_work: every item exactly once, in at most two parts; errors come back
// to the caller; a part that splits again, and callers that overlap, run
// whole rather than wait.
#include "core/split_work.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace verity {
namespace {

TEST(SplitWork, CoversEveryItemOnceInAtMostTwoParts) {
  for (size_t n : {0u, 1u, 7u, 8u, 16u, 17u, 100u}) {
    std::mutex m;
    std::vector<int> seen(n, 0);
    std::vector<std::pair<size_t, size_t>> parts;
    split_work(n, 8, [&](size_t begin, size_t end) {
      std::lock_guard<std::mutex> lock(m);
      parts.emplace_back(begin, end);
      for (size_t i = begin; i < end; ++i) ++seen[i];
    });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << "n=" << n << " i=" << i;
    EXPECT_LE(parts.size(), 2u);
    if (n < 16) EXPECT_EQ(parts.size(), n == 0 ? 0u : 1u) << n;  // too few to split
  }
}

TEST(SplitWork, UsesASecondThreadWhereTheMachineHasTwoCores) {
  if (split_work_threads() < 2) GTEST_SKIP() << "one core, or VERITY_STAGE2_THREADS=1";
  std::mutex m;
  std::set<std::thread::id> threads;
  split_work(100, 8, [&](size_t, size_t) {
    std::lock_guard<std::mutex> lock(m);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(threads.size(), 2u);
  EXPECT_TRUE(threads.count(std::this_thread::get_id()));
}

TEST(SplitWork, AnErrorInEitherPartReachesTheCaller) {
  for (size_t failing : {0u, 99u}) {
    EXPECT_THROW(split_work(100, 8,
                            [&](size_t begin, size_t end) {
                              if (begin <= failing && failing < end) throw std::runtime_error("part failed");
                            }),
                 std::runtime_error);
  }
  // The helper is free again afterwards.
  std::atomic<size_t> items{0};
  split_work(100, 8, [&](size_t begin, size_t end) { items += end - begin; });
  EXPECT_EQ(items.load(), 100u);
}

TEST(SplitWork, NestedAndOverlappingCallsRunWhole) {
  std::atomic<size_t> items{0};
  split_work(64, 8, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) split_work(32, 8, [&](size_t b, size_t e) { items += e - b; });
  });
  EXPECT_EQ(items.load(), 64u * 32u);
  items = 0;
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int r = 0; r < 50; ++r) split_work(40, 4, [&](size_t b, size_t e) { items += e - b; });
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(items.load(), 4u * 50u * 40u);
}

// A child forked after the helper started has no helper thread: it runs the
// work whole instead of waiting for one.
TEST(SplitWork, AForkedChildRunsTheWorkItself) {
  split_work(100, 8, [](size_t, size_t) {});  // the helper is running
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    size_t items = 0;
    split_work(100, 8, [&](size_t begin, size_t end) { items += end - begin; });
    _exit(items == 100 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// for_each_on_threads: every item once, on as many threads as asked.
TEST(ForEachOnThreads, RunsEveryItemOnceOnTheThreadsAsked) {
  for (size_t threads : {1u, 3u})
    for (size_t n : {0u, 1u, 50u}) {
      std::vector<std::atomic<int>> seen(n);
      std::mutex m;
      std::set<std::thread::id> ids;
      for_each_on_threads(n, threads, [&](size_t i) {
        ++seen[i];
        std::lock_guard lock(m);
        ids.insert(std::this_thread::get_id());
      });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i].load(), 1) << "item " << i;
      EXPECT_LE(ids.size(), threads);
      if (threads == 1 && n > 0) EXPECT_EQ(*ids.begin(), std::this_thread::get_id());
    }
}

// The first exception reaches the caller, and no item starts after it.
TEST(ForEachOnThreads, AnExceptionStopsTheRestAndIsRethrown) {
  std::atomic<size_t> started{0};
  EXPECT_THROW(for_each_on_threads(1000, 2,
                                   [&](size_t i) {
                                     ++started;
                                     if (i == 3) throw std::runtime_error("item 3");
                                     // The rest take long enough that all of them cannot start first.
                                     std::this_thread::sleep_for(std::chrono::microseconds(200));
                                   }),
               std::runtime_error);
  EXPECT_LT(started.load(), 1000u);
}

}  // namespace
}  // namespace verity
