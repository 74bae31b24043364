// The one translation unit that includes httplib (see server.hpp for the API).
// httplib parses each complete request, routes it and writes the response into a
// buffer; it never touches a socket: serve/connection_loop.cpp owns those.
#include "serve/server.hpp"

#include <httplib.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <regex>
#include <set>

#include "core/error.hpp"
#include "core/log.hpp"
#include "serve/connection_loop.hpp"
#include "serve/detail/request_json.hpp"
#include "serve/endpoints.hpp"

namespace verity::serve {
namespace {
using detail::json;

// httplib's request parser and router, run on a request already in memory.
class HttpCore : public httplib::Server {
 public:
  bool handle(httplib::Stream& stream, bool last, bool& closed) {
    return process_request(stream, last, closed, nullptr);
  }
};

// One received request in, the response bytes out.
class BufferStream final : public httplib::Stream {
 public:
  BufferStream(std::string_view in, std::string& out) : in_(in), out_(out) {}
  bool is_readable() const override { return pos_ < in_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    size = std::min(size, in_.size() - pos_);
    std::memcpy(ptr, in_.data() + pos_, size);
    pos_ += size;
    return ssize_t(size);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    return ssize_t(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip.clear();
    port = 0;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip.clear();
    port = 0;
  }
  socket_t socket() const override { return INVALID_SOCKET; }  // no socket behind it

 private:
  std::string_view in_;
  size_t pos_ = 0;
  std::string& out_;
};

std::string default_error_message(int status) {
  switch (status) {
    case 400: return "bad request: the HTTP request could not be parsed";
    case 404: return "not found";
    case 413: return "request body too large";
    case 414: return "request URI too long";
    default: return cat("HTTP error ", status);
  }
}

void reply(httplib::Response& res, const Reply& r) {
  res.status = r.status;
  res.set_content(r.body, "application/json");
}

// A listening TCP socket on host:port (non-blocking). SO_REUSEADDR only: with
// SO_REUSEPORT a second server could bind the same port and silently take half
// the connections; a busy port must be an error instead.
int open_listener(const std::string& host, int port, int& bound_port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) return -1;
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  bound_port = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                          : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return fd;
}

// Every connection, the refused ones, the workers and the process's other files
// need a descriptor: raise the soft limit if the hard one allows, else refuse.
void reserve_descriptors(const ServerOptions& o) {
  const rlim_t needed = rlim_t(o.max_connections + o.threads + 256);
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= needed) return;
  if (lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= needed) {
    lim.rlim_cur = needed;
    if (::setrlimit(RLIMIT_NOFILE, &lim) == 0) return;
  }
  throw ConfigError(cat("max_connections=", o.max_connections, " needs about ", needed,
                        " file descriptors but the process may open ", lim.rlim_max,
                        " (raise 'ulimit -n' or lower --max-connections)"));
}
}  // namespace

void validate(const ServerOptions& o) {
  VERITY_CHECK(o.port >= 0 && o.port <= 65535, ConfigError, "port must be in [0, 65535], got ", o.port);
  VERITY_CHECK(!o.host.empty(), ConfigError, "host must not be empty");
  VERITY_CHECK(o.max_body_bytes > 0, ConfigError, "max_body_bytes must be positive");
  VERITY_CHECK(o.max_k > 0, ConfigError, "max_k must be positive");
  VERITY_CHECK(o.max_query_chars > 0, ConfigError, "max_query_chars must be positive");
  VERITY_CHECK(o.max_candidates > 0, ConfigError, "max_candidates must be positive");
  VERITY_CHECK(o.threads > 0 && o.threads <= 1024, ConfigError, "threads must be in [1, 1024], got ",
               o.threads);
  VERITY_CHECK(o.max_connections > 0 && o.max_connections <= 65536, ConfigError,
               "max_connections must be in [1, 65536], got ", o.max_connections);
  const std::pair<const char*, double> timeouts[] = {{"header_timeout", o.header_timeout_s},
                                                      {"read_timeout", o.read_timeout_s},
                                                      {"idle_timeout", o.idle_timeout_s},
                                                      {"write_timeout", o.write_timeout_s},
                                                      {"request_timeout", o.request_timeout_s}};
  for (const auto& [name, v] : timeouts)
    VERITY_CHECK(v > 0 && v <= 3600, ConfigError, name, " must be in (0, 3600] seconds, got ", v);
  search::validate(o.pipeline);
  if (!o.cache_db.empty()) cache::validate(o.cache);
}

struct Server::Impl {
  ServerOptions opt;
  std::unique_ptr<Endpoints> endpoints;
  std::vector<Route> routes;
  HttpCore http;
  int port = 0;
  std::unique_ptr<ConnectionLoop> loop;

  std::mutex run_lock;
  std::condition_variable run_done;
  bool stop_requested = false, loop_active = false;

  size_t served() const { return loop ? loop->responses() : 0; }

  std::string process(std::string_view request, bool last, bool& close) {
    std::string out;
    BufferStream stream(request, out);
    bool closed = false;
    http.handle(stream, last, closed);
    const size_t head_end = out.find("\r\n\r\n");
    close = closed || last || out.substr(0, head_end).find("\r\nConnection: close\r\n") != std::string::npos;
    if (out.empty()) {  // httplib wrote nothing (cannot happen for a framed request)
      close = true;
      return http_response(400, detail::error_reply(400, default_error_message(400)).body, true);
    }
    return out;
  }

  void install_routes() {
    http.set_payload_max_length(opt.max_body_bytes);
    http.set_keep_alive_max_count(1000);
    http.set_keep_alive_timeout(std::max<time_t>(1, time_t(opt.idle_timeout_s)));  // advertised only

    // 405 for a known path with the wrong method. These are ordinary routes, not a
    // pre-routing hook: httplib reads a request's body only before ordinary routes.
    // httplib matches paths as regular expressions: an exact path is escaped, and a
    // trailing "/{id}" becomes one captured segment.
    std::map<std::string, std::set<std::string>> methods;  // by path as written
    std::map<std::string, std::string> patterns;
    std::string listing;
    for (const auto& r : routes) {
      VERITY_CHECK(r.method == "GET" || r.method == "POST" || r.method == "DELETE", ConfigError, "route ", r.path,
                   ": method must be GET, POST or DELETE, got ", r.method);
      VERITY_CHECK(methods[r.path].insert(r.method).second, ConfigError, "route ", r.method, " ", r.path,
                   " is defined twice");
      listing += cat(listing.empty() ? "" : ", ", r.method, " ", r.path);
      const bool with_param = r.path.ends_with("/{id}");
      const std::string exact = with_param ? r.path.substr(0, r.path.size() - 4) : r.path;
      std::string& pattern = patterns[r.path];
      pattern = std::regex_replace(exact, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
      if (with_param) pattern += "([^/]+)";
      auto answer = [fn = r.handle, with_param](const httplib::Request& req, std::string_view body,
                                                httplib::Response& res) {
        Request request{body, {}};
        if (with_param) request.param = std::string_view(req.matches[1].first, req.matches[1].second);
        reply(res, fn(request));
      };
      auto handler = [answer](const httplib::Request& req, httplib::Response& res) { answer(req, req.body, res); };
      // A POST body is read through a content reader: httplib then skips its own
      // form parsing, which caps a body sent as application/x-www-form-urlencoded
      // (curl -d's default) at 8 KiB, under --max-body. The body is JSON whatever
      // the type says; set_payload_max_length still bounds it.
      auto post_handler = [answer](const httplib::Request& req, httplib::Response& res,
                                   const httplib::ContentReader& read) {
        std::string body;
        read([&body](const char* data, size_t size) {
          body.append(data, size);
          return true;
        });
        answer(req, body, res);
      };
      if (r.method == "GET") http.Get(pattern, handler);  // HEAD too
      if (r.method == "POST") http.Post(pattern, httplib::Server::HandlerWithContentReader(post_handler));
      if (r.method == "DELETE") http.Delete(pattern, handler);
    }
    for (const auto& entry : methods) {
      const std::string& path = entry.first;  // (clang 14 cannot capture structured bindings)
      const auto& allowed_set = entry.second;
      const std::string& pattern = patterns[path];
      std::string allowed;
      for (const auto& m : allowed_set) allowed += cat(allowed.empty() ? "" : ", ", m, m == "GET" ? ", HEAD" : "");
      auto refuse = [path, allowed](const httplib::Request& req, httplib::Response& res) {
        res.set_header("Allow", allowed);
        reply(res, detail::error_reply(
                       405, cat("method ", req.method, " not allowed on ", path, " (allowed: ", allowed, ")")));
      };
      if (!allowed_set.count("POST")) http.Post(pattern, refuse);
      if (!allowed_set.count("GET")) http.Get(pattern, refuse);
      if (!allowed_set.count("DELETE")) http.Delete(pattern, refuse);
      http.Put(pattern, refuse);
      http.Patch(pattern, refuse);
      http.Options(pattern, refuse);
    }
    // httplib's own errors (404 unknown path, 413 body too large, 400 unparsable HTTP)
    // arrive here with an empty body: give them the same JSON shape.
    http.set_error_handler(httplib::Server::HandlerWithResponse(
        [listing](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          std::string message = default_error_message(res.status);
          // A request httplib could not parse: what the client meant is unknown, so end
          // the connection rather than guess where its next request starts.
          if (res.status == 400) res.set_header("Connection", "close");
          if (res.status == 404)
            message = cat("no such endpoint: ", req.method, " ", req.path, " (endpoints: ", listing, ")");
          reply(res, detail::error_reply(res.status, message));
          return httplib::Server::HandlerResponse::Handled;
        }));
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string message = "internal error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        message = cat("internal error: ", e.what());
      } catch (...) {
      }
      reply(res, detail::error_reply(500, message));
    });
  }
};

Server::Server(std::string index_dir, ServerOptions options, std::vector<Route> extra_routes)
    : impl_(std::make_unique<Impl>()) {
  validate(options);
  auto& m = *impl_;
  m.opt = std::move(options);
  m.endpoints = std::make_unique<Endpoints>(std::move(index_dir), m.opt);
  m.routes = m.endpoints->routes([&m] { return m.served(); });
  for (auto& r : extra_routes) m.routes.push_back(std::move(r));
  m.install_routes();
}

Server::~Server() {
  stop();
  std::unique_lock lock(impl_->run_lock);
  impl_->run_done.wait(lock, [&] { return !impl_->loop_active; });
}

int Server::bind() {
  auto& m = *impl_;
  VERITY_CHECK(m.port == 0, ConfigError, "server already bound to ", m.opt.host, ":", m.port);
  reserve_descriptors(m.opt);
  int port = 0;
  int fd = open_listener(m.opt.host, m.opt.port, port);
  VERITY_CHECK(fd >= 0, Error, "cannot listen on ", m.opt.host, ":", m.opt.port,
               " (address in use, not local, or not permitted)");
  LoopOptions lo;
  lo.threads = m.opt.threads;
  lo.max_connections = m.opt.max_connections;
  lo.header_timeout_s = m.opt.header_timeout_s;
  lo.read_timeout_s = m.opt.read_timeout_s;
  lo.idle_timeout_s = m.opt.idle_timeout_s;
  lo.write_timeout_s = m.opt.write_timeout_s;
  lo.request_timeout_s = m.opt.request_timeout_s;
  lo.framing.max_body_bytes = m.opt.max_body_bytes;
  m.loop = std::make_unique<ConnectionLoop>(
      fd, lo, [&m](std::string_view request, bool last, bool& close) { return m.process(request, last, close); });
  m.port = port;
  return port;
}

void Server::run() {
  auto& m = *impl_;
  VERITY_CHECK(m.port > 0, ConfigError, "Server::run() needs bind() first");
  {
    std::lock_guard lock(m.run_lock);
    if (m.stop_requested) return;
    m.loop_active = true;
  }
  auto finished = [&m] {
    {
      std::lock_guard lock(m.run_lock);
      m.loop_active = false;
    }
    m.run_done.notify_all();
  };
  try {
    m.loop->run();
  } catch (...) {
    finished();
    throw;
  }
  finished();
}

void Server::stop() {
  auto& m = *impl_;
  std::lock_guard lock(m.run_lock);
  m.stop_requested = true;
  if (m.loop) m.loop->stop();
}

int Server::port() const { return impl_->port; }
size_t Server::requests_served() const { return impl_->served(); }
size_t Server::open_connections() const { return impl_->loop ? impl_->loop->connections() : 0; }

}  // namespace verity::serve
