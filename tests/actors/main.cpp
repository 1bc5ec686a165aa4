#define BOOST_TEST_MODULE movegate_actors
#include <boost/test/unit_test.hpp>
