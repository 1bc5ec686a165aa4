#include "services/catalog_service.hpp"

#include <map>
#include <optional>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "config/log.hpp"
#include "domain/catalog_requests.hpp"
#include "domain/evm_address.hpp"
#include "domain/json_writer.hpp"
#include "domain/plan.hpp"
#include "persistence/audit_store.hpp"
#include "persistence/catalog_store.hpp"
#include "persistence/template_store.hpp"

namespace mg::services {

using namespace api;

namespace {

using writer = rapidjson::Writer<rapidjson::StringBuffer>;

void string_field(writer& w, const char* name, const std::string& value) {
  w.Key(name);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

/// "" is written as null.
void nullable_field(writer& w, const char* name, const std::string& value) {
  w.Key(name);
  if (value.empty())
    w.Null();
  else
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

/// `json` is JSON text the database produced.
void raw_field(writer& w, const char* name, const std::string& json) {
  w.Key(name);
  w.RawValue(json.c_str(), json.size(), rapidjson::kObjectType);
}

void write_template(writer& w, const db::template_row& t) {
  w.StartObject();
  string_field(w, "template_key", t.template_key);
  w.Key("version");
  w.Int(t.version);
  string_field(w, "graph_hash", t.graph_hash);
  raw_field(w, "risk_controls", t.risk_controls);
  raw_field(w, "plan", t.plan);
  string_field(w, "created_at", t.created_at);
  w.EndObject();
}

/// A proposal; `published_version` > 0 adds the version it became.
std::string proposal_json(const db::proposal_row& p, int published_version = 0) {
  rapidjson::StringBuffer buf;
  writer w(buf);
  w.StartObject();
  string_field(w, "id", p.id);
  string_field(w, "template_key", p.template_key);
  string_field(w, "state", p.state);
  string_field(w, "proposed_by", p.proposed_by);
  nullable_field(w, "reviewed_by", p.reviewed_by);
  string_field(w, "expires_at", p.expires_at);
  string_field(w, "created_at", p.created_at);
  string_field(w, "updated_at", p.updated_at);
  raw_field(w, "plan", p.plan);
  if (published_version > 0) {
    w.Key("published_version");
    w.Int(published_version);
  }
  w.EndObject();
  return buf.GetString();
}

/// The signers of one key aggregated across processes, posture derived.
void write_signer(writer& w, const std::vector<db::signer_row>& rows) {
  std::vector<domain::signer_observation> seen;
  for (auto& r : rows)
    seen.push_back({r.status == "orphan", r.observed_signer_address});
  auto& expected = rows.front().expected_signer_address;
  w.StartObject();
  string_field(w, "signer_key", rows.front().signer_key);
  nullable_field(w, "expected_signer_address", expected);
  string_field(w, "posture", domain::signer_posture(expected, seen));
  w.Key("processes");
  w.StartArray();
  for (auto& r : rows) {
    w.StartObject();
    string_field(w, "runtime_node", r.runtime_node);
    string_field(w, "health_state", r.health_state);
    nullable_field(w, "observed_signer_address", r.observed_signer_address);
    string_field(w, "status", r.status);
    nullable_field(w, "last_health_checked_at", r.last_health_checked_at);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

/// Rows ordered by key, grouped per key.
std::vector<std::vector<db::signer_row>> by_key(std::vector<db::signer_row> rows) {
  std::vector<std::vector<db::signer_row>> out;
  for (auto& r : rows) {
    if (out.empty() || out.back().front().signer_key != r.signer_key)
      out.emplace_back();
    out.back().push_back(std::move(r));
  }
  return out;
}

reply refused(const char* action, const caller& who, const std::string& subject, const error& e) {
  // Refusals write nothing to the database; the log is their only trace.
  log::info("catalog call refused", {{"action", action},
                                     {"key_id", who.key_id},
                                     {"subject", subject},
                                     {"status", e.status},
                                     {"code", e.code},
                                     {"message", e.message}});
  return error_reply(e);
}

/// Compile errors of a proposed plan, fields prefixed with "plan.", plus a
/// plan whose own template_key is not the proposal's.
std::vector<field_error> plan_problems(const std::string& plan_json,
                                       const std::string& template_key) {
  std::vector<field_error> out;
  auto compiled = domain::compile_plan(plan_json);
  for (auto& e : compiled.errors)
    out.push_back({"plan." + e.field, e.message});
  auto plan = json::parse_trusted(plan_json, "plan");
  auto key = plan.FindMember("template_key");
  if (key != plan.MemberEnd() && key->value.IsString() &&
      json::get_string(plan, "template_key") != template_key)
    out.push_back({"plan.template_key", "must equal template_key"});
  return out;
}

std::string object_json(std::initializer_list<std::pair<const char*, std::string>> members) {
  rapidjson::StringBuffer buf;
  writer w(buf);
  w.StartObject();
  for (auto& [k, v] : members)
    string_field(w, k, v);
  w.EndObject();
  return buf.GetString();
}

} // namespace

reply catalog_service::list_templates(const caller& who, const list_query& q) {
  std::vector<field_error> bad;
  if (!q.state.empty())
    bad.push_back({"state", "templates have no state filter"});
  auto limit = domain::parse_limit(q.limit);
  if (!limit)
    bad.push_back({"limit", "must be an integer from 1 to 200"});
  std::optional<std::string> after = std::string();
  if (!q.cursor.empty() && !(after = domain::decode_key_cursor(q.cursor)))
    bad.push_back({"cursor", "malformed cursor"});
  if (!bad.empty())
    return refused("templates.list", who, "", bad_request("invalid query", std::move(bad)));
  return with_read_transaction(ctx_, [&](pqxx::transaction_base& tx) {
    auto rows = db::latest_templates(tx, *after, *limit + 1);
    tx.commit();
    bool more = static_cast<int>(rows.size()) > *limit;
    if (more)
      rows.pop_back();
    rapidjson::StringBuffer buf;
    writer w(buf);
    w.StartObject();
    w.Key("items");
    w.StartArray();
    for (auto& t : rows)
      write_template(w, t);
    w.EndArray();
    nullable_field(w, "next_cursor",
                   more ? domain::encode_key_cursor(rows.back().template_key) : "");
    w.EndObject();
    return reply{200, buf.GetString(), {}};
  });
}

reply catalog_service::get_template(const caller& who, const std::string& key) {
  return with_read_transaction(ctx_, [&](pqxx::transaction_base& tx) {
    auto versions = db::template_versions(tx, key);
    tx.commit();
    if (versions.empty())
      return refused("templates.get", who, key, not_found("no template '" + key + "'"));
    rapidjson::StringBuffer buf;
    writer w(buf);
    w.StartObject();
    string_field(w, "template_key", key);
    w.Key("latest_version");
    w.Int(versions.front().version);
    w.Key("versions");
    w.StartArray();
    for (auto& t : versions)
      write_template(w, t);
    w.EndArray();
    w.EndObject();
    return reply{200, buf.GetString(), {}};
  });
}

reply catalog_service::propose_template(const caller& who, const json::value& body) {
  constexpr const char* action = "template_proposal.create";
  auto parsed = domain::parse_proposal_body(body);
  if (!parsed.ok())
    return refused(action, who, "", parsed.error);
  auto& p = *parsed.value;
  // The version is assigned at approval; any placeholder compiles the same.
  auto problems = plan_problems(domain::plan_with_version(p.plan, 1), p.template_key);
  if (!problems.empty())
    return refused(action, who, p.template_key,
                   unprocessable("plan does not compile", std::move(problems)));
  return with_transaction(ctx_, [&](pqxx::transaction_base& tx) {
    auto row = db::insert_proposal(tx, p.template_key, p.plan, who.key_id,
                                   ctx_.settings.template_proposal_ttl_seconds);
    db::write_audit(tx, who.key_id, action, "template_proposal:" + row.id,
                    object_json({{"template_key", p.template_key}}));
    tx.commit();
    return reply{201, proposal_json(row), {}};
  });
}

reply catalog_service::approve_proposal(const caller& who, const std::string& id,
                                        const json::value& body) {
  constexpr const char* action = "template_proposal.approve";
  auto parsed = domain::parse_resume_body(body); // `{}`: approval takes no fields
  if (!parsed.ok())
    return refused(action, who, id, parsed.error);
  if (!domain::is_uuid(id))
    return refused(action, who, id, not_found("no template proposal '" + id + "'"));
  return with_transaction(ctx_, [&](pqxx::transaction_base& tx) {
    auto p = db::lock_proposal(tx, id);
    if (!p)
      return refused(action, who, id, not_found("no template proposal '" + id + "'"));
    if (p->proposed_by == who.key_id)
      return refused(action, who, id,
                     forbidden("a proposal cannot be approved by the key that proposed it"));
    db::lock_template_key(tx, p->template_key);
    int version = db::latest_template_version(tx, p->template_key) + 1;
    auto plan = domain::plan_with_version(p->plan, version);
    auto problems = plan_problems(plan, p->template_key);
    if (!problems.empty())
      return refused(action, who, id, unprocessable("plan does not compile", std::move(problems)));
    if (p->state != "pending")
      return refused(action, who, id, conflict("proposal is " + p->state + ", not pending"));
    if (p->expired)
      return refused(action, who, id, conflict("proposal has expired"));
    auto saved = db::save_template(tx, plan);
    if (saved.outcome != db::save_outcome::inserted)
      return refused(action, who, id, conflict("template version could not be published"));
    auto row = db::review_proposal(tx, id, "approved", who.key_id);
    db::write_audit(tx, who.key_id, action, "template_proposal:" + id,
                    json::writer()
                        .begin_object()
                        .member("template_key", p->template_key)
                        .member("version", version)
                        .end_object()
                        .str());
    tx.commit();
    log::info("template published", {{"template_key", p->template_key}, {"version", version}});
    return reply{200, proposal_json(row, version), {}};
  });
}

reply catalog_service::reject_proposal(const caller& who, const std::string& id,
                                       const json::value& body) {
  constexpr const char* action = "template_proposal.reject";
  auto parsed = domain::parse_reason_body(body);
  if (!parsed.ok())
    return refused(action, who, id, parsed.error);
  if (!domain::is_uuid(id))
    return refused(action, who, id, not_found("no template proposal '" + id + "'"));
  return with_transaction(ctx_, [&](pqxx::transaction_base& tx) {
    auto p = db::lock_proposal(tx, id);
    if (!p)
      return refused(action, who, id, not_found("no template proposal '" + id + "'"));
    if (p->state != "pending")
      return refused(action, who, id, conflict("proposal is " + p->state + ", not pending"));
    auto row = db::review_proposal(tx, id, "rejected", who.key_id);
    db::write_audit(
        tx, who.key_id, action, "template_proposal:" + id,
        object_json({{"template_key", p->template_key}, {"reason", parsed.value->reason}}));
    tx.commit();
    return reply{200, proposal_json(row), {}};
  });
}

reply catalog_service::list_executors(const caller&) {
  return with_read_transaction(ctx_, [&](pqxx::transaction_base& tx) {
    auto rows = db::list_executors(tx);
    tx.commit();
    rapidjson::StringBuffer buf;
    writer w(buf);
    w.StartObject();
    w.Key("items");
    w.StartArray();
    for (auto& r : rows) {
      w.StartObject();
      string_field(w, "executor_key", r.executor_key);
      string_field(w, "runtime_node", r.runtime_node);
      string_field(w, "health_state", r.health_state);
      nullable_field(w, "last_health_checked_at", r.last_health_checked_at);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return reply{200, buf.GetString(), {}};
  });
}

reply catalog_service::list_signers(const caller&) {
  return with_read_transaction(ctx_, [&](pqxx::transaction_base& tx) {
    auto groups = by_key(db::list_signers(tx));
    tx.commit();
    rapidjson::StringBuffer buf;
    writer w(buf);
    w.StartObject();
    w.Key("items");
    w.StartArray();
    for (auto& g : groups)
      write_signer(w, g);
    w.EndArray();
    w.EndObject();
    return reply{200, buf.GetString(), {}};
  });
}

reply catalog_service::put_expected_identity(const caller& who, const std::string& signer_key,
                                             const json::value& body) {
  constexpr const char* action = "signer.expected_identity";
  auto parsed = domain::parse_identity_body(body);
  if (!parsed.ok())
    return refused(action, who, signer_key, parsed.error);
  return with_transaction(ctx_, [&](pqxx::transaction_base& tx) {
    if (!db::signer_known(tx, signer_key))
      return refused(action, who, signer_key, not_found("no signer '" + signer_key + "'"));
    auto address = domain::canonical_evm_address(parsed.value->address);
    if (!address)
      return refused(
          action, who, signer_key,
          unprocessable("invalid address", {{"address", "must be 0x followed by 40 hex digits"}}));
    db::set_expected_identity(tx, signer_key, *address);
    db::write_audit(tx, who.key_id, action, "signer:" + signer_key,
                    object_json({{"expected_signer_address", *address}}));
    auto rows = db::list_signers(tx, signer_key);
    tx.commit();
    rapidjson::StringBuffer buf;
    writer w(buf);
    write_signer(w, rows);
    return reply{200, buf.GetString(), {}};
  });
}

} // namespace mg::services
