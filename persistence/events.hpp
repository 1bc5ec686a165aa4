#pragma once
// movement_events rows (and their callback outbox rows) written in the
// transaction of the change that produced them (SPEC §6).
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "domain/states.hpp"

namespace mg::db {

class write_batch;

struct event {
  std::string event_type;
  domain::request_state request_state = domain::request_state::pending_approval;
  std::string node_key; // "" → null
  std::optional<domain::node_state> node_state;
  std::string data = "{}";
};

/// A node_artifacts row whose insert waits for the batch's flush.
struct pending_artifact {
  std::string node_id;
  int attempt_no = 0;
  std::string kind;
  std::string payload_json;
  std::string payload_hash; // "" → null
};

/// Collects a transaction's events (and the artifacts of the same change)
/// and writes them in one statement: a round trip per row kind saved on
/// every node step, in the same transaction, in the order they were added.
/// A batch may also gather the rows of other requests' batches (move_into),
/// so a transaction that writes many requests pays one events statement.
class event_batch {
public:
  event_batch(std::string request_id, int callback_max_attempts)
      : request_id_(std::move(request_id)), max_attempts_(callback_max_attempts) {}

  void add(event e) { events_.push_back({request_id_, std::move(e)}); }
  /// What the writer read of the request's callback_url (set at create,
  /// never changed): without one, the write skips the callback outbox
  /// insert, and with it the outbox's notify trigger. Unset: the outbox
  /// insert runs and keeps only rows of a request with a callback_url.
  void set_has_callback(bool has_callback_url) { has_callback_ = has_callback_url; }
  void node_changed(domain::request_state request_state, const std::string& node_key,
                    domain::node_state node_state, std::string data = "{}");
  /// Appends an artifact (append-only) at the next flush.
  void add_artifact(pending_artifact a) { artifacts_.push_back(std::move(a)); }
  /// Each element of a JSON array of generated artifacts, kind 'generated'.
  void add_generated_artifacts(const std::string& node_id, int attempt_no,
                               const std::string& artifacts_json);
  bool empty() const { return events_.empty() && artifacts_.empty(); }
  size_t size() const { return events_.size(); }

  /// Inserts every collected event and, when the request has a
  /// callback_url, its pending outbox row, and every collected artifact;
  /// then forgets them.
  void flush(pqxx::transaction_base& tx);
  /// The same write, queued on `batch` (sent with the batch's other writes).
  void flush_into(pqxx::transaction_base& tx, write_batch& batch);
  /// Queues on `batch` the insert of the collected artifacts only, and
  /// forgets them: for a read later in the transaction (a claim's context),
  /// while the events wait for a later flush with others.
  void flush_artifacts_into(pqxx::transaction_base& tx, write_batch& batch);
  /// Hands every collected row, in order, to `into`, which writes them
  /// with its own at its flush; then forgets them.
  void move_into(event_batch& into);

private:
  struct request_event {
    std::string request_id;
    event e;
  };
  template <class Run> void write(Run&& run);

  std::string request_id_;
  int max_attempts_;
  std::optional<bool> has_callback_;
  std::vector<request_event> events_;
  std::vector<pending_artifact> artifacts_;
};

} // namespace mg::db
