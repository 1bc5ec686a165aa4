#include "http/guarded_server.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "http/framing.hpp"
#include "http/server_common.hpp"

namespace mg::http {

namespace {

using clock = std::chrono::steady_clock;

/// What a request's handling tells the connection loop.
struct connection_state {
  bool close = false;
  bool timed_out = false;
};
thread_local connection_state* current_connection = nullptr;

/// Headers (request line included) read for one request beyond its body.
constexpr size_t max_header_bytes = 64 * 1024;
/// Polls are cut in slices so that a stopping server is seen promptly.
constexpr int poll_slice_ms = 200;

/// A socket read against one deadline per request (not per recv) and a byte
/// budget, written with a timeout per write. Bytes read ahead stay buffered
/// across the requests of a connection.
class deadline_stream : public httplib::Stream {
public:
  deadline_stream(socket_t sock, const std::atomic<socket_t>& listener,
                  std::chrono::milliseconds write_timeout)
      : sock_(sock), listener_(listener), write_timeout_(write_timeout) {}

  void begin_request(clock::time_point deadline, size_t budget, connection_state* state) {
    deadline_ = deadline;
    budget_ = budget;
    state_ = state;
  }

  /// Waits until a byte is buffered or readable; false at the deadline.
  bool wait_readable(clock::time_point until) { return off_ < size_ || wait(POLLIN, until); }

  bool is_readable() const override { return off_ < size_ || wait(POLLIN, deadline_); }
  bool is_writable() const override { return wait(POLLOUT, clock::now() + write_timeout_); }

  ssize_t read(char* ptr, size_t size) override {
    if (size == 0)
      return 0;
    if (budget_ == 0)
      return -1; // more than a request may send: httplib answers 400, we close
    size = std::min(size, budget_);
    if (off_ == size_) {
      if (!wait(POLLIN, deadline_)) {
        if (state_ && clock::now() >= deadline_)
          state_->timed_out = true;
        return -1;
      }
      ssize_t n;
      do
        n = ::recv(sock_, buffer_, sizeof buffer_, 0);
      while (n < 0 && errno == EINTR);
      if (n <= 0)
        return n;
      off_ = 0;
      size_ = static_cast<size_t>(n);
    }
    size_t take = std::min(size, size_ - off_);
    std::copy(buffer_ + off_, buffer_ + off_ + take, ptr);
    off_ += take;
    budget_ -= take;
    return static_cast<ssize_t>(take);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable())
      return -1;
    ssize_t n;
    do
      n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      name_of(addr, len, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      name_of(addr, len, ip, port);
  }
  socket_t socket() const override { return sock_; }

private:
  static void name_of(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
    char host[NI_MAXHOST];
    char serv[NI_MAXSERV];
    if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, serv,
                      sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      ip = host;
      port = std::atoi(serv);
    }
  }

  /// poll in slices until `events`, the deadline, or the listener stopping.
  bool wait(short events, clock::time_point until) const {
    for (;;) {
      if (listener_ == INVALID_SOCKET)
        return false;
      auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock::now()).count();
      if (left <= 0)
        return false;
      pollfd p{sock_, events, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, poll_slice_ms)));
      if (r > 0)
        return (p.revents & (events | POLLHUP | POLLERR)) != 0;
      if (r < 0 && errno != EINTR)
        return false;
    }
  }

  socket_t sock_;
  const std::atomic<socket_t>& listener_;
  std::chrono::milliseconds write_timeout_;
  clock::time_point deadline_ = clock::now();
  size_t budget_ = 0;
  connection_state* state_ = nullptr;
  char buffer_[4096];
  size_t off_ = 0;
  size_t size_ = 0;
};

/// Threads made on demand, up to `max`: idle ones cost nothing but their
/// stack, and a burst of slow clients gets threads instead of a queue.
class elastic_pool : public httplib::TaskQueue {
public:
  explicit elastic_pool(size_t max) : max_(max) {}
  ~elastic_pool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && threads_.size() < max_)
      threads_.emplace_back([this] { work(); });
    ready_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_)
      if (t.joinable())
        t.join();
  }

private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ++idle_;
        ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        --idle_;
        if (jobs_.empty())
          return; // stopping
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      fn();
    }
  }

  size_t max_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

/// Closing with unread bytes (a refused body) makes the kernel send a
/// reset, which can destroy the reply before the client reads it: stop
/// writing, drain (and drop) what still comes for a moment, then close.
void linger_and_close(socket_t sock) {
  ::shutdown(sock, SHUT_WR);
  char sink[4096];
  size_t drained = 0;
  auto until = clock::now() + std::chrono::milliseconds(500);
  while (drained < 256 * 1024) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock::now()).count();
    pollfd p{sock, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0)
      break;
    ssize_t n = ::recv(sock, sink, sizeof sink, 0);
    if (n <= 0)
      break;
    drained += static_cast<size_t>(n);
  }
  ::close(sock);
}

bool takes_body(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH";
}

} // namespace

void close_connection_after_reply() {
  if (current_connection)
    current_connection->close = true;
}

bool request_timed_out() {
  return current_connection && current_connection->timed_out;
}

guarded_server::guarded_server(listener_limits limits) {
  apply(limits);
}

void guarded_server::apply(listener_limits limits) {
  limits_ = limits;
  set_payload_max_length(limits.max_body_bytes);
  size_t threads = limits.max_threads;
  new_task_queue = [threads] {
    return new elastic_pool(threads);
  };
  size_t max_body = limits.max_body_bytes;
  auto limit_for = limits.body_limit_for;
  set_pre_routing_handler(
      [max_body, limit_for](const httplib::Request& req, httplib::Response& res) {
        size_t limit = limit_for ? std::min(max_body, limit_for(req.path)) : max_body;
        if (auto refusal = framing_refusal(req.headers, limit)) {
          close_connection_after_reply();
          write_reply(res, api::error_reply(*refusal));
          return HandlerResponse::Handled;
        }
        // Without Content-Length a request has no body (RFC 9112 §6.3), but
        // httplib would read one until the client closes. The request object is
        // httplib's own (not const) and not yet routed: say so explicitly.
        if (takes_body(req.method) && !req.has_header("Content-Length"))
          const_cast<httplib::Request&>(req).set_header("Content-Length", "0");
        return HandlerResponse::Unhandled;
      });
  set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.get_header_value("Connection") == "close")
      close_connection_after_reply();
    if (current_connection && current_connection->close) {
      res.headers.erase("Keep-Alive");
      res.headers.erase("Connection");
      res.set_header("Connection", "close");
    }
  });
}

bool guarded_server::process_and_close_socket(socket_t sock) {
  auto write_timeout =
      std::chrono::seconds(write_timeout_sec_) + std::chrono::microseconds(write_timeout_usec_);
  deadline_stream strm(sock, svr_sock_,
                       std::chrono::duration_cast<std::chrono::milliseconds>(write_timeout));
  auto idle = std::min<std::chrono::milliseconds>(std::chrono::seconds(keep_alive_timeout_sec_),
                                                  limits_.request_timeout);
  bool ok = false;
  for (size_t served = 0; served < keep_alive_max_count_; ++served) {
    // A request's clock starts when the connection is ready for it; the
    // wait for its first byte counts.
    auto started = clock::now();
    if (!strm.wait_readable(started + idle))
      break;
    connection_state state;
    strm.begin_request(started + limits_.request_timeout, limits_.max_body_bytes + max_header_bytes,
                       &state);
    current_connection = &state;
    bool closed_by_client = false;
    ok = process_request(strm, served + 1 == keep_alive_max_count_, closed_by_client, nullptr);
    current_connection = nullptr;
    if (!ok || closed_by_client || state.close || state.timed_out)
      break;
  }
  linger_and_close(sock);
  return ok;
}

} // namespace mg::http
