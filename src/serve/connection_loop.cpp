#include "serve/connection_loop.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "core/log.hpp"

namespace verity::serve {
namespace {
using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenerId = 0, kWakeId = 1;
constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kMaxRefusing = 64;                  // 503-and-close connections kept at once
constexpr auto kDrainTime = std::chrono::seconds(1);  // lingering close after an error answer
constexpr auto kSweepEvery = std::chrono::milliseconds(50);
constexpr auto kAcceptPause = std::chrono::milliseconds(100);  // after EMFILE/ENFILE

const char* status_text(int status) {
  switch (status) {
    case 100: return "Continue";
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

// JSON string literal of s (ASCII messages only; anything else is dropped).
std::string json_error(std::string_view message) {
  std::string out = "{\"error\":\"";
  for (char c : message) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c >= 0x20 && c < 0x7f) {
      out += c;
    }
  }
  return out + "\"}";
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
Clock::duration duration(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}
}  // namespace

std::string http_response(int status, std::string_view body, bool close, std::string_view extra_headers) {
  return cat("HTTP/1.1 ", status, " ", status_text(status), "\r\nContent-Type: application/json\r\nContent-Length: ",
             body.size(), "\r\n", close ? "Connection: close\r\n" : "", extra_headers, "\r\n", body);
}

struct ConnectionLoop::Impl {
  enum class State { kReading, kQueued, kWriting, kDraining };
  struct Conn {
    int fd = -1;
    uint64_t id = 0;
    State state = State::kReading;
    bool refused = false;          // answered 503 at the connection limit; not counted as open
    std::string in;                // received, not yet dispatched
    std::string out;               // response being written
    size_t out_pos = 0;
    bool close_after_write = false;
    bool peer_gone = false;        // hung up while its request was queued
    bool request_started = false;  // in holds the start of a request
    bool sent_continue = false;
    size_t header_end = 0;         // of the request being received; 0 = headers incomplete
    size_t requests = 0;           // dispatched on this connection
    Clock::time_point since;       // idle since / request started / write or drain started
    Clock::time_point deadline;    // queued: the request time limit
    uint32_t events = 0;           // epoll interest
  };
  struct Job {
    uint64_t conn = 0;
    std::string request;
    bool last = false;
    Clock::time_point deadline;
  };
  struct Done {
    uint64_t conn = 0;
    std::string response;
    bool close = false;
  };

  int listen_fd = -1, epoll_fd = -1, wake_fd = -1;
  LoopOptions opt;
  RequestProcessor process;

  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns;
  uint64_t next_id = 2;
  size_t open = 0, refusing = 0;
  bool stopping = false, listening = true;
  Clock::time_point accept_paused_until{}, last_sweep{};

  std::atomic<bool> stop_requested{false};
  std::atomic<size_t> answered{0}, open_count{0};

  std::mutex jobs_lock;
  std::condition_variable jobs_ready;
  std::deque<Job> jobs;
  bool workers_exit = false;
  std::vector<std::thread> workers;

  std::mutex done_lock;
  std::vector<Done> done;

  // ---- worker side ----
  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(jobs_lock);
        jobs_ready.wait(lock, [&] { return workers_exit || !jobs.empty(); });
        if (jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      if (Clock::now() > job.deadline) continue;  // the loop has answered 503 already
      bool close = false;
      std::string response;
      try {
        response = process(job.request, job.last, close);
      } catch (const std::exception& e) {  // the processor must not throw; stay alive if it does
        log("serve: request failed: ", e.what());
        response = http_response(500, json_error(cat("internal error: ", e.what())), true);
        close = true;
      }
      ++answered;  // counted before the client can see it
      {
        std::lock_guard lock(done_lock);
        done.push_back({job.conn, std::move(response), close});
      }
      wake();
    }
  }

  void wake() {
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
  }

  // ---- loop side ----
  void watch(Conn& c, uint32_t events) {
    if (c.events == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.id;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
    c.events = events;
  }

  void close_conn(uint64_t id) {
    auto it = conns.find(id);
    if (it == conns.end()) return;
    Conn& c = *it->second;
    if (c.fd >= 0) {
      ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
      ::close(c.fd);
    }
    (c.refused ? refusing : open) -= 1;
    conns.erase(it);
    open_count = open;
  }

  void accept_all(Clock::time_point now) {
    for (;;) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: stop polling the listener for a moment instead of
          // spinning on it; the backlog holds the connections meanwhile.
          log("serve: accept: ", std::strerror(errno), "; pausing accepts");
          accept_paused_until = now + kAcceptPause;
          set_listener(false);
        }
        return;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // headers and body go out in one send
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      c->id = next_id++;
      c->since = now;
      if (open >= opt.max_connections) {
        if (refusing >= kMaxRefusing) {
          ::close(fd);
          continue;
        }
        c->refused = true;
        ++refusing;
        c->out = http_response(503,
                               json_error(cat("server busy: ", opt.max_connections,
                                              " connections are open (--max-connections); retry later")),
                               true, "Retry-After: 1\r\n");
        c->close_after_write = true;
        c->state = State::kWriting;
        ++answered;
      } else {
        ++open;
        open_count = open;
      }
      epoll_event ev{};
      ev.events = c->state == State::kWriting ? EPOLLOUT : EPOLLIN;
      ev.data.u64 = c->id;
      c->events = ev.events;
      ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
      Conn& ref = *c;
      conns.emplace(c->id, std::move(c));
      if (ref.state == State::kWriting) write_some(ref, now);
    }
  }

  void set_listener(bool on) {
    if (listen_fd < 0 || listening == on) return;
    epoll_event ev{};
    ev.events = on ? uint32_t(EPOLLIN) : 0u;
    ev.data.u64 = kListenerId;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
    listening = on;
  }

  // Answers from the loop itself (timeouts, framing errors) and closes afterwards.
  void answer_and_close(Conn& c, int status, std::string_view message, Clock::time_point now) {
    c.in.clear();
    c.out = http_response(status, json_error(message), true);
    c.out_pos = 0;
    c.close_after_write = true;
    c.state = State::kWriting;
    c.since = now;
    ++answered;
    write_some(c, now);
  }

  void read_some(Conn& c, Clock::time_point now) {
    const size_t cap = opt.framing.max_header_bytes + opt.framing.max_body_bytes + kReadChunk;
    char buf[kReadChunk];
    for (;;) {
      if (c.state == State::kReading && c.in.size() >= cap) break;  // framing decides below
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        if (c.state == State::kDraining) continue;  // discarded
        c.in.append(buf, size_t(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      close_conn(c.id);  // EOF or error: nothing more can be answered
      return;
    }
    if (c.state == State::kReading) try_dispatch(c, now);
  }

  // Dispatches the request at the start of c.in if it is complete.
  void try_dispatch(Conn& c, Clock::time_point now) {
    if (!c.request_started) {  // empty lines before a request are ignored (RFC 9112 2.2)
      size_t skip = 0;
      while (c.in.compare(skip, 2, "\r\n") == 0) skip += 2;
      c.in.erase(0, skip);
    }
    if (c.in.empty()) return;
    if (!c.request_started) {
      c.request_started = true;
      c.since = now;
    }
    const Framing f = frame_request(c.in, opt.framing);
    if (f.state == Framing::State::kRejected) {
      answer_and_close(c, f.status, f.reason, now);
      return;
    }
    if (f.state == Framing::State::kIncomplete) {
      c.header_end = f.header_end;
      if (c.in.size() >= opt.framing.max_header_bytes + opt.framing.max_body_bytes + kReadChunk) {
        // Only chunked framing overhead can get here: refuse rather than read on.
        answer_and_close(c, 413, "request too large", now);
        return;
      }
      if (f.header_end && f.expect_continue && !c.sent_continue) {
        static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        [[maybe_unused]] auto n = ::send(c.fd, kContinue.data(), kContinue.size(), MSG_NOSIGNAL);
        c.sent_continue = true;
      }
      return;
    }
    Job job;
    job.conn = c.id;
    job.request = c.in.substr(0, f.length);
    if (f.expect_continue)  // answered here (or moot: the body is in); httplib must not answer again
      job.request.erase(f.expect_begin, f.expect_end - f.expect_begin);
    c.in.erase(0, f.length);
    ++c.requests;
    job.last = stopping || c.requests >= opt.keep_alive_max_requests;
    job.deadline = now + duration(opt.request_timeout_s);
    c.deadline = job.deadline;
    c.state = State::kQueued;
    c.request_started = false;
    c.sent_continue = false;
    c.header_end = 0;
    watch(c, 0);  // nothing more is read until this request is answered
    {
      std::lock_guard lock(jobs_lock);
      jobs.push_back(std::move(job));
    }
    jobs_ready.notify_one();
  }

  void write_some(Conn& c, Clock::time_point now) {
    while (c.out_pos < c.out.size()) {
      ssize_t n = ::send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_pos += size_t(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        watch(c, EPOLLOUT);
        return;
      }
      close_conn(c.id);
      return;
    }
    c.out.clear();
    c.out_pos = 0;
    if (c.close_after_write) {
      // Lingering close: stop sending, read and drop what the client still sends, so
      // its unread request bytes do not turn our close into a reset that loses the answer.
      ::shutdown(c.fd, SHUT_WR);
      c.state = State::kDraining;
      c.since = now;
      watch(c, EPOLLIN);
      return;
    }
    c.state = State::kReading;
    c.since = now;
    watch(c, EPOLLIN);
    try_dispatch(c, now);  // a pipelined request may already be buffered
  }

  void apply_done(Clock::time_point now) {
    std::vector<Done> ready;
    {
      std::lock_guard lock(done_lock);
      ready.swap(done);
    }
    for (auto& d : ready) {
      auto it = conns.find(d.conn);
      if (it == conns.end() || it->second->state != State::kQueued) continue;  // timed out or closed
      Conn& c = *it->second;
      if (c.peer_gone) {
        close_conn(c.id);
        continue;
      }
      c.out = std::move(d.response);
      c.out_pos = 0;
      c.close_after_write = d.close || stopping || c.requests >= opt.keep_alive_max_requests;
      c.state = State::kWriting;
      c.since = now;
      write_some(c, now);
    }
  }

  void sweep(Clock::time_point now) {
    std::vector<uint64_t> ids;
    ids.reserve(conns.size());
    for (const auto& [id, c] : conns) ids.push_back(id);
    for (uint64_t id : ids) {
      auto it = conns.find(id);
      if (it == conns.end()) continue;
      Conn& c = *it->second;
      const double age = seconds(now - c.since);
      switch (c.state) {
        case State::kReading:
          if (!c.request_started) {
            if (age > opt.idle_timeout_s) close_conn(id);
          } else if (age > opt.read_timeout_s) {
            answer_and_close(c, 408, cat("request not received within ", opt.read_timeout_s, " s"), now);
          } else if (age > opt.header_timeout_s && c.header_end == 0) {
            answer_and_close(c, 408, cat("request headers not received within ", opt.header_timeout_s, " s"), now);
          }
          break;
        case State::kQueued:
          if (now > c.deadline) {
            if (c.peer_gone) {
              close_conn(id);
            } else {
              answer_and_close(c, 503, cat("request not answered within ", opt.request_timeout_s,
                                           " s (--request-timeout); retry later"), now);
            }
          }
          break;
        case State::kWriting:
          if (age > opt.write_timeout_s) close_conn(id);
          break;
        case State::kDraining:
          if (now - c.since > kDrainTime) close_conn(id);
          break;
      }
    }
  }

  void begin_stop() {
    stopping = true;
    if (listen_fd >= 0) {
      ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
      ::close(listen_fd);
      listen_fd = -1;
    }
    std::vector<uint64_t> idle;
    for (const auto& [id, c] : conns)
      if (c->state == State::kReading || c->state == State::kDraining) idle.push_back(id);
    for (uint64_t id : idle) close_conn(id);
  }

  bool busy() const {
    for (const auto& [id, c] : conns)
      if (c->state == State::kQueued || c->state == State::kWriting) return true;
    return false;
  }

  void on_event(uint64_t id, uint32_t events, Clock::time_point now) {
    auto it = conns.find(id);
    if (it == conns.end()) return;
    Conn& c = *it->second;
    if (c.state == State::kQueued) {
      // Interest is 0 while queued; only a hang-up or error arrives. Stop watching
      // (level-triggered, it would repeat) and drop the answer when it comes.
      ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
      c.events = 0;
      c.peer_gone = true;
      return;
    }
    if (c.state == State::kWriting) {
      if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) write_some(c, now);
      return;
    }
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) read_some(c, now);
  }

  void loop() {
    std::vector<epoll_event> events(256);
    for (;;) {
      int n = ::epoll_wait(epoll_fd, events.data(), int(events.size()), 50);
      if (n < 0 && errno != EINTR) throw Error(cat("serve: epoll_wait failed: ", std::strerror(errno)));
      const auto now = Clock::now();
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[size_t(i)].data.u64;
        if (id == kListenerId) {
          if (!stopping) accept_all(now);
        } else if (id == kWakeId) {
          uint64_t count;
          [[maybe_unused]] auto r = ::read(wake_fd, &count, sizeof count);
        } else {
          on_event(id, events[size_t(i)].events, now);
        }
      }
      apply_done(now);
      if (stop_requested && !stopping) begin_stop();
      if (!listening && !stopping && now >= accept_paused_until) set_listener(true);
      if (now - last_sweep >= kSweepEvery) {
        sweep(now);
        last_sweep = now;
      }
      if (stopping && !busy()) break;
    }
    std::vector<uint64_t> rest;
    for (const auto& [id, c] : conns) rest.push_back(id);
    for (uint64_t id : rest) close_conn(id);
  }
};

ConnectionLoop::ConnectionLoop(int listen_fd, LoopOptions options, RequestProcessor process)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.listen_fd = listen_fd;
  m.opt = std::move(options);
  m.process = std::move(process);
  m.epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  m.wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  VERITY_CHECK(m.epoll_fd >= 0 && m.wake_fd >= 0, Error, "serve: cannot create epoll/eventfd: ",
               std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerId;
  VERITY_CHECK(::epoll_ctl(m.epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev) == 0, Error,
               "serve: cannot watch the listening socket: ", std::strerror(errno));
  ev.data.u64 = kWakeId;
  ::epoll_ctl(m.epoll_fd, EPOLL_CTL_ADD, m.wake_fd, &ev);
}

ConnectionLoop::~ConnectionLoop() {
  auto& m = *impl_;
  if (m.listen_fd >= 0) ::close(m.listen_fd);
  if (m.epoll_fd >= 0) ::close(m.epoll_fd);
  if (m.wake_fd >= 0) ::close(m.wake_fd);
}

void ConnectionLoop::run() {
  auto& m = *impl_;
  m.workers_exit = false;
  for (size_t i = 0; i < m.opt.threads; ++i) m.workers.emplace_back([&m] { m.work(); });
  auto join_workers = [&m] {
    {
      std::lock_guard lock(m.jobs_lock);
      m.workers_exit = true;
    }
    m.jobs_ready.notify_all();
    for (auto& t : m.workers) t.join();
    m.workers.clear();
  };
  try {
    m.loop();
  } catch (...) {
    join_workers();
    throw;
  }
  join_workers();
}

void ConnectionLoop::stop() {
  impl_->stop_requested = true;
  impl_->wake();
}

size_t ConnectionLoop::responses() const { return impl_->answered.load(); }
size_t ConnectionLoop::connections() const { return impl_->open_count.load(); }

}  // namespace verity::serve
