#include "actors/workers/dispatch_listener.hpp"

#include "persistence/db.hpp"
#include "persistence/movement_store.hpp"

namespace mg::workers {

struct dispatch_listener::receiver : pqxx::notification_receiver {
  receiver(pqxx::connection& c, const std::string& own_sender, int& count)
      : pqxx::notification_receiver(c, db::dispatch_channel), own_sender_(own_sender),
        count_(count) {}
  void operator()(const std::string& payload, int) override {
    if (payload != own_sender_)
      ++count_;
  }
  const std::string& own_sender_;
  int& count_;
};

dispatch_listener::dispatch_listener(std::string database_url, std::string own_sender)
    : url_(std::move(database_url)), own_sender_(std::move(own_sender)) {}

dispatch_listener::~dispatch_listener() {
  drop();
}

void dispatch_listener::drop() {
  receiver_.reset();
  conn_.reset();
}

pass_result dispatch_listener::pass(int wait_ms) {
  bool fresh = false;
  if (!conn_ || !conn_->is_open()) {
    drop();
    conn_ = db::connect(url_);
    receiver_ = std::make_unique<receiver>(*conn_, own_sender_, received_);
    fresh = true;
  }
  received_ = 0;
  try {
    conn_->await_notification(wait_ms / 1000, (wait_ms % 1000) * 1000);
  } catch (...) {
    drop();
    throw;
  }
  pass_result out;
  out.processed = received_;
  // Work may have become ready while nobody listened (a failover, a
  // restart of this listener): the dispatchers look once.
  out.wake_dispatcher = received_ > 0 || fresh;
  return out;
}

} // namespace mg::workers
