#define BOOST_TEST_MODULE movegate_e2e
#include <boost/test/unit_test.hpp>

#include <csignal>

#include "tests/support/hang_watchdog.hpp"

using mg::test::hang_watchdog;
BOOST_TEST_GLOBAL_FIXTURE(hang_watchdog);

// A server may close while a test still sends it an oversized body it
// refused: that write must fail with EPIPE, not kill the test process.
struct ignore_sigpipe {
  ignore_sigpipe() { std::signal(SIGPIPE, SIG_IGN); }
};
BOOST_TEST_GLOBAL_FIXTURE(ignore_sigpipe);
