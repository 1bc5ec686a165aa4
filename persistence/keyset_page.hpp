#pragma once
// Keyset pagination shared by the list queries: pages ordered by
// (created_at, id) with an opaque cursor of both.
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "domain/movement_requests.hpp"

namespace mg::db {

/// One page: `items` is a JSON array; `next` is set when more rows follow.
struct json_page {
  std::string items = "[]";
  std::optional<domain::list_cursor> next;
};

/// The cursor as query parameters: both NULL for the first page.
struct keyset {
  std::optional<std::string> micros_text;
  std::optional<std::string> id_text;

  const char* micros() const { return micros_text ? micros_text->c_str() : nullptr; }
  const char* id() const { return id_text ? id_text->c_str() : nullptr; }
};

keyset keyset_of(const std::optional<domain::list_cursor>& after);

/// Rows are (item json, created_at in epoch microseconds, id), fetched with
/// LIMIT limit + 1: a row beyond `limit` means a further page.
json_page page_of(const pqxx::result& rows, int limit);

/// The answer of a list call: {"items": [...], "next_cursor": <opaque or null>}.
std::string page_body(const json_page& page);

} // namespace mg::db
