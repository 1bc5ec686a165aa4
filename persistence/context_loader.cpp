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

context_result build_context(pqxx::transaction_base& tx, const claimed_node& n,
                             const stored_plan& stored, int attempt_no) {
  context_result out;
  auto& p = stored.plan;
  auto index = p.find(n.node_key);
  auto preds = direct_predecessor_keys(p, n.node_key);
  // Completed nodes' provider_refs (for $ref) and, for direct predecessors,
  // their latest attempt's artifacts.
  static const statement q{
      "mg_context_nodes",
      "SELECT n.node_key, n.provider_refs::text,"
      " CASE WHEN n.node_key = ANY($2::text[]) THEN COALESCE((SELECT json_agg(json_build_object("
      "   'node_key', n.node_key, 'kind', a.kind, 'attempt_no', a.attempt_no,"
      "   'payload', a.payload) ORDER BY a.created_at) FROM node_artifacts a"
      "   WHERE a.node_id = n.id AND a.attempt_no = n.attempt_no), '[]') ELSE '[]' END::text"
      " FROM movement_request_nodes n WHERE n.request_id = $1 AND n.node_state = 'COMPLETED'"};
  auto rows = exec(tx, q, n.request_id, text_array(preds));
  std::map<std::string, std::string> completed_refs;
  std::map<std::string, std::string> completed_artifacts;
  for (auto row : rows) {
    completed_refs[row[0].c_str()] = row[1].c_str();
    completed_artifacts[row[0].c_str()] = row[2].c_str();
  }
  // provider_context: the completed direct predecessors' provider_refs,
  // merged in plan order, so on a shared key the predecessor listed last in
  // the template wins (deterministic, whatever order SQL returns rows in);
  // prior_artifacts follow the same order.
  json::document provider_context(rapidjson::kObjectType);
  json::document prior(rapidjson::kArrayType);
  for (const auto& key : preds) {
    auto refs = completed_refs.find(key);
    if (refs == completed_refs.end())
      continue;
    merge_into(provider_context, refs->second);
    auto artifacts = json::parse_trusted(completed_artifacts[key], "artifacts");
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
  ctx.attempt_no = attempt_no;
  ctx.intent = n.intent;
  ctx.input_params = n.input_params;
  ctx.risk_controls = p.risk_controls_json;
  ctx.prior_artifacts = json::dump(prior);
  ctx.provider_context = json::dump(provider_context);
  ctx.provider_refs = n.provider_refs;
  ctx.idempotency_key = n.id + ":" + std::to_string(attempt_no);
  if (!index) {
    out.error_code = "PLAN_HASH_DRIFT";
    out.error_detail = "node " + n.node_key + " is not in the template";
    return out;
  }
  auto& pn = p.nodes[*index];
  ctx.timeout_policy = pn.timeout_policy_json;
  auto resolved = domain::resolve_refs(pn.config_json, n.input_params, completed_refs);
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

} // namespace mg::db
