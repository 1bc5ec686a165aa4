#include "persistence/node_store.hpp"

#include <algorithm>
#include <stdexcept>

#include "domain/json.hpp"
#include "domain/provider_answer.hpp"
#include "domain/reconcile.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/db.hpp"
#include "persistence/movement_store.hpp"

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
    " r.intent::text, r.input_params::text, n.prepare_errors, r.callback_url IS NOT NULL,"
    " n.observe_count";

// The dispatch claim also reads the latest predecessor's last change (its
// COMPLETED, for a READY node) for the hop metric: a few primary-key
// lookups, no scan. And what the node's context reads of its request, in
// the claim's round trip.
const std::string dispatch_columns =
    std::string(node_columns) +
    ", COALESCE((SELECT extract(epoch FROM clock_timestamp() - max(p.updated_at))"
    "  FROM template_edges te JOIN movement_request_nodes p ON p.request_id = n.request_id"
    "   AND p.node_key = te.from_key WHERE te.template_key = r.template_key"
    "   AND te.version = r.template_version AND te.to_key = n.node_key)::float8, -1)"
    " AS since_predecessors, " +
    completed_nodes_sql + " AS completed_for_context";

// Whether a node row may be claimed ($2: network class). A claim puts this
// in its select list, not in its WHERE: a WHERE naming node or request
// states lets the planner pick the state partial indexes, whose statistics
// lag a burst by up to a minute (READY looks empty right after a batch of
// approvals), and then scan every active request per claimed row. A WHERE
// on keys alone always probes the primary keys; a row that is locked but not
// claimable is a miss, released as the claim's scope says.
const std::string claimable_but_state =
    " AND n.action_type NOT LIKE 'manual\\_%'"
    " AND r.request_state IN ('APPROVED', 'EXECUTING') AND r.network_class = $2"
    " AND NOT r.dispatch_paused AND (n.retry_at IS NULL OR n.retry_at <= clock_timestamp())";
const std::string dispatch_claimable = "n.node_state = 'READY'" + claimable_but_state;
// A chain claim reads the successors its transaction activates before
// their READY rows exist (see claim_activated).
const std::string activation_claimable = "n.node_state = 'BLOCKED'" + claimable_but_state;

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
  n.node_state = node_state_of(r[10]);
  n.attempt_no = r[11].as<int>();
  n.idempotency_key = r[12].c_str();
  n.provider_refs = r[13].c_str();
  n.claim_token = r[14].c_str();
  n.error_code = r[15].c_str();
  n.seconds_since_started = r[16].as<double>();
  n.request_state = request_state_of(r[17]);
  n.template_key = r[18].c_str();
  n.template_version = r[19].as<int>();
  n.compiled_plan_hash = r[20].c_str();
  n.intent = r[21].c_str();
  n.input_params = r[22].c_str();
  n.prepare_errors = r[23].as<int>();
  n.has_callback = r[24].as<bool>();
  n.observe_count = r[25].as<int>();
  if (r.size() > 26 && std::string(r[26].name()) == "since_predecessors")
    n.seconds_since_predecessors = r[26].as<double>();
  if (r.size() > 27 && std::string(r[27].name()) == "completed_for_context")
    n.completed_for_context = r[27].c_str();
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

/// The rows of a many-row claim that may be claimed, in its order.
std::vector<claimed_node> claimable_rows(const pqxx::result& rows) {
  std::vector<claimed_node> out;
  for (auto row : rows)
    if (claimable(row))
      out.push_back(to_claimed(row));
  return out;
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
std::string claim_by_id(const std::string& columns, const std::string& claimable_expression) {
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

std::vector<claimed_node> claim_for_dispatch_batch(pqxx::transaction_base& tx,
                                                   const std::vector<std::string>& ids,
                                                   const std::string& network_class) {
  // Keys only in WHERE, as claim_by_id.
  static const statement q{
      "mg_claim_dispatch_batch",
      "SELECT " + dispatch_columns + ", (" + dispatch_claimable +
          ") AS claimable FROM movement_request_nodes n JOIN movement_requests r"
          " ON r.id = n.request_id WHERE n.id = ANY($1::uuid[])"
          " ORDER BY n.request_created_at, n.position FOR UPDATE OF n, r SKIP LOCKED"};
  if (ids.empty())
    return {};
  return claimable_rows(exec(tx, q, text_array(ids), network_class));
}

std::vector<claimed_node> claim_activated(pqxx::transaction_base& tx,
                                          const std::vector<activated_node>& nodes,
                                          const std::string& network_class, write_batch* before) {
  // Keys only in WHERE, as claim_by_id ($3 here is the network class).
  static const statement q{
      "mg_claim_activated",
      "SELECT " + dispatch_columns + ", (" + activation_claimable +
          ") AS claimable FROM unnest($3::uuid[], $1::text[]) AS a(request_id, node_key)"
          " JOIN movement_request_nodes n"
          "   ON n.request_id = a.request_id AND n.node_key = a.node_key"
          " JOIN movement_requests r ON r.id = n.request_id"
          " ORDER BY n.request_created_at, n.position FOR UPDATE OF n, r SKIP LOCKED"};
  if (nodes.empty()) {
    if (before && !before->empty())
      before->run(tx);
    return {};
  }
  std::vector<std::string> requests, keys;
  for (auto& a : nodes) {
    requests.push_back(a.request_id);
    keys.push_back(a.node_key);
  }
  std::vector<claimed_node> claimed;
  if (!before) {
    claimed = claimable_rows(exec(tx, q, text_array(keys), network_class, text_array(requests)));
  } else {
    before->add(tx, q, text_array(keys), network_class, text_array(requests));
    claimed = claimable_rows(before->run(tx));
  }
  for (auto& n : claimed)
    n.activation_pending = true;
  return claimed;
}

void defer_after_prepare_error(pqxx::transaction_base& tx, const claimed_node& n,
                               const std::string& error_code, const std::string& error_detail,
                               double retry_in_seconds) {
  // READY (no event: the activation's was written): a chain-claimed node
  // gets the READY row its claim skipped. The claim's own row lock makes the
  // write safe; the state check keeps it from touching a moved node.
  static const statement q{"mg_defer_prepare_error",
                           "UPDATE movement_request_nodes SET node_state = 'READY',"
                           " prepare_errors = prepare_errors + 1,"
                           " retry_at = clock_timestamp() + make_interval(secs => $2::float8),"
                           " error_code = $3, error_detail = $4, updated_at = clock_timestamp()"
                           " WHERE id = $1 AND node_state = $5"};
  exec(tx, q, n.id, retry_in_seconds, domain::storable_text(error_code, 128),
       domain::storable_text(error_detail), n.activation_pending ? "BLOCKED" : "READY");
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

// Node results, one row each, conditional on the claim their producer read
// (id, attempt_no, claim_token). The request row is never joined: the
// caller holds or flags it first (lock order: request, then nodes).
const statement update_nodes{
    "mg_update_nodes",
    "UPDATE movement_request_nodes n SET node_state = w.next_state,"
    " provider_state = COALESCE(w.provider_state, n.provider_state),"
    " provider_refs = n.provider_refs || COALESCE(w.provider_refs::jsonb, '{}'::jsonb),"
    " provider_ref_id = COALESCE(w.provider_ref_id, n.provider_ref_id),"
    " error_code = w.error_code, error_detail = w.error_detail,"
    " next_observe_at = CASE WHEN w.observe_in IS NULL THEN NULL"
    "   ELSE clock_timestamp() + make_interval(secs => w.observe_in) END,"
    " last_observed_at = CASE WHEN w.observations > 0 THEN clock_timestamp()"
    "   ELSE n.last_observed_at END,"
    " observe_count = n.observe_count + w.observations,"
    " unknown_since = CASE WHEN w.next_state <> 'UNKNOWN' THEN NULL"
    "   WHEN w.keeps_unknown_since THEN n.unknown_since ELSE clock_timestamp() END,"
    " claim_token = CASE w.token WHEN 'keep' THEN n.claim_token"
    "   WHEN 'rotate' THEN gen_random_uuid() ELSE NULL END,"
    " updated_at = clock_timestamp()"
    " FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::text[], $5::text[], $6::text[],"
    "   $7::text[], $8::text[], $9::text[], $10::float8[], $11::int[], $12::bool[], $13::text[])"
    "   AS w(id, attempt_no, claim_token, next_state, provider_state, provider_refs,"
    "   provider_ref_id, error_code, error_detail, observe_in, observations,"
    "   keeps_unknown_since, token)"
    " WHERE n.id = w.id AND n.attempt_no = w.attempt_no"
    "   AND n.claim_token IS NOT DISTINCT FROM w.claim_token"
    " RETURNING n.id::text"};

/// Checks the move from `from` and works out what it flags on the request.
update_effects effects_of(node_state from, const node_update& u) {
  update_effects fx;
  auto to = u.next_state;
  if (from != to && !domain::transition_allowed(from, to))
    throw std::logic_error("illegal node transition " + std::string(domain::to_string(from)) +
                           " -> " + std::string(domain::to_string(to)));
  fx.needs_reconcile = from != to && domain::affects_reconcile(from, to);
  fx.pauses_dispatch = to == node_state::failed || to == node_state::unknown;
  return fx;
}

/// Records the node's event for the move from `from` (when its state
/// changes) in `events`.
void record_change(const claimed_node& n, node_state from, const node_update& u,
                   event_batch& events) {
  if (from == u.next_state)
    return;
  events.node_changed(n.request_state, n.node_key, u.next_state,
                      u.error_code.empty() ? "{}"
                                           : "{\"error_code\":" + json::quote(u.error_code) + "}");
}

const char* token_change_name(claim_token_change c) {
  return c == claim_token_change::keep     ? "keep"
         : c == claim_token_change::rotate ? "rotate"
                                           : "clear";
}

/// The arguments of update_nodes, one array per column.
struct update_rows {
  std::vector<std::optional<std::string>> ids, attempts, tokens, states, provider_states,
      provider_refs, provider_ref_ids, error_codes, error_details, observe_in, observations,
      keeps_unknown_since, token_changes;

  /// Folds `steps` (applied in order) into one row write of `n`: the last
  /// step's state, error and observe delay; provider state and ref id as
  /// the last step that gave one; refs merged in order; every observation
  /// counted. Returns the steps' effects, their events recorded in
  /// `events`.
  update_effects add(const claimed_node& n, const std::vector<node_update>& steps,
                     event_batch& events) {
    update_effects fx;
    auto from = n.node_state;
    const bool was_unknown = from == node_state::unknown;
    bool left_unknown = false;
    std::optional<std::string> provider_state, refs, ref_id;
    int observed = 0;
    auto token = claim_token_change::keep;
    for (auto& u : steps) {
      auto step = effects_of(from, u);
      fx.needs_reconcile |= step.needs_reconcile;
      fx.pauses_dispatch |= step.pauses_dispatch;
      record_change(n, from, u, events);
      left_unknown |= u.next_state != node_state::unknown;
      from = u.next_state;
      // Provider text is stored only as text the columns take: a stray
      // byte in an error message must not abort the transaction.
      if (u.provider_state)
        provider_state = domain::storable_text(*u.provider_state);
      if (u.provider_refs)
        refs = refs ? json::merge_members(*refs, *u.provider_refs) : *u.provider_refs;
      if (u.provider_ref_id) {
        auto id = domain::storable_text(*u.provider_ref_id, 1024);
        if (!id.empty())
          ref_id = id;
      }
      observed += u.observed ? 1 : 0;
      if (u.token != claim_token_change::keep)
        token = u.token;
    }
    auto& last = steps.back();
    fx.state_after = last.next_state;
    fx.keeps_unknown_since = was_unknown && !left_unknown;
    ids.push_back(n.id);
    attempts.push_back(std::to_string(n.attempt_no));
    tokens.push_back(n.claim_token.empty() ? std::nullopt : std::optional(n.claim_token));
    states.push_back(std::string(domain::to_string(last.next_state)));
    provider_states.push_back(provider_state);
    provider_refs.push_back(refs);
    provider_ref_ids.push_back(ref_id);
    auto code = domain::storable_text(last.error_code, 128);
    auto detail = domain::storable_text(last.error_detail);
    fx.error_code_after = code;
    error_codes.push_back(code.empty() ? std::nullopt : std::optional(code));
    error_details.push_back(detail.empty() ? std::nullopt : std::optional(detail));
    observe_in.push_back(last.next_observe_in_seconds
                             ? std::optional(std::to_string(*last.next_observe_in_seconds))
                             : std::nullopt);
    observations.push_back(std::to_string(observed));
    keeps_unknown_since.push_back(fx.keeps_unknown_since ? "t" : "f");
    token_changes.push_back(token_change_name(token));
    return fx;
  }

  /// Hands update_nodes and its arguments to `run`, which executes it now
  /// or queues it on a write batch.
  template <class Run> pqxx::result run(Run&& runner) const {
    return runner(update_nodes, nullable_text_array(ids), nullable_text_array(attempts),
                  nullable_text_array(tokens), nullable_text_array(states),
                  nullable_text_array(provider_states), nullable_text_array(provider_refs),
                  nullable_text_array(provider_ref_ids), nullable_text_array(error_codes),
                  nullable_text_array(error_details), nullable_text_array(observe_in),
                  nullable_text_array(observations), nullable_text_array(keeps_unknown_since),
                  nullable_text_array(token_changes));
  }
};

stale_write stale(const claimed_node& n) {
  return stale_write("node " + n.id + " attempt " + std::to_string(n.attempt_no) +
                     " no longer holds its claim");
}

/// The first of `results` the update did not write.
stale_write stale(const std::vector<node_result>& results, const pqxx::result& written) {
  std::set<std::string> ids;
  for (auto row : written)
    ids.insert(row[0].c_str());
  for (auto& r : results)
    if (!ids.count(r.node->id))
      return stale(*r.node);
  return stale_write("node results no longer hold their claims");
}

} // namespace

update_effects apply_node_update(pqxx::transaction_base& tx, const claimed_node& n,
                                 const node_update& u, event_batch& events) {
  if (n.has_callback)
    events.set_has_callback(*n.has_callback);
  update_rows rows;
  auto fx = rows.add(n, {u}, events);
  // Always, even with nothing to flag: it takes the request row's lock
  // before the node's. Otherwise the event rows' foreign-key check would
  // take a share lock on the request *after* the node lock, and deadlock
  // with a reconcile that holds the request and waits for the node.
  flag_request(tx, n.request_id, fx.needs_reconcile, fx.pauses_dispatch);
  auto r = rows.run([&](const statement& s, const auto&... args) { return exec(tx, s, args...); });
  fx.applied = !r.empty();
  if (!fx.applied)
    throw stale(n);
  return fx;
}

namespace {

/// The request flags, the events and artifacts, and the node update of
/// `results`, queued on `batch` in that order (lock order: request, then
/// node); the update comes last, so its rows are the batch's answer.
std::vector<update_effects> queue_results(pqxx::transaction_base& tx,
                                          const std::vector<node_result>& results,
                                          shared_write shared, write_batch& batch) {
  std::vector<update_effects> effects;
  update_rows rows;
  for (auto& r : results) {
    if (r.node->has_callback)
      r.events->set_has_callback(*r.node->has_callback);
    auto fx = rows.add(*r.node, r.steps, *r.events);
    const bool flag_reconcile = fx.needs_reconcile && !shared.reconciled_here;
    if (!shared.request_locked || flag_reconcile || fx.pauses_dispatch)
      add_request_flag(tx, batch, r.node->request_id, flag_reconcile, fx.pauses_dispatch);
    effects.push_back(fx);
  }
  for (auto& r : results) {
    if (shared.events)
      r.events->move_into(*shared.events);
    else
      r.events->flush_into(tx, batch);
  }
  rows.run([&](const statement& s, const auto&... args) {
    batch.add(tx, s, args...);
    return pqxx::result{};
  });
  return effects;
}

} // namespace

std::vector<update_effects> apply_node_results(pqxx::transaction_base& tx,
                                               const std::vector<node_result>& results,
                                               shared_write shared) {
  if (results.empty())
    return {};
  // A stale update throws and the caller's transaction, events included, is
  // rolled back.
  write_batch batch;
  auto effects = queue_results(tx, results, shared, batch);
  auto written = batch.run(tx);
  if (written.size() != results.size())
    throw stale(results, written);
  for (auto& fx : effects)
    fx.applied = true;
  return effects;
}

std::vector<update_effects> queue_node_results(pqxx::transaction_base& tx,
                                               const std::vector<node_result>& results,
                                               shared_write shared, write_batch& batch) {
  if (results.empty())
    return {};
  // The rows are locked and current: the update cannot miss.
  auto effects = queue_results(tx, results, shared, batch);
  for (auto& fx : effects)
    fx.applied = true;
  return effects;
}

update_effects apply_node_update_and_flush(pqxx::transaction_base& tx, const claimed_node& n,
                                           const node_update& u, event_batch& events,
                                           shared_write shared) {
  return apply_node_results(tx, {{&n, {u}, &events}}, shared).front();
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
