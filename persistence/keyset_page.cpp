#include "persistence/keyset_page.hpp"

#include <algorithm>

namespace mg::db {

keyset keyset_of(const std::optional<domain::list_cursor>& after) {
  if (!after)
    return {};
  return {std::to_string(after->micros), after->id};
}

json_page page_of(const pqxx::result& rows, int limit) {
  json_page page;
  page.items = "[";
  int n = std::min<int>(limit, static_cast<int>(rows.size()));
  for (int i = 0; i < n; ++i) {
    if (i)
      page.items += ',';
    page.items += rows[i][0].c_str();
  }
  page.items += ']';
  if (static_cast<int>(rows.size()) > limit)
    page.next = domain::list_cursor{rows[n - 1][1].as<long long>(), rows[n - 1][2].c_str()};
  return page;
}

} // namespace mg::db
