#pragma once
// The movement registry's counters, read from its status JSON.
#include <string>

#include <boost/test/unit_test.hpp>

#include "domain/json.hpp"

namespace mg::test {

struct registry_counts {
  long active = -1;
  long started = -1;
};

inline registry_counts parse_registry_counts(const std::string& status) {
  registry_counts c;
  auto doc = json::parse(status);
  if (!doc) {
    BOOST_ERROR("registry status is not JSON: " << status);
    return c;
  }
  c.active = (*doc)["active_movements"].GetInt64();
  c.started = (*doc)["started_movements"].GetInt64();
  return c;
}

} // namespace mg::test
