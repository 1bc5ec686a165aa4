#define BOOST_TEST_MODULE movegate_e2e
#include <boost/test/unit_test.hpp>
