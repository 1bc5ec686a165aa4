#define BOOST_TEST_MODULE movegate_db
#include <boost/test/unit_test.hpp>
