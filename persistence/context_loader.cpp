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

/// One statement for every node of `wanted`, answered in its order.
std::vector<completed_rows> read_completed(pqxx::transaction_base& tx,
                                           const std::vector<context_request>& wanted,
                                           const std::vector<std::vector<std::string>>& preds) {
  // $2/$3 pair each node (its ordinal) with its direct predecessors' keys.
  static const statement q{
      "mg_context_nodes",
      "SELECT w.ord, n.node_key, n.provider_refs::text,"
      " CASE WHEN (w.ord, n.node_key) IN (SELECT * FROM unnest($2::bigint[], $3::text[]))"
      " THEN COALESCE((SELECT json_agg(json_build_object("
      "   'node_key', n.node_key, 'kind', a.kind, 'attempt_no', a.attempt_no,"
      "   'payload', a.payload) ORDER BY a.created_at) FROM node_artifacts a"
      "   WHERE a.node_id = n.id AND a.attempt_no = n.attempt_no), '[]') ELSE '[]' END::text"
      " FROM unnest($1::uuid[]) WITH ORDINALITY AS w(request_id, ord)"
      " JOIN movement_request_nodes n"
      "   ON n.request_id = w.request_id AND n.node_state = 'COMPLETED'"};
  std::vector<std::string> requests, pred_of, pred_keys;
  for (size_t i = 0; i < wanted.size(); ++i) {
    requests.push_back(wanted[i].node->request_id);
    for (auto& key : preds[i]) {
      pred_of.push_back(std::to_string(i + 1));
      pred_keys.push_back(key);
    }
  }
  std::vector<completed_rows> out(wanted.size());
  for (auto row : exec(tx, q, text_array(requests), text_array(pred_of), text_array(pred_keys))) {
    auto& into = out.at(row[0].as<size_t>() - 1);
    into.refs[row[1].c_str()] = row[2].c_str();
    into.artifacts[row[1].c_str()] = row[3].c_str();
  }
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

} // namespace

std::vector<context_result> build_contexts(pqxx::transaction_base& tx,
                                           const std::vector<context_request>& wanted) {
  std::vector<std::vector<std::string>> preds;
  for (auto& w : wanted)
    preds.push_back(direct_predecessor_keys(w.plan->plan, w.node->node_key));
  std::vector<context_result> out;
  if (wanted.empty())
    return out;
  auto completed = read_completed(tx, wanted, preds);
  for (size_t i = 0; i < wanted.size(); ++i)
    out.push_back(assemble_context(wanted[i], preds[i], completed[i]));
  return out;
}

context_result build_context(pqxx::transaction_base& tx, const claimed_node& n,
                             const stored_plan& plan, int attempt_no) {
  return std::move(build_contexts(tx, {{&n, &plan, attempt_no}}).front());
}

} // namespace mg::db
