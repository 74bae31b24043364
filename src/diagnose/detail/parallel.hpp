#pragma once
// A minimal work-sharing loop for the diagnostics (bootstrap, matching,
// lexical analysis). Results never depend on the number of threads: callers
// write to per-index slots only.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "core/log.hpp"

namespace verity::diagnose::detail {

// Runs fn(i) for i in [0, n) on `threads` workers.
template <typename Fn>
void parallel_for(size_t n, int threads, Fn fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < n;) {
      if (interrupt_requested()) return;
      fn(i);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, threads); ++t) pool.emplace_back(worker);
  worker();
  for (auto &th : pool) th.join();
  check_interrupt();
}

}  // namespace verity::diagnose::detail
