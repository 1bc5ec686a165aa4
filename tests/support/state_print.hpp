#pragma once
// A failed BOOST_TEST prints its operands: states print as their names.
#include <ostream>

#include "domain/states.hpp"

namespace mg::domain {

inline std::ostream& operator<<(std::ostream& out, request_state s) {
  return out << to_string(s);
}

inline std::ostream& operator<<(std::ostream& out, node_state s) {
  return out << to_string(s);
}

} // namespace mg::domain
