#pragma once
// A shard's request writer: group-commits the node results and reconciles its
// movement actors hand over (SPEC §1), one transaction for everything
// gathered while the previous flush was in flight.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "actors/loop_runner.hpp"
#include "actors/protocol.hpp"
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::actors {

/// How often a request another transaction holds is tried again while
/// nothing else comes in.
inline constexpr auto held_request_retry = std::chrono::milliseconds(20);
/// Attempts of one batch that end in a deadlock or a lost connection.
inline constexpr int writer_flush_attempts = 3;

/// A reconcile (no result) or a node result with its request's reconcile.
struct writer_item {
  std::string request_id;
  handed_result_ptr result;
  caf::typed_response_promise<bool> reply;
  std::chrono::steady_clock::time_point since;
};

struct request_writer_state {
  static inline const char* name = "request-writer";
  std::unique_ptr<db::connection_slot> conn;
  std::vector<writer_item> pending;
  bool flush_queued = false; // a flush message is in the mailbox
  bool retry_armed = false;  // a delayed flush for held requests is on its way
  long flushes = 0;
  long commits = 0;
  long retries = 0;
  long reconciled = 0;
  long results = 0; // node results written
  long stale = 0;   // node results dropped: their node had moved on
};

request_writer_actor::behavior_type
request_writer(request_writer_actor::stateful_pointer<request_writer_state> self,
               std::shared_ptr<workers::engine_context> ctx, std::string database_url,
               std::shared_ptr<runtime_links> links, bool wakeups);

} // namespace mg::actors
