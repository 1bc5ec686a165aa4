#include "persistence/context_loader.hpp"

#include <algorithm>
#include <map>

#include "domain/json.hpp"
#include "domain/json_writer.hpp"
#include "domain/refs.hpp"
#include "persistence/db.hpp"

namespace mg::db {

namespace {

/// The node's direct predecessors in plan order (the template's node order).
std::vector<std::string> direct_predecessor_keys(const domain::plan& p, const std::string& key) {
  std::vector<std::string> out;
  if (auto i = p.find(key)) {
    std::vector<int> in_plan_order(p.predecessors[*i].begin(), p.predecessors[*i].end());
    std::sort(in_plan_order.begin(), in_plan_order.end());
    for (int j : in_plan_order)
      out.push_back(p.nodes[j].node_key);
  }
  return out;
}

/// Flat merge of objects, later keys win.
void merge_into(json::document& target, const std::string& object_json) {
  auto src = json::parse(object_json);
  if (!src || !src->IsObject())
    return;
  auto& alloc = target.GetAllocator();
  for (auto& m : src->GetObject()) {
    target.RemoveMember(m.name.GetString());
    target.AddMember(json::value(m.name, alloc), json::value(m.value, alloc), alloc);
  }
}

} // namespace

namespace {

/// What the database holds for one node's context: its request's COMPLETED
/// nodes' provider_refs (for $ref) and, for its direct predecessors, their
/// latest attempt's artifacts (a JSON array).
struct completed_rows {
  std::map<std::string, std::string> refs;
  std::map<std::string, std::string> artifacts;
};

/// completed_nodes_sql's answer, parsed.
completed_rows parse_completed(const std::string& completed) {
  completed_rows out;
  auto rows = json::parse_trusted(completed, "completed nodes");
  for (auto& row : rows.GetArray()) {
    std::string key = row[0].GetString();
    out.refs[key] = row[1].GetString();
    out.artifacts[key] = row[2].GetString();
  }
  return out;
}

/// One statement for every node of `wanted`, answered in its order.
std::vector<std::string> read_completed(pqxx::transaction_base& tx,
                                        const std::vector<context_request>& wanted) {
  static const statement q{"mg_context_nodes",
                           "SELECT w.ord, " + std::string(completed_nodes_sql) +
                               " FROM unnest($1::uuid[]) WITH ORDINALITY AS w(id, ord)"
                               " JOIN movement_request_nodes n ON n.id = w.id"
                               " JOIN movement_requests r ON r.id = n.request_id"};
  std::vector<std::string> out(wanted.size(), "[]");
  if (wanted.empty())
    return out;
  std::vector<std::string> ids;
  for (auto& w : wanted)
    ids.push_back(w.node->id);
  for (auto row : exec(tx, q, text_array(ids)))
    out.at(row[0].as<size_t>() - 1) = row[1].c_str();
  return out;
}

context_result assemble_context(const context_request& wanted,
                                const std::vector<std::string>& preds,
                                const completed_rows& completed) {
  context_result out;
  const auto& n = *wanted.node;
  const auto& p = wanted.plan->plan;
  auto index = p.find(n.node_key);
  // provider_context: the completed direct predecessors' provider_refs,
  // merged in plan order, so on a shared key the predecessor listed last in
  // the template wins (deterministic, whatever order SQL returns rows in);
  // prior_artifacts follow the same order.
  json::document provider_context(rapidjson::kObjectType);
  json::document prior(rapidjson::kArrayType);
  for (const auto& key : preds) {
    auto refs = completed.refs.find(key);
    if (refs == completed.refs.end())
      continue;
    merge_into(provider_context, refs->second);
    auto artifacts = json::parse_trusted(completed.artifacts.at(key), "artifacts");
    for (auto& a : artifacts.GetArray())
      prior.PushBack(json::value(a, prior.GetAllocator()), prior.GetAllocator());
  }

  auto& ctx = out.ctx;
  ctx.request_id = n.request_id;
  ctx.request_node_id = n.id;
  ctx.compiled_plan_hash = n.compiled_plan_hash;
  ctx.template_key = n.template_key;
  ctx.template_version = n.template_version;
  ctx.node_key = n.node_key;
  ctx.node_kind = n.node_kind;
  ctx.action_type = n.action_type;
  ctx.attempt_no = wanted.attempt_no;
  ctx.intent = n.intent;
  ctx.input_params = n.input_params;
  ctx.risk_controls = p.risk_controls_json;
  ctx.prior_artifacts = json::dump(prior);
  ctx.provider_context = json::dump(provider_context);
  ctx.provider_refs = n.provider_refs;
  ctx.idempotency_key = n.id + ":" + std::to_string(wanted.attempt_no);
  if (!index) {
    out.error_code = "PLAN_HASH_DRIFT";
    out.error_detail = "node " + n.node_key + " is not in the template";
    return out;
  }
  auto& pn = p.nodes[*index];
  ctx.timeout_policy = pn.timeout_policy_json;
  auto resolved = domain::resolve_refs(pn.config_json, n.input_params, completed.refs);
  if (!resolved.ok) {
    out.error_code = "CONFIG_REF_UNRESOLVED";
    out.error_detail = resolved.error;
    return out;
  }
  ctx.node_config = resolved.config_json;
  ctx.resolved_bindings = json::writer()
                              .begin_object()
                              .member("executor_key", pn.executor_key)
                              .member("signer_key", pn.signer_key)
                              .end_object()
                              .str();
  out.ok = true;
  return out;
}

/// The context of `wanted.node` from what completed_nodes_sql read for it.
context_result context_from_completed(const context_request& wanted, const std::string& completed) {
  auto preds = direct_predecessor_keys(wanted.plan->plan, wanted.node->node_key);
  return assemble_context(wanted, preds, parse_completed(completed));
}

} // namespace

const char* const completed_nodes_sql =
    "(SELECT COALESCE(json_agg(json_build_array(c.node_key, c.provider_refs::text,"
    "  CASE WHEN c.node_key IN (SELECT te.from_key FROM template_edges te"
    "   WHERE te.template_key = r.template_key AND te.version = r.template_version"
    "   AND te.to_key = n.node_key)"
    "  THEN COALESCE((SELECT json_agg(json_build_object('node_key', c.node_key, 'kind', a.kind,"
    "   'attempt_no', a.attempt_no, 'payload', a.payload) ORDER BY a.created_at)"
    "   FROM node_artifacts a WHERE a.node_id = c.id AND a.attempt_no = c.attempt_no), '[]')"
    "  ELSE '[]' END::text)), '[]')::text"
    " FROM movement_request_nodes c WHERE c.request_id = n.request_id"
    "  AND c.node_state = 'COMPLETED')";

std::vector<context_result> build_contexts(pqxx::transaction_base& tx,
                                           const std::vector<context_request>& wanted) {
  std::vector<context_result> out;
  if (wanted.empty())
    return out;
  // What a claim did not read with its node, read in one statement.
  std::vector<context_request> unread;
  for (auto& w : wanted)
    if (!w.node->completed_for_context)
      unread.push_back(w);
  auto read = read_completed(tx, unread);
  size_t next_read = 0;
  for (auto& w : wanted)
    out.push_back(context_from_completed(
        w, w.node->completed_for_context ? *w.node->completed_for_context : read.at(next_read++)));
  return out;
}

context_result build_context(pqxx::transaction_base& tx, const claimed_node& n,
                             const stored_plan& plan, int attempt_no) {
  return std::move(build_contexts(tx, {{&n, &plan, attempt_no}}).front());
}

} // namespace mg::db
