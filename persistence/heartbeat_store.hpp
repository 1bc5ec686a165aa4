#pragma once
// worker_heartbeats: the DB-visible signal of which workers should be
// running and whether they are (reference "Worker heartbeats").
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

struct heartbeat_key {
  std::string worker_name;
  std::string runtime_node;
  std::string network_class;
};

/// Seeds one row per worker for this process's network class at start
/// (status 'starting', counters reset).
void seed_heartbeats(pqxx::connection& c, const std::vector<std::string>& workers,
                     const std::vector<std::string>& groups, const std::string& runtime_node,
                     const std::string& network_class);

struct heartbeat {
  std::string status;  // running | backing_off | stopped
  long iterations = 0; // since the last beat
  long items = 0;      // since the last beat
  int consecutive_errors = 0;
  std::string last_error;
};

void beat(pqxx::connection& c, const heartbeat_key& key, const heartbeat& h);

} // namespace mg::db
