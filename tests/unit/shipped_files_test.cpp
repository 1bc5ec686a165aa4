// Where movegate finds the files it ships. The installed layout (beside the
// binary under share/movegate) is checked by tests/package on a real install.
#include <boost/test/unit_test.hpp>
#include <cstdlib>

#include "config/shipped_files.hpp"

using mg::config::shipped_dir;

BOOST_AUTO_TEST_SUITE(shipped_files)

BOOST_AUTO_TEST_CASE(the_environment_variable_wins) {
  setenv("MG_TEST_SHIPPED_DIR", "/srv/movegate/migrations", 1);
  BOOST_TEST(shipped_dir("MG_TEST_SHIPPED_DIR", "migrations", "/src/persistence/migrations") ==
             "/srv/movegate/migrations");
  unsetenv("MG_TEST_SHIPPED_DIR");
}

BOOST_AUTO_TEST_CASE(a_build_tree_without_an_installed_layout_uses_the_build_default) {
  unsetenv("MG_TEST_SHIPPED_DIR");
  BOOST_TEST(shipped_dir("MG_TEST_SHIPPED_DIR", "no-such-tree", "/src/templates") ==
             "/src/templates");
  // Set but empty counts as unset (a blank line in an env file).
  setenv("MG_TEST_SHIPPED_DIR", "", 1);
  BOOST_TEST(shipped_dir("MG_TEST_SHIPPED_DIR", "no-such-tree", "/src/templates") ==
             "/src/templates");
  unsetenv("MG_TEST_SHIPPED_DIR");
}

BOOST_AUTO_TEST_SUITE_END()
