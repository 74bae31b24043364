#pragma once
// A minimal work-sharing loop for the diagnostics (bootstrap, matching,
// lexical analysis). Results never depend on the number of threads: callers
// write to per-index slots only.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/log.hpp"

namespace verity::diagnose::detail {

// Runs fn(i) for i in [0, n) on `threads` workers. An exception thrown by
// fn is rethrown here once every worker has finished (that of the lowest i
// when several throw, so which one is reported does not depend on the thread
// count); an interrupt takes precedence.
template <typename Fn>
void parallel_for(size_t n, int threads, Fn fn) {
  std::atomic<size_t> next{0};
  std::mutex failed_mutex;
  std::exception_ptr failed;
  size_t failed_at = n;
  auto worker = [&] {
    for (size_t i; (i = next++) < n;) {
      if (interrupt_requested()) return;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failed_mutex);
        if (i < failed_at) failed_at = i, failed = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, threads); ++t) pool.emplace_back(worker);
  worker();
  for (auto &th : pool) th.join();
  check_interrupt();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace verity::diagnose::detail
