#define BOOST_TEST_MODULE movegate_ha
#include <boost/test/unit_test.hpp>

#include "tests/support/hang_watchdog.hpp"

using mg::test::hang_watchdog;
BOOST_TEST_GLOBAL_FIXTURE(hang_watchdog);
