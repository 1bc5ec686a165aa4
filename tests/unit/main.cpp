#define BOOST_TEST_MODULE movegate_unit
#include <boost/test/unit_test.hpp>
