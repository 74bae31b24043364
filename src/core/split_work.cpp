#include "core/split_work.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "core/error.hpp"

namespace verity {
namespace {

thread_local bool on_helper = false;  // this thread is the helper
thread_local bool holding = false;    // this thread's call holds the helper

// One helper thread, started on first use and detached (the process never
// joins it): it runs one part at a time.
class Helper {
 public:
  static Helper& instance() {
    static Helper* helper = new Helper;  // never destroyed: the thread may outlive static destructors
    return *helper;
  }
  // Runs `part` on the helper and `here` on this thread; false (nothing run)
  // when the helper is taken, when this thread's own call holds it (a part
  // that splits again: std::mutex is not recursive), or in a forked child,
  // which has no helper thread.
  bool run_beside(const std::function<void()>& part, const std::function<void()>& here) {
    if (holding || ::getpid() != pid_) return false;
    std::unique_lock<std::mutex> taken(busy_, std::try_to_lock);
    if (!taken.owns_lock()) return false;
    holding = true;
    struct Release {
      ~Release() { holding = false; }
    } release;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = &part, done_ = false, error_ = nullptr;
    }
    wake_.notify_one();
    std::exception_ptr mine;
    try {
      here();
    } catch (...) {
      mine = std::current_exception();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return done_; });
    const auto theirs = error_;
    lock.unlock();
    if (mine) std::rethrow_exception(mine);
    if (theirs) std::rethrow_exception(theirs);
    return true;
  }

 private:
  Helper() : pid_(::getpid()), thread_([this] { loop(); }) { thread_.detach(); }
  void loop() {
    on_helper = true;
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return task_ != nullptr; });
      const auto* task = task_;
      lock.unlock();
      std::exception_ptr error;
      try {
        (*task)();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      task_ = nullptr, done_ = true, error_ = error;
      lock.unlock();
      finished_.notify_one();
    }
  }
  std::mutex busy_;   // held by the call the helper works for
  std::mutex mutex_;  // guards task_, done_, error_
  std::condition_variable wake_, finished_;
  const std::function<void()>* task_ = nullptr;
  bool done_ = false;
  std::exception_ptr error_;
  const pid_t pid_;
  std::thread thread_;
};

}  // namespace

size_t split_work_threads() {
  static const size_t threads = [] {
    const char* v = std::getenv("VERITY_STAGE2_THREADS");
    const std::string setting = v ? v : "";
    VERITY_CHECK(setting.empty() || setting == "1" || setting == "2", ConfigError, "VERITY_STAGE2_THREADS='",
                 setting, "': expected 1 or 2");
    if (setting == "1") return size_t(1);
    if (setting == "2") return size_t(2);
    return std::thread::hardware_concurrency() >= 2 ? size_t(2) : size_t(1);
  }();
  return threads;
}

void split_work(size_t n, size_t min_items, const std::function<void(size_t, size_t)>& body) {
  if (n == 0) return;
  const size_t mid = n / 2;
  if (on_helper || split_work_threads() < 2 || mid < std::max<size_t>(min_items, 1)) return body(0, n);
  const std::function<void()> second = [&] { body(mid, n); };
  if (!Helper::instance().run_beside(second, [&] { body(0, mid); })) body(0, n);
}

void for_each_on_threads(size_t n, size_t threads, const std::function<void(size_t)>& body) {
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_lock;
  auto work = [&] {
    try {
      for (size_t i; (i = next++) < n;) body(i);
    } catch (...) {
      std::lock_guard lock(error_lock);
      if (!error) error = std::current_exception();
      next = n;  // the others stop before their next item
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace verity
