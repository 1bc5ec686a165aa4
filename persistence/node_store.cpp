#include "persistence/node_store.hpp"

#include <algorithm>
#include <stdexcept>

#include "domain/json.hpp"
#include "domain/provider_answer.hpp"
#include "domain/reconcile.hpp"
#include "persistence/db.hpp"

namespace mg::db {

namespace {

using domain::node_state;

constexpr const char* node_columns =
    "n.id, n.request_id, n.position, n.node_key, n.node_kind, n.action_type, n.executor_key,"
    " COALESCE(n.signer_key, ''), n.side_effect, n.signing_required, n.node_state, n.attempt_no,"
    " COALESCE(n.idempotency_key, ''), n.provider_refs::text, COALESCE(n.claim_token::text, ''),"
    " COALESCE(n.error_code, ''),"
    " COALESCE(extract(epoch FROM clock_timestamp() - n.started_at)::float8, -1),"
    " r.request_state, r.template_key, r.template_version, r.compiled_plan_hash,"
    " r.intent::text, r.input_params::text, n.prepare_errors, r.callback_url IS NOT NULL";

// The dispatch claim also reads the latest predecessor's last change (its
// COMPLETED, for a READY node) for the hop metric: a few primary-key
// lookups, no scan.
const std::string dispatch_columns =
    std::string(node_columns) +
    ", COALESCE((SELECT extract(epoch FROM clock_timestamp() - max(p.updated_at))"
    "  FROM template_edges te JOIN movement_request_nodes p ON p.request_id = n.request_id"
    "   AND p.node_key = te.from_key WHERE te.template_key = r.template_key"
    "   AND te.version = r.template_version AND te.to_key = n.node_key)::float8, -1)"
    " AS since_predecessors";

// Whether a node row may be claimed ($2: network class). A claim puts this
// in its select list, not in its WHERE: a WHERE naming node or request
// states lets the planner pick the state partial indexes, whose statistics
// lag a burst by up to a minute (READY looks empty right after a batch of
// approvals), and then scan every active request per claimed row. A WHERE
// on keys alone always probes the primary keys; a row that is locked but not
// claimable is a miss, released as the claim's scope says.
constexpr const char* dispatch_claimable =
    "n.node_state = 'READY' AND n.action_type NOT LIKE 'manual\\_%'"
    " AND r.request_state IN ('APPROVED', 'EXECUTING') AND r.network_class = $2"
    " AND NOT r.dispatch_paused AND (n.retry_at IS NULL OR n.retry_at <= clock_timestamp())";

claimed_node to_claimed(const pqxx::row& r) {
  claimed_node n;
  n.id = r[0].c_str();
  n.request_id = r[1].c_str();
  n.position = r[2].as<int>();
  n.node_key = r[3].c_str();
  n.node_kind = r[4].c_str();
  n.action_type = r[5].c_str();
  n.executor_key = r[6].c_str();
  n.signer_key = r[7].c_str();
  n.side_effect = r[8].as<bool>();
  n.signing_required = r[9].as<bool>();
  n.node_state = r[10].c_str();
  n.attempt_no = r[11].as<int>();
  n.idempotency_key = r[12].c_str();
  n.provider_refs = r[13].c_str();
  n.claim_token = r[14].c_str();
  n.error_code = r[15].c_str();
  n.seconds_since_started = r[16].as<double>();
  n.request_state = r[17].c_str();
  n.template_key = r[18].c_str();
  n.template_version = r[19].as<int>();
  n.compiled_plan_hash = r[20].c_str();
  n.intent = r[21].c_str();
  n.input_params = r[22].c_str();
  n.prepare_errors = r[23].as<int>();
  n.has_callback = r[24].as<bool>();
  if (r.size() > 25 && std::string(r[25].name()) == "since_predecessors")
    n.seconds_since_predecessors = r[25].as<double>();
  return n;
}

/// The joined claim in `scope` (see claim_scope). The libpqxx 6.4.5
/// subtransaction never sends its SAVEPOINT for exec_params, so the
/// miss-only savepoint is plain SQL.
/// Whether a claim statement's row (its last column is `claimable`) may be
/// claimed.
bool claimable(const pqxx::row& r) {
  return r[r.size() - 1].as<bool>();
}

std::optional<claimed_node> claim_one(pqxx::transaction_base& tx, const statement& q,
                                      const std::string& id, const std::string& network_class,
                                      claim_scope scope) {
  if (scope == claim_scope::first_in_transaction) {
    auto r = exec(tx, q, id, network_class);
    if (r.empty() || !claimable(r[0]))
      return std::nullopt; // the caller ends tx, releasing any lock it took
    return to_claimed(r[0]);
  }
  tx.exec("SAVEPOINT claim");
  auto r = exec(tx, q, id, network_class);
  if (r.empty() || !claimable(r[0])) {
    tx.exec("ROLLBACK TO SAVEPOINT claim");
    return std::nullopt;
  }
  tx.exec("RELEASE SAVEPOINT claim");
  return to_claimed(r[0]);
}

constexpr const char* due_predicate =
    " n.node_state IN ('SUBMITTED', 'OBSERVING') AND r.request_state = 'EXECUTING'"
    " AND (n.next_observe_at IS NULL OR n.next_observe_at <= clock_timestamp())"
    " AND r.network_class = $2";

/// The claim of one node by id: keys only in WHERE (see dispatch_claimable),
/// `claimable_expression` as the last column.
std::string claim_by_id(const std::string& columns, const char* claimable_expression) {
  return "SELECT " + columns + ", (" + claimable_expression +
         ") AS claimable FROM movement_request_nodes n JOIN movement_requests r"
         " ON r.id = n.request_id WHERE n.id = $1 FOR UPDATE OF n, r SKIP LOCKED";
}

} // namespace

std::optional<claimed_node> load_node(pqxx::transaction_base& tx, const std::string& id) {
  static const statement q{"mg_load_node",
                           std::string("SELECT ") + node_columns +
                               " FROM movement_request_nodes n JOIN movement_requests r"
                               " ON r.id = n.request_id WHERE n.id = $1"};
  auto r = exec(tx, q, id);
  if (r.empty())
    return std::nullopt;
  return to_claimed(r[0]);
}

std::vector<std::string> dispatch_candidates(pqxx::transaction_base& tx,
                                             const std::string& network_class,
                                             const std::vector<std::string>& exclude, int limit) {
  static const statement q{
      "mg_dispatch_candidates",
      // The request is a primary-key probe per READY row walked in FIFO
      // order, never a join the planner may drive from a stale-statistics
      // scan of every active request (see dispatch_claimable).
      "SELECT n.id FROM movement_request_nodes n"
      " WHERE n.node_state = 'READY' AND n.action_type NOT LIKE 'manual\\_%'"
      "   AND n.id <> ALL($2::uuid[])"
      "   AND (n.retry_at IS NULL OR n.retry_at <= clock_timestamp())"
      "   AND (SELECT r.request_state IN ('APPROVED', 'EXECUTING') AND r.network_class = $1"
      "        AND NOT r.dispatch_paused FROM movement_requests r WHERE r.id = n.request_id)"
      " ORDER BY n.request_created_at, n.position LIMIT $3"};
  auto r = exec(tx, q, network_class, text_array(exclude), limit);
  std::vector<std::string> ids;
  for (auto row : r)
    ids.emplace_back(row[0].c_str());
  return ids;
}

std::optional<claimed_node> claim_for_dispatch(pqxx::transaction_base& tx, const std::string& id,
                                               const std::string& network_class,
                                               claim_scope scope) {
  static const statement q{"mg_claim_dispatch", claim_by_id(dispatch_columns, dispatch_claimable)};
  return claim_one(tx, q, id, network_class, scope);
}

std::vector<claimed_node> claim_activated(pqxx::transaction_base& tx,
                                          const std::vector<activated_node>& nodes,
                                          const std::string& network_class) {
  // Keys only in WHERE, as claim_by_id ($3 here is the network class).
  static const statement q{
      "mg_claim_activated",
      "SELECT " + dispatch_columns + ", (" + dispatch_claimable +
          ") AS claimable FROM unnest($3::uuid[], $1::text[]) AS a(request_id, node_key)"
          " JOIN movement_request_nodes n"
          "   ON n.request_id = a.request_id AND n.node_key = a.node_key"
          " JOIN movement_requests r ON r.id = n.request_id"
          " ORDER BY n.request_created_at, n.position FOR UPDATE OF n, r SKIP LOCKED"};
  std::vector<claimed_node> out;
  if (nodes.empty())
    return out;
  std::vector<std::string> requests, keys;
  for (auto& a : nodes) {
    requests.push_back(a.request_id);
    keys.push_back(a.node_key);
  }
  for (auto row : exec(tx, q, text_array(keys), network_class, text_array(requests)))
    if (claimable(row))
      out.push_back(to_claimed(row));
  return out;
}

void defer_after_prepare_error(pqxx::transaction_base& tx, const claimed_node& n,
                               const std::string& error_code, const std::string& error_detail,
                               double retry_in_seconds) {
  // Still READY: no state change, no event. The claim's own row lock makes
  // the write safe; the state check keeps it from touching a moved node.
  static const statement q{"mg_defer_prepare_error",
                           "UPDATE movement_request_nodes SET prepare_errors = prepare_errors + 1,"
                           " retry_at = clock_timestamp() + make_interval(secs => $2::float8),"
                           " error_code = $3, error_detail = $4, updated_at = clock_timestamp()"
                           " WHERE id = $1 AND node_state = 'READY'"};
  exec(tx, q, n.id, retry_in_seconds, domain::storable_text(error_code, 128),
       domain::storable_text(error_detail));
}

std::vector<std::string> observe_candidates(pqxx::transaction_base& tx,
                                            const std::string& network_class, int limit) {
  // As dispatch_candidates: the request is a primary-key probe per row.
  static const statement q{
      "mg_observe_candidates",
      "SELECT n.id FROM movement_request_nodes n"
      " WHERE n.node_state IN ('SUBMITTED', 'OBSERVING')"
      "   AND (n.next_observe_at IS NULL OR n.next_observe_at <= clock_timestamp())"
      "   AND (SELECT r.request_state = 'EXECUTING' AND r.network_class = $2"
      "        FROM movement_requests r WHERE r.id = n.request_id)"
      " ORDER BY n.request_created_at, n.position LIMIT $1"};
  auto r = exec(tx, q, limit, network_class);
  std::vector<std::string> ids;
  for (auto row : r)
    ids.emplace_back(row[0].c_str());
  return ids;
}

std::optional<double> next_observe_due_in(pqxx::transaction_base& tx,
                                          const std::string& network_class) {
  static const statement q{
      "mg_next_observe_due",
      // No GREATEST here: it skips NULLs, and "nothing in flight" must stay
      // NULL, not become "due now".
      "SELECT extract(epoch FROM min(n.next_observe_at) - clock_timestamp())::float8"
      " FROM movement_request_nodes n WHERE n.node_state IN ('SUBMITTED', 'OBSERVING')"
      "   AND (SELECT r.request_state = 'EXECUTING' AND r.network_class = $1"
      "        FROM movement_requests r WHERE r.id = n.request_id)"};
  auto r = exec(tx, q, network_class);
  if (r[0][0].is_null())
    return std::nullopt;
  return std::max(0.0, r[0][0].as<double>());
}

std::optional<claimed_node> claim_for_observe(pqxx::transaction_base& tx, const std::string& id,
                                              const std::string& network_class, claim_scope scope) {
  static const statement q{"mg_claim_observe", claim_by_id(node_columns, due_predicate)};
  return claim_one(tx, q, id, network_class, scope);
}

int recovery_lane(const std::string& action_type) {
  if (action_type.find("ccip") != std::string::npos)
    return 0;
  if (action_type.find("stargate") != std::string::npos)
    return 1;
  if (action_type.rfind("cex_", 0) == 0)
    return 2;
  return 3;
}

namespace {

/// FROM/WHERE of the nodes recovery may act on ($1 network class, $2
/// unknown_escalate_seconds, $3 submitting_grace_seconds).
constexpr const char* recovery_candidates =
    " FROM movement_request_nodes n JOIN movement_requests r ON r.id = n.request_id"
    " WHERE r.request_state = 'EXECUTING' AND r.network_class = $1"
    " AND ((n.node_state = 'UNKNOWN'"
    // Settled at once (domain::settles_at_once): an operator must look first.
    "       AND (n.error_code IS NULL"
    "            OR n.error_code NOT IN ('OBSERVATION_TIMEOUT', 'PROVIDER_PROTOCOL_ERROR'))"
    "       AND n.unknown_since > clock_timestamp() - make_interval(secs => $2))"
    "   OR (n.node_state = 'SUBMITTING'"
    "       AND n.claimed_at <= clock_timestamp() - make_interval(secs => $3)))";

} // namespace

std::vector<claimed_node> claim_for_recovery(pqxx::transaction_base& tx,
                                             const std::string& network_class,
                                             const recovery_limits& limits) {
  static const char* lanes[] = {
      "n.action_type LIKE '%ccip%'",
      "n.action_type LIKE '%stargate%' AND n.action_type NOT LIKE '%ccip%'",
      "n.action_type LIKE 'cex\\_%' AND n.action_type NOT LIKE '%ccip%'"
      " AND n.action_type NOT LIKE '%stargate%'",
      "n.action_type NOT LIKE '%ccip%' AND n.action_type NOT LIKE '%stargate%'"
      " AND n.action_type NOT LIKE 'cex\\_%'",
  };
  const int per_arm = std::max(1, limits.batch / 4);
  std::vector<claimed_node> out;
  for (int i = 0; i < 4; ++i) {
    auto* lane = lanes[i];
    auto sql = std::string("SELECT ") + node_columns + recovery_candidates + " AND (" + lane +
               ") ORDER BY n.updated_at LIMIT $4 FOR UPDATE OF n, r SKIP LOCKED";
    auto r = exec(tx, statement{"mg_recovery_arm_" + std::to_string(i), sql}, network_class,
                  limits.unknown_escalate_seconds, limits.submitting_grace_seconds, per_arm);
    for (auto row : r)
      out.push_back(to_claimed(row));
  }
  return out;
}

bool recovery_work_waiting(pqxx::transaction_base& tx, const std::string& network_class,
                           const recovery_limits& limits) {
  static const statement q{"mg_recovery_waiting",
                           std::string("SELECT EXISTS (SELECT 1") + recovery_candidates + ")"};
  return exec(tx, q, network_class, limits.unknown_escalate_seconds,
              limits.submitting_grace_seconds)[0][0]
      .as<bool>();
}

namespace {

const statement flag_request{
    "mg_flag_request",
    "UPDATE movement_requests SET needs_reconcile = needs_reconcile OR $2,"
    " reconcile_requested_at = CASE WHEN $2 AND NOT needs_reconcile THEN clock_timestamp()"
    "   ELSE reconcile_requested_at END,"
    " dispatch_paused = dispatch_paused OR $3, updated_at = clock_timestamp() WHERE id = $1"};

const statement update_node{
    "mg_update_node",
    "UPDATE movement_request_nodes SET node_state = $4,"
    " provider_state = COALESCE($5, provider_state),"
    " provider_refs = provider_refs || COALESCE($6::jsonb, '{}'::jsonb),"
    " provider_ref_id = COALESCE($7, provider_ref_id),"
    " error_code = $8, error_detail = $9,"
    " next_observe_at = CASE WHEN $10::float8 IS NULL THEN NULL"
    "   ELSE clock_timestamp() + make_interval(secs => $10::float8) END,"
    " last_observed_at = CASE WHEN $11 THEN clock_timestamp() ELSE last_observed_at END,"
    " observe_count = observe_count + CASE WHEN $11 THEN 1 ELSE 0 END,"
    " unknown_since = CASE WHEN $4 <> 'UNKNOWN' THEN NULL"
    "   WHEN node_state = 'UNKNOWN' THEN unknown_since ELSE clock_timestamp() END,"
    " claim_token = CASE $12 WHEN 'keep' THEN claim_token"
    "   WHEN 'rotate' THEN gen_random_uuid() ELSE NULL END,"
    " updated_at = clock_timestamp()"
    " WHERE id = $1 AND attempt_no = $2 AND claim_token IS NOT DISTINCT FROM $3::uuid"
    " RETURNING id"};

/// Checks the move and works out what it flags on the request.
update_effects effects_of(const claimed_node& n, const node_update& u) {
  update_effects fx;
  auto from = domain::parse_node_state(n.node_state).value_or(node_state::blocked);
  auto to = u.next_state;
  if (from != to && !domain::transition_allowed(from, to))
    throw std::logic_error("illegal node transition " + n.node_state + " -> " +
                           std::string(domain::to_string(to)));
  fx.needs_reconcile = from != to && domain::affects_reconcile(from, to);
  fx.pauses_dispatch = to == node_state::failed || to == node_state::unknown;
  return fx;
}

/// Hands the conditional node update (statement and arguments) to `run`,
/// which executes it now or queues it on a write batch.
template <class Run>
pqxx::result run_update(const claimed_node& n, const node_update& u, Run&& run) {
  const char* token = u.token == claim_token_change::keep     ? "keep"
                      : u.token == claim_token_change::rotate ? "rotate"
                                                              : "clear";
  // Provider text is stored only as text the columns take: a stray byte in
  // an error message must not abort the transaction (and with it a pass).
  auto provider_state = u.provider_state
                            ? std::optional<std::string>(domain::storable_text(*u.provider_state))
                            : std::nullopt;
  auto provider_ref_id = u.provider_ref_id ? domain::storable_text(*u.provider_ref_id, 1024) : "";
  auto error_code = domain::storable_text(u.error_code, 128);
  auto error_detail = domain::storable_text(u.error_detail);
  return run(update_node, n.id, n.attempt_no, null_if_empty(n.claim_token),
             std::string(domain::to_string(u.next_state)),
             provider_state ? provider_state->c_str() : nullptr,
             u.provider_refs ? u.provider_refs->c_str() : nullptr,
             u.provider_ref_id ? null_if_empty(provider_ref_id) : nullptr,
             null_if_empty(error_code), null_if_empty(error_detail),
             u.next_observe_in_seconds ? std::to_string(*u.next_observe_in_seconds).c_str()
                                       : nullptr,
             u.observed, token);
}

/// Records the node's event (when its state changes) in `events`.
void record_change(const claimed_node& n, const node_update& u, event_batch& events) {
  if (domain::parse_node_state(n.node_state).value_or(node_state::blocked) == u.next_state)
    return;
  events.node_changed(n.request_state, n.node_key, std::string(domain::to_string(u.next_state)),
                      u.error_code.empty() ? "{}"
                                           : "{\"error_code\":" + json::quote(u.error_code) + "}");
}

stale_write stale(const claimed_node& n) {
  return stale_write("node " + n.id + " attempt " + std::to_string(n.attempt_no) +
                     " no longer holds its claim");
}

} // namespace

std::set<std::string> lock_current_claims(pqxx::transaction_base& tx,
                                          const std::vector<const claimed_node*>& claims) {
  static const statement q{
      "mg_lock_current_claims",
      "SELECT n.id::text FROM movement_request_nodes n"
      " JOIN movement_requests r ON r.id = n.request_id"
      " JOIN unnest($1::uuid[], $2::int[], $3::uuid[], $4::text[]) AS c(id, attempt_no, token,"
      "   node_state) ON c.id = n.id"
      " WHERE n.attempt_no = c.attempt_no AND n.claim_token IS NOT DISTINCT FROM c.token"
      "   AND n.node_state = c.node_state"
      " ORDER BY r.id, n.id FOR UPDATE OF r, n"};
  std::vector<std::string> ids, attempts, tokens, states;
  for (auto* n : claims) {
    ids.push_back(n->id);
    attempts.push_back(std::to_string(n->attempt_no));
    tokens.push_back(n->claim_token);
    states.push_back(n->node_state);
  }
  std::set<std::string> current;
  for (auto row :
       exec(tx, q, text_array(ids), text_array(attempts), text_array(tokens), text_array(states)))
    current.insert(row[0].c_str());
  return current;
}

update_effects apply_node_update(pqxx::transaction_base& tx, const claimed_node& n,
                                 const node_update& u, event_batch& events) {
  auto fx = effects_of(n, u);
  if (n.has_callback)
    events.set_has_callback(*n.has_callback);
  // Always, even with nothing to flag: it takes the request row's lock
  // before the node's. Otherwise the event rows' foreign-key check would
  // take a share lock on the request *after* the node lock, and deadlock
  // with a reconcile that holds the request and waits for the node.
  exec(tx, flag_request, n.request_id, fx.needs_reconcile, fx.pauses_dispatch);
  auto r = run_update(
      n, u, [&](const statement& s, const auto&... args) { return exec(tx, s, args...); });
  fx.applied = !r.empty();
  if (!fx.applied)
    throw stale(n);
  record_change(n, u, events);
  return fx;
}

update_effects apply_node_update_and_flush(pqxx::transaction_base& tx, const claimed_node& n,
                                           const node_update& u, event_batch& events,
                                           shared_write shared) {
  auto fx = effects_of(n, u);
  if (n.has_callback)
    events.set_has_callback(*n.has_callback);
  record_change(n, u, events);
  write_batch batch;
  // The request flag first (lock order, as above), then the events and
  // artifacts, then the conditional node update, whose rows are the
  // batch's answer. A stale update throws and the caller's transaction,
  // events included, is rolled back.
  const bool flag_reconcile = fx.needs_reconcile && !shared.reconciled_here;
  if (!shared.request_locked || flag_reconcile || fx.pauses_dispatch)
    batch.add(tx, flag_request, n.request_id, flag_reconcile, fx.pauses_dispatch);
  if (shared.events)
    events.move_into(*shared.events);
  else
    events.flush_into(tx, batch);
  run_update(n, u, [&](const statement& s, const auto&... args) {
    batch.add(tx, s, args...);
    return pqxx::result{};
  });
  fx.applied = !batch.run(tx).empty();
  if (!fx.applied)
    throw stale(n);
  return fx;
}

void add_artifact(pqxx::transaction_base& tx, const std::string& node_id, int attempt_no,
                  const std::string& kind, const std::string& payload_json,
                  const std::string& payload_hash) {
  static const statement q{"mg_add_artifact",
                           "INSERT INTO node_artifacts (node_id, attempt_no, kind, payload,"
                           " payload_hash) VALUES ($1, $2, $3, $4::jsonb, $5)"};
  exec(tx, q, node_id, attempt_no, kind, payload_json, null_if_empty(payload_hash));
}

void add_generated_artifacts(pqxx::transaction_base& tx, const std::string& node_id, int attempt_no,
                             const std::string& artifacts_json) {
  if (artifacts_json.empty() || artifacts_json == "[]")
    return;
  static const statement q{"mg_add_generated",
                           "INSERT INTO node_artifacts (node_id, attempt_no, kind, payload)"
                           " SELECT $1, $2, 'generated', a FROM jsonb_array_elements($3::jsonb) a"};
  exec(tx, q, node_id, attempt_no, artifacts_json);
}

void take_provider_result(node_update& u, const domain::step_result& r) {
  u.provider_state = r.provider_state;
  u.provider_refs = r.provider_refs;
  if (!r.provider_ref_id.empty())
    u.provider_ref_id = r.provider_ref_id;
  u.error_code = r.error_code;
  u.error_detail = r.error_detail;
}

} // namespace mg::db
