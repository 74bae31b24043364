#pragma once
// Runs independent items on several threads: split_work splits one call's
// items (a query's ~100 candidate maps, F5's pairs) between the calling thread
// and one process-wide helper thread, so a
// single query uses both cores of a 2-core machine in stage 2. The helper is
// shared: when another call holds it (a server answering two queries at once),
// the work runs on the calling thread alone, as it does for a call made from
// the helper itself, for too few items, or with VERITY_STAGE2_THREADS=1.
// Torch's at::parallel_for cannot do this here: verity is built without
// OpenMP, and a build with it slowed the encoder's many small regions
// (docs/RESULTS.md). May use: core/error.hpp, the standard library and POSIX.
#include <cstddef>
#include <functional>

namespace verity {

// Calls body(begin, end) over [0, n) in at most two contiguous parts, one on
// the helper, and returns when both are done; an exception from either part
// is rethrown here (the first, if both throw). Parts hold at least min_items.
void split_work(size_t n, size_t min_items, const std::function<void(size_t begin, size_t end)>& body);

// Threads split_work may use: 2 when the machine has two or more cores,
// unless $VERITY_STAGE2_THREADS is "1" ("2" asks for two; anything else is a
// ConfigError naming the variable). Read once per process.
size_t split_work_threads();

// Calls body(i) for each i in [0, n) on `threads` threads (this one and
// threads - 1 started for the call), each taking the next unclaimed item, for
// batch jobs whose items differ in cost (an HNSW insert, a cache lookup, a
// group of pairs). After an exception no further item starts; the first is
// rethrown here once every thread has stopped.
void for_each_on_threads(size_t n, size_t threads, const std::function<void(size_t)>& body);

}  // namespace verity
