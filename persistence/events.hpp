#pragma once
// movement_events rows (and their callback outbox rows) written in the
// transaction of the change that produced them (SPEC §6).
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

struct event {
  std::string event_type;
  std::string request_state;
  std::string node_key;   // "" → null
  std::string node_state; // "" → null
  std::string data = "{}";
};

/// Collects a transaction's events and writes them in one statement.
class event_batch {
public:
  event_batch(std::string request_id, int callback_max_attempts = 5)
      : request_id_(std::move(request_id)), max_attempts_(callback_max_attempts) {}

  void add(event e) { events_.push_back(std::move(e)); }
  void node_changed(const std::string& request_state, const std::string& node_key,
                    const std::string& node_state, std::string data = "{}");
  bool empty() const { return events_.empty(); }
  size_t size() const { return events_.size(); }

  /// Inserts every collected event and, when the request has a
  /// callback_url, its pending outbox row; then forgets them.
  void flush(pqxx::transaction_base& tx);

private:
  std::string request_id_;
  int max_attempts_;
  std::vector<event> events_;
};

} // namespace mg::db
