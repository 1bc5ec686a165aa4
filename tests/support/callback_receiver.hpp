#pragma once
// A real local HTTP callback receiver for the callback tests: an
// httplib::Server on 127.0.0.1 that records every delivery (headers, body,
// arrival) and can fail the first N attempts or answer slowly.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace mg::test {

struct received_callback {
  httplib::Headers headers;
  std::string body;
  int answered = 0; // the status the receiver answered
  std::chrono::steady_clock::time_point at;

  std::string header(const std::string& name) const {
    auto it = headers.find(name); // httplib::Headers compares case-insensitively
    return it == headers.end() ? std::string() : it->second;
  }
};

class callback_receiver {
public:
  /// Fails (HTTP 500) the first `fail_first` deliveries; each delivery
  /// waits `delay` before answering. port 0 picks a free port.
  explicit callback_receiver(int fail_first = 0,
                             std::chrono::milliseconds delay = std::chrono::milliseconds(0),
                             int port = 0)
      : fail_first_(fail_first), delay_(delay) {
    server_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
      if (delay_.count() > 0)
        std::this_thread::sleep_for(delay_);
      std::lock_guard<std::mutex> lock(mutex_);
      received_callback r{req.headers, req.body, 0, std::chrono::steady_clock::now()};
      bool fail = static_cast<int>(all_.size()) < fail_first_;
      r.answered = fail ? 500 : 200;
      res.status = r.answered;
      res.set_content(fail ? "{\"error\":\"not yet\"}" : "{}", "application/json");
      all_.push_back(std::move(r));
    });
    port_ = port == 0 ? server_.bind_to_any_port("127.0.0.1")
                      : (server_.bind_to_port("127.0.0.1", port) ? port : -1);
    if (port_ <= 0)
      throw std::runtime_error("callback receiver: cannot bind");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~callback_receiver() {
    server_.stop();
    if (thread_.joinable())
      thread_.join();
  }

  int port() const { return port_; }
  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<received_callback> received() {
    std::lock_guard<std::mutex> lock(mutex_);
    return all_;
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return all_.size();
  }

private:
  httplib::Server server_;
  int fail_first_;
  std::chrono::milliseconds delay_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<received_callback> all_;
};

} // namespace mg::test
