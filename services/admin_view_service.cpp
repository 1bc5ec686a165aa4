#include "services/admin_view_service.hpp"

#include "persistence/keyset_page.hpp"

namespace mg::services {

using namespace api;

reply admin_movements(service_context& ctx, const movement_filter& f) {
  try {
    return with_read_transaction(ctx, [&](pqxx::transaction_base& tx) {
      auto page =
          db::admin_list_movements(tx, f.state, f.template_key, f.created, f.limit, f.cursor);
      return reply{200, db::page_body(page), {}};
    });
  } catch (const pqxx::data_exception&) {
    // Shaped like a time but not one: only the range can be it.
    return error_reply(
        bad_request("invalid query", {{"created_from/created_to", "not a valid time"}}));
  }
}

reply admin_movement(service_context& ctx, const std::string& id) {
  if (!domain::is_uuid(id))
    return error_reply(not_found("no movement " + id));
  return with_read_transaction(ctx, [&](pqxx::transaction_base& tx) {
    auto body = db::admin_movement_json(tx, id);
    return body ? reply{200, *body, {}} : error_reply(not_found("no movement " + id));
  });
}

reply cluster_nodes(service_context& ctx) {
  return with_read_transaction(ctx, [&](pqxx::transaction_base& tx) {
    return reply{200, db::cluster_nodes_json(tx), {}};
  });
}

} // namespace mg::services
