// InterruptCapture: SIGINT sets the library's flag and still reaches the
// host's handler; the last capture restores the host's handler and clears it.
#include <gtest/gtest.h>
#include <signal.h>

#include "core/log.hpp"

using namespace verity;

namespace {
volatile sig_atomic_t g_host_calls = 0;
extern "C" void host_handler(int) { g_host_calls = g_host_calls + 1; }

struct HostHandler {
  struct sigaction previous {};
  explicit HostHandler(void (*handler)(int)) {
    struct sigaction a {};
    a.sa_handler = handler;
    sigemptyset(&a.sa_mask);
    sigaction(SIGINT, &a, &previous);
  }
  ~HostHandler() { sigaction(SIGINT, &previous, nullptr); }
};
}  // namespace

TEST(InterruptCapture, SetsTheFlagAndChainsToTheHost) {
  HostHandler host(host_handler);
  g_host_calls = 0;
  {
    InterruptCapture outer;
    {
      InterruptCapture inner;  // nested captures share one installation
      EXPECT_FALSE(interrupt_requested());
      raise(SIGINT);
      EXPECT_TRUE(interrupt_requested());
      EXPECT_EQ(g_host_calls, 1);
      EXPECT_THROW(check_interrupt(), Interrupted);
    }
    EXPECT_TRUE(interrupt_requested());  // still inside the outer capture
  }
  EXPECT_FALSE(interrupt_requested());  // the last capture clears it
  raise(SIGINT);                        // the host's handler is back, alone
  EXPECT_EQ(g_host_calls, 2);
  EXPECT_FALSE(interrupt_requested());
}

TEST(InterruptCapture, AnIgnoredSignalStaysIgnored) {
  HostHandler host(SIG_IGN);
  {
    InterruptCapture capture;
    raise(SIGINT);
    EXPECT_FALSE(interrupt_requested());
  }
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_IGN);
}
