#include "persistence/keyset_page.hpp"

#include <algorithm>

#include "domain/json_writer.hpp"

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

std::string page_body(const json_page& page) {
  json::writer w;
  w.begin_object().key("items").raw(page.items).key("next_cursor");
  if (page.next)
    w.string(domain::encode_cursor(*page.next));
  else
    w.null();
  return w.end_object().str();
}

} // namespace mg::db
