#include "services/callback_service.hpp"

#include <stdexcept>

#include "domain/json_writer.hpp"
#include "domain/movement_requests.hpp"
#include "persistence/callback_store.hpp"

namespace mg::services {

using namespace api;

reply list_callbacks(db::connection_pool& pool, const std::string& status, int limit,
                     const std::string& cursor) {
  return with_connection(pool, [&](pqxx::connection& c) {
    db::callback_page page;
    try {
      page = db::list_callbacks(c, status, limit, cursor);
    } catch (const std::invalid_argument&) {
      return error_reply(bad_request("invalid cursor", {{"cursor", "not a cursor"}}));
    }
    json::writer body;
    body.begin_object().key("items").begin_array();
    for (const auto& item : page.items)
      body.raw(item);
    body.end_array().member_or_null("next_cursor", page.next_cursor).end_object();
    return reply{200, body.str(), {}};
  });
}

reply redeliver_callback(db::connection_pool& pool, const std::string& id,
                         const std::string& actor) {
  if (!domain::is_uuid(id))
    return error_reply(not_found("no such callback"));
  return with_connection(pool, [&](pqxx::connection& c) {
    auto r = db::redeliver_callback(c, id, actor);
    switch (r.status) {
    case db::redeliver_status::not_found:
      return error_reply(not_found("no such callback"));
    case db::redeliver_status::already_pending:
      return error_reply(conflict("callback is already pending delivery"));
    case db::redeliver_status::done:
      break;
    }
    return reply{200, r.row, {}};
  });
}

} // namespace mg::services
