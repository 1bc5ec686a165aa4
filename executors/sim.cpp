#include "executors/sim.hpp"

#include <chrono>
#include <map>
#include <thread>

#include "domain/hash.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"
#include "domain/provider_json.hpp"
#include "persistence/db.hpp"
#include "persistence/sim_ledger_store.hpp"

namespace mg::executors {

using domain::node_state;
using domain::step_result;

namespace {

/// config.sim of a node, all optional (SPEC §4 defaults).
struct sim_config {
  int latency_ms = 0;
  int polls_until_done = 0;
  std::optional<double> retry_after_seconds = 0.0; // nullopt: JSON null → table interval
  std::string fail_at;
  std::string unknown_at;
  node_state recover_to = node_state::completed;
  // What an accepted submit answers: SUBMITTED, or a provider that settles
  // at once (COMPLETED) or is already being watched (OBSERVING).
  node_state submit_to = node_state::submitted;
  std::string extra_refs = "{}"; // config.sim.provider_refs, merged into submit refs
  // Beyond SPEC §4, for crash tests: submit waits before writing its ledger
  // row (a crash then leaves no record) or after it (a crash then loses
  // only the answer).
  int submit_delay_ms = 0;
  int submit_hold_ms = 0;
  // Beyond SPEC §4, for tests of the engine's answer checks:
  // config.sim.answer.<preflight|prepare|submit|observe|recover> replaces
  // what that call answers (submit and recover still do their ledger work
  // first), read by the converters a remote executor's answer goes
  // through. A JSON string is the answer's raw text, so it may be
  // malformed; any other value is the answer document itself.
  std::map<std::string, std::string> answers;
};

sim_config read_config(const domain::execution_context& ctx) {
  sim_config c;
  auto cfg = json::parse(ctx.node_config);
  if (!cfg || !cfg->IsObject())
    return c;
  auto it = cfg->FindMember("sim");
  if (it == cfg->MemberEnd() || !it->value.IsObject())
    return c;
  auto& s = it->value;
  if (s.HasMember("latency_ms") && s["latency_ms"].IsNumber())
    c.latency_ms = s["latency_ms"].GetInt();
  if (s.HasMember("submit_delay_ms") && s["submit_delay_ms"].IsNumber())
    c.submit_delay_ms = s["submit_delay_ms"].GetInt();
  if (s.HasMember("submit_hold_ms") && s["submit_hold_ms"].IsNumber())
    c.submit_hold_ms = s["submit_hold_ms"].GetInt();
  if (s.HasMember("polls_until_done") && s["polls_until_done"].IsNumber())
    c.polls_until_done = s["polls_until_done"].GetInt();
  if (s.HasMember("retry_after_seconds")) {
    auto& v = s["retry_after_seconds"];
    c.retry_after_seconds = v.IsNumber() ? std::optional<double>(v.GetDouble()) : std::nullopt;
  }
  c.fail_at = json::get_string(s, "fail_at");
  c.unknown_at = json::get_string(s, "unknown_at");
  c.recover_to = domain::parse_node_state(json::get_string(s, "recover_to", "COMPLETED"))
                     .value_or(node_state::completed);
  c.submit_to = domain::parse_node_state(json::get_string(s, "submit_to", "SUBMITTED"))
                    .value_or(node_state::submitted);
  if (s.HasMember("provider_refs") && s["provider_refs"].IsObject())
    c.extra_refs = json::dump(s["provider_refs"]);
  if (s.HasMember("answer") && s["answer"].IsObject())
    for (auto& m : s["answer"].GetObject())
      c.answers[m.name.GetString()] =
          m.value.IsString() ? std::string(m.value.GetString(), m.value.GetStringLength())
                             : json::dump(m.value);
  return c;
}

void simulate_latency(const sim_config& c) {
  if (c.latency_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(c.latency_ms));
}

step_result result(node_state next, std::string error_code = {}) {
  step_result r;
  r.next_state = next;
  r.provider_state = std::string(domain::to_string(next));
  r.error_code = std::move(error_code);
  return r;
}

/// What the provider tells about an accepted attempt: a stable reference
/// plus fields successors commonly $ref (withdrawal_id, tx_hash).
std::string submit_refs(const domain::execution_context& ctx, const sim_config& c) {
  auto digest = domain::sha256_hex(ctx.idempotency_key);
  json::writer w;
  w.begin_object()
      .member("sim_ref", ctx.idempotency_key)
      .member("withdrawal_id", "wd-" + digest.substr(0, 16))
      .member("tx_hash", "0x" + digest)
      .end_object();
  return json::merge_members(w.str(), c.extra_refs);
}

db::sim_ledger_key ledger_key(const domain::execution_context& ctx) {
  return {ctx.idempotency_key, ctx.request_node_id, ctx.attempt_no, ctx.action_type};
}

int polls_so_far(const domain::execution_context& ctx) {
  auto refs = json::parse(ctx.provider_refs);
  if (!refs || !refs->IsObject() || !refs->HasMember("sim_polls") || !(*refs)["sim_polls"].IsInt())
    return 0;
  return (*refs)["sim_polls"].GetInt();
}

/// A submit with nothing to wait for or to answer differently: the ledger
/// write of several such submits may be shared.
bool submits_plainly(const sim_config& c) {
  return c.latency_ms <= 0 && c.fail_at != "submit" && c.submit_delay_ms <= 0 &&
         c.submit_hold_ms <= 0 && !c.answers.count("submit");
}

/// What an accepted submit answers. A duplicate submit of an accepted key
/// is idempotent: same answer, no second side effect.
step_result accepted_answer(const domain::execution_context& ctx, const sim_config& c) {
  auto r = result(c.unknown_at == "submit" ? node_state::unknown : c.submit_to);
  r.provider_refs = submit_refs(ctx, c);
  r.provider_ref_id = "sim-" + ctx.idempotency_key;
  r.retry_after_seconds = c.retry_after_seconds;
  return r;
}

} // namespace

std::optional<step_result> sim_executor::preflight(const domain::execution_context& ctx) {
  auto c = read_config(ctx);
  simulate_latency(c);
  if (auto a = c.answers.find("preflight"); a != c.answers.end())
    return domain::optional_step_result_from_json(a->second);
  if (c.fail_at == "preflight")
    return result(node_state::failed, "SIM_PREFLIGHT_FAILED");
  return std::nullopt;
}

std::optional<domain::prepared_action> sim_executor::prepare(const domain::execution_context& ctx) {
  auto c = read_config(ctx);
  simulate_latency(c);
  if (auto a = c.answers.find("prepare"); a != c.answers.end())
    return domain::optional_prepared_action_from_json(a->second);
  if (c.fail_at == "prepare")
    return std::nullopt;
  domain::prepared_action a;
  a.action_type = ctx.action_type;
  // What a real provider would sign over: the action, the intent, the
  // resolved config and the predecessors' references it builds on.
  json::writer w;
  w.begin_object()
      .member("action_type", ctx.action_type)
      .key("intent")
      .raw(ctx.intent)
      .key("node_config")
      .raw(ctx.node_config)
      .key("provider_context")
      .raw(ctx.provider_context)
      .member("prior_artifact_count",
              json::parse_trusted(ctx.prior_artifacts, "prior_artifacts").Size())
      .end_object();
  a.payload = w.str();
  a.payload_hash = domain::sha256_hex(a.payload);
  return a;
}

step_result sim_executor::submit(const domain::execution_context& ctx,
                                 const domain::prepared_action& action,
                                 const domain::sign_result* signature) {
  auto c = read_config(ctx);
  simulate_latency(c);
  if (c.fail_at == "submit")
    return result(node_state::failed, "SIM_SUBMIT_REFUSED"); // refused: no ledger row
  if (c.submit_delay_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(c.submit_delay_ms));
  auto conn = ledger_->acquire();
  // Autocommit: the record is durable before submit answers, whatever the
  // engine's transactions do.
  pqxx::nontransaction w(*conn);
  if (db::sim_ledger_accept(w, ledger_key(ctx)) == db::sim_accept_outcome::fenced)
    return result(node_state::failed, domain::fenced_error_code);
  if (c.submit_hold_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(c.submit_hold_ms));
  if (auto a = c.answers.find("submit"); a != c.answers.end())
    return domain::step_result_from_json(a->second); // accepted, whatever it says
  return accepted_answer(ctx, c);
}

std::vector<step_result> sim_executor::submit_many(const std::vector<domain::submit_call>& calls) {
  std::vector<step_result> out(calls.size());
  std::vector<size_t> plain; // answered from one ledger write
  std::vector<db::sim_ledger_key> keys;
  for (size_t i = 0; i < calls.size(); ++i) {
    auto c = read_config(*calls[i].ctx);
    if (submits_plainly(c)) {
      plain.push_back(i);
      keys.push_back(ledger_key(*calls[i].ctx));
    } else {
      out[i] = submit(*calls[i].ctx, *calls[i].action, calls[i].signature);
    }
  }
  if (keys.empty())
    return out;
  auto conn = ledger_->acquire();
  pqxx::nontransaction w(*conn); // autocommit, as for one submit
  auto outcomes = db::sim_ledger_accept_all(w, keys);
  for (size_t j = 0; j < plain.size(); ++j) {
    auto& ctx = *calls[plain[j]].ctx;
    out[plain[j]] = outcomes[j] == db::sim_accept_outcome::fenced
                        ? result(node_state::failed, domain::fenced_error_code)
                        : accepted_answer(ctx, read_config(ctx));
  }
  return out;
}

step_result sim_executor::observe(const domain::execution_context& ctx) {
  auto c = read_config(ctx);
  simulate_latency(c);
  if (auto a = c.answers.find("observe"); a != c.answers.end())
    return domain::step_result_from_json(a->second);
  if (c.unknown_at == "observe")
    return result(node_state::unknown);
  if (c.fail_at == "observe")
    return result(node_state::failed, "SIM_OBSERVE_FAILED");
  int polls = polls_so_far(ctx);
  if (polls < c.polls_until_done) {
    auto r = result(node_state::observing);
    r.provider_refs = "{\"sim_polls\":" + std::to_string(polls + 1) + "}";
    r.retry_after_seconds = c.retry_after_seconds;
    return r;
  }
  return result(node_state::completed);
}

domain::recover_result sim_executor::recover(const domain::execution_context& ctx) {
  auto c = read_config(ctx);
  simulate_latency(c);
  auto conn = ledger_->acquire();
  pqxx::work w(*conn);
  // Fence first: if the key is not in the ledger it can never be accepted.
  bool fenced = db::sim_ledger_fence(w, ledger_key(ctx));
  w.commit();
  domain::recover_result out;
  if (fenced) {
    out.outcome = domain::recover_outcome::fenced;
    out.result = result(node_state::ready, domain::fenced_error_code);
    return out;
  }
  if (auto a = c.answers.find("recover"); a != c.answers.end())
    return domain::recover_result_from_json(a->second);
  out.outcome = domain::recover_outcome::found;
  out.result = result(c.recover_to);
  out.result.provider_refs = submit_refs(ctx, c);
  out.result.provider_ref_id = "sim-" + ctx.idempotency_key;
  return out;
}

bool sim_executor::claims_in_batch(const domain::execution_context& ctx) const {
  // Its scripted submit waits count too: a batch's submits go one after
  // the other, so one that waits would hold up the rest.
  auto c = read_config(ctx);
  return c.latency_ms <= 0 && c.submit_delay_ms <= 0 && c.submit_hold_ms <= 0;
}

domain::sign_result sim_signer::sign(const domain::sign_request& req) {
  if (req.payload_hash != req.intent.allowed_payload_hash)
    throw domain::executor_error("payload_hash differs from allowed_payload_hash");
  if (!accepted_formats_.count(req.payload_format))
    throw domain::executor_error("sim signer: payload_format '" + req.payload_format +
                                 "' is not accepted");
  if (domain::sha256_hex(req.payload) != req.payload_hash)
    throw domain::executor_error("payload does not hash to payload_hash");
  return {domain::hmac_sha256_hex("sim-signer", req.payload_hash), address};
}

domain::health_result sim_signer::health() {
  domain::health_result h;
  h.signer_address = address;
  return h;
}

domain::provider_registry builtin_providers(const std::string& database_url) {
  domain::provider_registry r;
  auto ledger = std::make_shared<db::connection_pool>(
      db::with_application_name(database_url, "movegate:sim-ledger"), 4);
  r.executors["sim"] = std::make_shared<sim_executor>(ledger);
  r.signers["sim"] = std::make_shared<sim_signer>();
  return r;
}

} // namespace mg::executors
