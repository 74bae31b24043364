#include "core/log.hpp"

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <mutex>

namespace verity {
namespace {
std::atomic<bool> g_quiet{false};
volatile std::sig_atomic_t g_interrupt = 0;
std::mutex g_stderr_mutex;

extern "C" void on_signal(int sig) {
  if (g_interrupt) {  // second signal: the user insists
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
  g_interrupt = 1;
}
}  // namespace

void set_quiet(bool q) { g_quiet = q; }
bool quiet() { return g_quiet; }

void log_line(const std::string& message) {
  if (g_quiet) return;
  std::lock_guard lock(g_stderr_mutex);
  std::fprintf(stderr, "%s\n", message.c_str());
}

Progress::Progress(std::string label, uint64_t total)
    : label_(std::move(label)), total_(total), start_(std::chrono::steady_clock::now()) {
  tty_ = ::isatty(STDERR_FILENO);
  last_draw_ = start_;
}

Progress::~Progress() {
  if (!finished_ && tty_ && !g_quiet && done_ > 0) {
    std::lock_guard lock(g_stderr_mutex);
    std::fprintf(stderr, "\n");
  }
}

void Progress::add(uint64_t n) {
  done_ += n;
  if (g_quiet) return;
  auto now = std::chrono::steady_clock::now();
  if (tty_) {
    if (now - last_draw_ > std::chrono::milliseconds(200)) {
      last_draw_ = now;
      draw(false);
    }
  } else if (total_ > 0) {
    int decile = int(10 * done_ / total_);
    int last = last_decile_.load();
    // Only the thread that advances the decile prints it.
    if (decile > last && decile < 10 && last_decile_.compare_exchange_strong(last, decile))
      draw(false);
  }
}

void Progress::draw(bool final_line) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = secs > 0 ? double(done_) / secs : 0.0;
  std::lock_guard lock(g_stderr_mutex);
  if (total_ > 0)
    std::fprintf(stderr, "%s%s: %llu/%llu (%.0f%%) %.1f/s %.1fs%s", tty_ ? "\r" : "",
                 label_.c_str(), (unsigned long long)done_.load(), (unsigned long long)total_,
                 100.0 * double(done_) / double(total_), rate, secs,
                 (tty_ && !final_line) ? "" : "\n");
  else
    std::fprintf(stderr, "%s%s: %llu %.1f/s %.1fs%s", tty_ ? "\r" : "", label_.c_str(),
                 (unsigned long long)done_.load(), rate, secs, (tty_ && !final_line) ? "" : "\n");
  std::fflush(stderr);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!g_quiet) draw(true);
}

void install_interrupt_handler() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

namespace {
std::mutex g_capture_mutex;
size_t g_captures = 0;
struct sigaction g_host_action {};

extern "C" void on_captured_signal(int sig, siginfo_t* info, void* context) {
  g_interrupt = 1;
  if (g_host_action.sa_flags & SA_SIGINFO) {
    if (g_host_action.sa_sigaction) g_host_action.sa_sigaction(sig, info, context);
  } else if (g_host_action.sa_handler != SIG_DFL && g_host_action.sa_handler != SIG_IGN) {
    g_host_action.sa_handler(sig);
  }
}
}  // namespace

InterruptCapture::InterruptCapture() {
  std::lock_guard lock(g_capture_mutex);
  if (g_captures++ > 0) return;
  struct sigaction capture {};
  capture.sa_sigaction = on_captured_signal;
  capture.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&capture.sa_mask);
  sigaction(SIGINT, nullptr, &g_host_action);
  if (!(g_host_action.sa_flags & SA_SIGINFO) && g_host_action.sa_handler == SIG_IGN) return;
  sigaction(SIGINT, &capture, nullptr);
}

InterruptCapture::~InterruptCapture() {
  std::lock_guard lock(g_capture_mutex);
  if (--g_captures > 0) return;
  sigaction(SIGINT, &g_host_action, nullptr);
  g_interrupt = 0;
}

bool interrupt_requested() { return g_interrupt != 0; }
void check_interrupt() {
  VERITY_CHECK(!g_interrupt, Interrupted, "interrupted by signal; no partial output was written");
}

}  // namespace verity
