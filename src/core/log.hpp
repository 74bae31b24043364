#pragma once
// Logs and progress go to stderr only (stdout is reserved for results/--json).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace verity {

void set_quiet(bool quiet);
bool quiet();

// Prints one line to stderr unless quiet.
void log_line(const std::string& message);
template <typename... Args>
void log(const Args&... args) {
  log_line(cat(args...));
}

// A progress counter for long jobs: redraws at most ~5 times a second on a
// terminal; off a terminal it prints a line every 10% so logs stay readable.
class Progress {
 public:
  Progress(std::string label, uint64_t total);
  ~Progress();
  void add(uint64_t n = 1);
  void finish();

 private:
  void draw(bool final_line);
  std::string label_;
  uint64_t total_;
  std::atomic<uint64_t> done_{0};
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::atomic<int> last_decile_{-1};
  bool tty_ = false, finished_ = false;
};

// SIGINT/SIGTERM set a flag instead of killing the process, so long jobs can
// stop between steps and leave no half-written output (see AtomicFileWriter).
void install_interrupt_handler();
bool interrupt_requested();
// Throws Interrupted if the user asked to stop.
void check_interrupt();

// For hosts that keep their own SIGINT handler (the Python module): while any
// capture is alive, SIGINT sets the flag above and then runs the host's
// handler (nothing for the default action: the call stops, the process
// stays), so a long library call stops at its next check and the host still
// sees the signal. The last capture to end restores the host's handler and
// clears the flag. A host that ignores SIGINT keeps ignoring it. Thread-safe.
class InterruptCapture {
 public:
  InterruptCapture();
  ~InterruptCapture();
  InterruptCapture(const InterruptCapture&) = delete;
  InterruptCapture& operator=(const InterruptCapture&) = delete;
};

}  // namespace verity
