#include "executors/bounded_http.hpp"

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "domain/url.hpp"

namespace mg::executors {

namespace {

using clock = std::chrono::steady_clock;

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

void set_timeouts(httplib::Client& c, double timeout) {
  auto sec = static_cast<time_t>(timeout);
  auto usec = static_cast<time_t>((timeout - static_cast<double>(sec)) * 1e6);
  c.set_connection_timeout(sec, usec);
  c.set_read_timeout(sec, usec);
  c.set_write_timeout(sec, usec);
}

/// The host the client would resolve: the origin's, without brackets.
std::string host_of(const std::string& origin) {
  return domain::url_host(origin).value_or("");
}

/// Stops `client` once `deadline` passes unless disarmed first; keeps
/// stopping it (a stop during connect has no socket to shut yet).
class watchdog {
public:
  watchdog(httplib::Client& client, clock::time_point deadline)
      : thread_([this, &client, deadline] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (done_.wait_until(lock, deadline, [this] { return finished_; }))
            return;
          fired_ = true;
          while (!done_.wait_for(lock, std::chrono::milliseconds(50), [this] { return finished_; }))
            client.stop();
        }) {}
  ~watchdog() { disarm(); }

  /// Ends the watch; true when the deadline had passed.
  bool disarm() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    done_.notify_all();
    if (thread_.joinable())
      thread_.join();
    return fired_;
  }

private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  bool fired_ = false;
  std::thread thread_;
};

} // namespace

bounded_answer call_bounded(const bounded_call& call) {
  bounded_answer out;
  double deadline_s =
      call.deadline_seconds > 0 ? call.deadline_seconds : 2 * call.timeout_seconds + 0.5;
  httplib::Client client(call.origin);
  set_timeouts(client, call.timeout_seconds);
  client.set_keep_alive(false);
  client.set_follow_location(false);
  if (!call.pinned_address.empty())
    client.set_hostname_addr_map({{host_of(call.origin), call.pinned_address}});

  httplib::Request req;
  req.method = call.method;
  req.path = call.target;
  for (const auto& [name, value] : call.headers)
    req.headers.emplace(name, value);
  if (call.method == "POST") {
    req.body = call.body;
    req.headers.emplace("Content-Type", "application/json");
  }
  bool too_large = false;
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (out.body.size() + n > call.max_answer_bytes) {
      too_large = true;
      return false;
    }
    out.body.append(data, n);
    return true;
  };

  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  auto started = clock::now();
  watchdog dog(client,
               clock::now() + std::chrono::milliseconds(static_cast<long long>(deadline_s * 1000)));
  bool sent = client.send(req, res, err);
  bool late = dog.disarm();
  if (sent && !too_large && !late) {
    out.status = res.status;
    return out;
  }
  out.body.clear();
  if (too_large) {
    out.failed = bounded_answer::failure::too_large;
    out.error = "answer over " + std::to_string(call.max_answer_bytes) + " bytes";
  } else if (late || err == httplib::Error::ConnectionTimeout ||
             // A read or write timeout surfaces as a read or write error.
             std::chrono::duration<double>(clock::now() - started).count() >=
                 call.timeout_seconds * 0.9) {
    out.failed = bounded_answer::failure::timeout;
    out.error = "timeout after " + format_seconds(late ? deadline_s : call.timeout_seconds) +
                " s: " + httplib::to_string(err);
  } else {
    out.failed = bounded_answer::failure::transport;
    out.error = httplib::to_string(err);
  }
  return out;
}

} // namespace mg::executors
