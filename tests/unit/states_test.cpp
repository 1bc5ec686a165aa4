// Request and node states (SPEC §1): names, transitions, terminal/active.
#include "domain/states.hpp"

#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace mg::domain;

namespace {

using R = request_state;
using N = node_state;

const std::vector<std::pair<R, std::string>> request_names = {
    {R::pending_approval, "PENDING_APPROVAL"},
    {R::approved, "APPROVED"},
    {R::executing, "EXECUTING"},
    {R::waiting_manual_action, "WAITING_MANUAL_ACTION"},
    {R::manual_intervention, "MANUAL_INTERVENTION"},
    {R::completed, "COMPLETED"},
    {R::failed, "FAILED"},
    {R::rejected, "REJECTED"},
    {R::expired, "EXPIRED"},
    {R::cancelled, "CANCELLED"},
};

const std::vector<std::pair<N, std::string>> node_names = {
    {N::blocked, "BLOCKED"},       {N::ready, "READY"},
    {N::preparing, "PREPARING"},   {N::awaiting_signature, "AWAITING_SIGNATURE"},
    {N::submitting, "SUBMITTING"}, {N::submitted, "SUBMITTED"},
    {N::observing, "OBSERVING"},   {N::completed, "COMPLETED"},
    {N::failed, "FAILED"},         {N::unknown, "UNKNOWN"},
    {N::skipped, "SKIPPED"},       {N::cancelled, "CANCELLED"},
};

std::string name(R s) {
  return std::string(to_string(s));
}
std::string name(N s) {
  return std::string(to_string(s));
}

} // namespace

BOOST_AUTO_TEST_SUITE(states)

BOOST_AUTO_TEST_CASE(request_state_names_round_trip) {
  std::set<std::string> seen;
  for (auto& [state, text] : request_names) {
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST(name(state) == text);
      auto parsed = parse_request_state(text);
      BOOST_REQUIRE(parsed.has_value());
      BOOST_TEST(name(*parsed) == text);
      BOOST_TEST((*parsed == state));
      seen.insert(name(state));
    }
  }
  BOOST_TEST(seen.size() == request_names.size());
}

BOOST_AUTO_TEST_CASE(node_state_names_round_trip) {
  std::set<std::string> seen;
  for (auto& [state, text] : node_names) {
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST(name(state) == text);
      auto parsed = parse_node_state(text);
      BOOST_REQUIRE(parsed.has_value());
      BOOST_TEST(name(*parsed) == text);
      BOOST_TEST((*parsed == state));
      seen.insert(name(state));
    }
  }
  BOOST_TEST(seen.size() == node_names.size());
}

BOOST_AUTO_TEST_CASE(unknown_names_do_not_parse) {
  for (std::string bad : {"", "BOGUS", "IN_PROGRESS", "COMPLETED ", " READY", "PENDING"}) {
    BOOST_TEST_CONTEXT("'" << bad << "'") {
      BOOST_TEST(!parse_request_state(bad).has_value());
      BOOST_TEST(!parse_node_state(bad).has_value());
    }
  }
  // Names of the other kind.
  BOOST_TEST(!parse_request_state("BLOCKED").has_value());
  BOOST_TEST(!parse_request_state("UNKNOWN").has_value());
  BOOST_TEST(!parse_node_state("EXECUTING").has_value());
  BOOST_TEST(!parse_node_state("PENDING_APPROVAL").has_value());
}

BOOST_AUTO_TEST_CASE(node_transitions_sample) {
  struct row {
    N from, to;
    bool allowed;
  };
  const row rows[] = {
      {N::blocked, N::ready, true},
      {N::blocked, N::skipped, true},
      {N::blocked, N::cancelled, true},
      {N::blocked, N::submitted, false},
      {N::blocked, N::submitting, false},
      {N::blocked, N::completed, false},
      {N::ready, N::preparing, true},
      {N::ready, N::completed, true}, // manual completion
      {N::ready, N::failed, true},    // max attempts
      {N::ready, N::cancelled, true},
      {N::ready, N::blocked, false},
      {N::ready, N::submitted, false},
      {N::preparing, N::submitting, true},
      {N::preparing, N::awaiting_signature, true},
      {N::awaiting_signature, N::submitting, true},
      {N::submitting, N::submitted, true},
      {N::submitting, N::observing, true},
      {N::submitting, N::completed, true},
      {N::submitting, N::failed, true},
      {N::submitting, N::unknown, true},
      {N::submitting, N::ready, true}, // fencing by recovery
      {N::submitting, N::cancelled, false},
      {N::submitted, N::observing, true},
      {N::submitted, N::completed, true},
      {N::submitted, N::unknown, true},
      {N::submitted, N::ready, false},
      {N::observing, N::completed, true},
      {N::observing, N::failed, true},
      {N::observing, N::blocked, false},
      {N::unknown, N::ready, true}, // fenced after UNKNOWN
      {N::unknown, N::completed, true},
      {N::unknown, N::skipped, false},
      {N::failed, N::ready, true}, // operator retry
      {N::failed, N::completed, false},
      {N::skipped, N::ready, false},
      {N::cancelled, N::ready, false},
  };
  for (auto& r : rows)
    BOOST_TEST_CONTEXT(name(r.from) << " -> " << name(r.to)) {
      BOOST_TEST(transition_allowed(r.from, r.to) == r.allowed);
    }
}

BOOST_AUTO_TEST_CASE(completed_node_never_moves) {
  for (auto& [to, text] : node_names)
    BOOST_TEST_CONTEXT("COMPLETED -> " << text) {
      BOOST_TEST(!transition_allowed(N::completed, to));
    }
}

BOOST_AUTO_TEST_CASE(request_transitions_sample) {
  struct row {
    R from, to;
    bool allowed;
  };
  const row rows[] = {
      {R::pending_approval, R::approved, true},
      {R::pending_approval, R::rejected, true},
      {R::pending_approval, R::expired, true},
      {R::pending_approval, R::cancelled, true},
      {R::pending_approval, R::executing, false},
      {R::pending_approval, R::completed, false},
      {R::approved, R::executing, true},
      {R::approved, R::waiting_manual_action, true},
      {R::approved, R::pending_approval, false},
      {R::executing, R::completed, true},
      {R::executing, R::failed, true},
      {R::executing, R::manual_intervention, true},
      {R::executing, R::waiting_manual_action, true},
      {R::executing, R::approved, false},
      {R::executing, R::pending_approval, false},
      {R::waiting_manual_action, R::executing, true},
      {R::waiting_manual_action, R::completed, true},
      {R::manual_intervention, R::executing, true}, // resume / retry
      {R::manual_intervention, R::completed, false},
      {R::failed, R::executing, true}, // operator retry
      {R::failed, R::completed, false},
      {R::completed, R::executing, false},
      {R::rejected, R::approved, false},
      {R::expired, R::approved, false},
      {R::cancelled, R::executing, false},
  };
  for (auto& r : rows)
    BOOST_TEST_CONTEXT(name(r.from) << " -> " << name(r.to)) {
      BOOST_TEST(transition_allowed(r.from, r.to) == r.allowed);
    }
}

BOOST_AUTO_TEST_CASE(completed_request_never_moves) {
  for (auto from : {R::completed, R::rejected, R::expired, R::cancelled})
    for (auto& [to, text] : request_names)
      BOOST_TEST_CONTEXT(name(from) << " -> " << text) {
        BOOST_TEST(!transition_allowed(from, to));
      }
}

BOOST_AUTO_TEST_CASE(request_terminal_and_active) {
  for (auto& [s, text] : request_names) {
    bool terminal = s == R::completed || s == R::failed || s == R::rejected || s == R::expired ||
                    s == R::cancelled;
    bool active = s == R::approved || s == R::executing || s == R::waiting_manual_action;
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST(is_terminal(s) == terminal);
      BOOST_TEST(is_active(s) == active);
      BOOST_TEST(!(is_terminal(s) && is_active(s)));
    }
  }
}

BOOST_AUTO_TEST_CASE(node_terminal_and_submitted_in_flight) {
  for (auto s : {N::completed, N::skipped, N::cancelled})
    BOOST_TEST_CONTEXT(name(s)) {
      BOOST_TEST(is_terminal(s));
    }
  for (auto s : {N::blocked, N::ready, N::preparing, N::awaiting_signature, N::submitting,
                 N::submitted, N::observing, N::unknown})
    BOOST_TEST_CONTEXT(name(s)) {
      BOOST_TEST(!is_terminal(s));
    }

  for (auto& [s, text] : node_names) {
    bool in_flight = s == N::submitting || s == N::submitted || s == N::observing;
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST(is_submitted_in_flight(s) == in_flight);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
