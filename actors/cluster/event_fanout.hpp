#pragma once
// The per-process event fan-out behind movement_session's subscribe (see
// event_fanout_actor in actors/protocol.hpp).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "actors/protocol.hpp"
#include "persistence/connection_pool.hpp"

namespace mg::actors {

struct event_fanout_config {
  /// How often new movement_events rows are read while someone listens.
  std::chrono::milliseconds poll_interval{100};
  /// Rows read per tick; a full batch reads again at once.
  int batch = 500;
  /// How long a hole in `seq` may hold delivery back: a bigserial value is
  /// taken before its transaction commits, so a lower seq can still appear
  /// after a higher one; a hole older than this is a rolled-back insert.
  std::chrono::milliseconds gap_hold{1000};
  /// Resume backfill cap (rows) per subscribe call.
  int max_backfill = 10000;
};

/// Spawns the fan-out (detached: it reads PostgreSQL through `pool`).
/// `subscribers` mirrors its subscriber count for status output.
event_fanout_actor spawn_event_fanout(caf::local_actor* parent, db::connection_pool& pool,
                                      std::shared_ptr<std::atomic<uint64_t>> subscribers,
                                      event_fanout_config cfg = {});

} // namespace mg::actors
