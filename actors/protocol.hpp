#pragma once
// Every actor interface of movegate in one place: read this file to know the
// whole message protocol. Atoms are ≤ 10 characters (CAF 0.17).
#include <caf/all.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mg::workers {
struct handed_result; // actors/workers/node_result.hpp
} // namespace mg::workers

namespace mg::actors {

/// A node result on its way from the observer or recovery to a request
/// writer. Local only: it never crosses the wire (no serializer).
using handed_result_ptr = std::shared_ptr<workers::handed_result>;

// --- atoms -----------------------------------------------------------------
/// Timer tick of a worker's loop, tagged with its schedule generation so a
/// superseded timer is ignored.
using tick_atom = caf::atom_constant<caf::atom("tick")>;
/// "Something for you may be ready": run a pass now instead of at the next tick.
using wake_atom = caf::atom_constant<caf::atom("wake")>;
/// A node of a request changed in a way reconcile must see.
using changed_atom = caf::atom_constant<caf::atom("changed")>;
/// Reconcile one request (a request writer answers once it committed).
using reconcile_atom = caf::atom_constant<caf::atom("reconcile")>;
/// A node result handed over after its claim ended (handed_result_ptr).
using result_atom = caf::atom_constant<caf::atom("result")>;
/// A request writer's next flush, sent to itself.
using flush_atom = caf::atom_constant<caf::atom("flush")>;
/// Ask a component for a one-line JSON status.
using status_atom = caf::atom_constant<caf::atom("status")>;
/// Ask the supervisor to stop every worker cleanly.
using shutdown_atom = caf::atom_constant<caf::atom("shutdown")>;
/// The supervisor's verdict, sent to whoever waits on the runtime:
/// (done_atom, exit_code).
using done_atom = caf::atom_constant<caf::atom("done")>;
/// Restart the sidecar at this index after its backoff.
using restart_atom = caf::atom_constant<caf::atom("restart")>;

// Cluster front door (SPEC §8): the movement_api actor and its sessions.
/// A sibling proves it holds an API key's secret and asks for a session.
using login_atom = caf::atom_constant<caf::atom("login")>;
/// POST /v3/movements through a session.
using create_atom = caf::atom_constant<caf::atom("create")>;
/// POST /v3/movements/{id}/approve through a session.
using approve_atom = caf::atom_constant<caf::atom("approve")>;
/// POST /v3/movements/{id}/reject through a session.
using reject_atom = caf::atom_constant<caf::atom("reject")>;
/// POST /v3/movements/{id}/cancel through a session.
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
/// GET /v3/movements/{id} through a session.
using get_atom = caf::atom_constant<caf::atom("get")>;
/// GET /v3/movements?query through a session.
using list_atom = caf::atom_constant<caf::atom("list")>;
/// Subscribe a sibling's actor to movement events (SPEC §6 over §8).
using subscribe_atom = caf::atom_constant<caf::atom("subscribe")>;
/// End a subscription.
using unsub_atom = caf::atom_constant<caf::atom("unsub")>;
/// One pushed movement event: (event_atom, request_id, event_id, seq, json).
using event_atom = caf::atom_constant<caf::atom("event")>;

// Remote providers (issue 6): a sibling offers an executor or a signer as
// an actor; movegate calls it with the port's values as JSON strings
// (domain/provider_json.hpp) and a finite timeout.
/// Register the sender's executor actor under a key, through a session.
using reg_exec_atom = caf::atom_constant<caf::atom("reg_exec")>;
/// Register a signer actor under a key, through a session.
using reg_sign_atom = caf::atom_constant<caf::atom("reg_sign")>;
using preflight_atom = caf::atom_constant<caf::atom("preflight")>;
using prepare_atom = caf::atom_constant<caf::atom("prepare")>;
using submit_atom = caf::atom_constant<caf::atom("submit")>;
using observe_atom = caf::atom_constant<caf::atom("observe")>;
using recover_atom = caf::atom_constant<caf::atom("recover")>;
using health_atom = caf::atom_constant<caf::atom("health")>;
using sign_atom = caf::atom_constant<caf::atom("sign")>;
using abandon_atom = caf::atom_constant<caf::atom("abandon")>;

// --- interfaces ------------------------------------------------------------

/// A supervised background worker (dispatcher, observer, recovery,
/// reconcile sweep, sidecars): a detached actor with its own connection
/// that runs one pass per tick through the shared loop runner.
using worker_actor = caf::typed_actor<
    // Loop timer; the generation tells stale timers apart.
    caf::reacts_to<tick_atom, uint64_t>,
    // Run a pass as soon as possible (coalesced).
    caf::reacts_to<wake_atom>,
    // JSON status: iterations, items, consecutive errors.
    caf::replies_to<status_atom>::with<std::string>>;

/// One of the observer's fixed lanes (actors/workers/node_observer.hpp): a
/// detached actor with its own connection that claims, observes and commits
/// each node it is dealt in its own transaction.
using observe_lane_actor = caf::typed_actor<
    // (observe, node ids) -> (processed, stale, nodes made READY by the
    // observations' reconciles, wake_observer, busy); a database failure
    // answers an error.
    caf::replies_to<observe_atom, std::vector<std::string>>::with<int32_t, int32_t, int32_t, bool,
                                                                  bool>>;

/// One per shard of requests (actors/request_writer.hpp): a detached actor
/// with its own connection that group-commits the node results and
/// reconciles its movement actors hand over. It flushes at once when idle and gathers while a flush
/// is in flight; request rows it cannot lock (SKIP LOCKED) go to its next
/// flush; a deadlock or a lost connection retries the batch, and an item
/// that fails on its own fails alone.
using request_writer_actor = caf::typed_actor<
    // Reconcile a request; replies, once that is committed, whether the
    // reconcile changed it; an error when it could not (the request stays
    // flagged needs_reconcile for the sweep).
    caf::replies_to<reconcile_atom, std::string>::with<bool>,
    // Write a node result, re-checked under the lock against its claim, and
    // reconcile its request; replies true once committed, false when the
    // node had moved on (the result is dropped); an error when it could not
    // be written (its request held too long, or a database failure).
    caf::replies_to<result_atom, handed_result_ptr>::with<bool>,
    // Run the next flush; true when it is the delayed retry of requests
    // another transaction held.
    caf::reacts_to<flush_atom, bool>,
    // {"flushes", "commits", "retries", "reconciled", "pending"}
    caf::replies_to<status_atom>::with<std::string>>;

/// Lives while a request has node results or reconciles waiting (the
/// observer's and recovery's results, operator calls, take-overs):
/// coalesces change messages, hands results and the request to its
/// shard's writer, and quits once nothing is pending.
using movement_actor = caf::typed_actor<
    // A node of this request changed.
    caf::reacts_to<changed_atom>,
    // A node result of this request: the writer's answer (see
    // request_writer_actor).
    caf::replies_to<result_atom, handed_result_ptr>::with<bool>,
    caf::replies_to<status_atom>::with<std::string>>;

/// Routes node changes to the movement actor of their request, spawning
/// it on demand and forgetting it when it quits.
using movement_registry_actor = caf::typed_actor<
    // A node of request `id` changed.
    caf::reacts_to<changed_atom, std::string>,
    // A node result for its request's movement actor (answered by it).
    caf::replies_to<result_atom, handed_result_ptr>::with<bool>,
    // {"active_movements": n, "started_movements": total since start}
    caf::replies_to<status_atom>::with<std::string>>;

/// Owns the worker groups: core fail-fast, sidecar log-and-restart.
using supervisor_actor = caf::typed_actor<
    // Stop every worker; the supervisor then reports (done_atom, 0).
    caf::reacts_to<shutdown_atom>,
    // Internal: restart sidecar member `index` after its backoff.
    caf::reacts_to<restart_atom, uint32_t>,
    // Status of every worker.
    caf::replies_to<status_atom>::with<std::string>>;

// --- cluster front door (SPEC §8) -----------------------------------------
// Every message between nodes uses CAF's built-in types only (atoms,
// std::string, uint64_t, int32_t, caf::actor), so neither side registers a
// type. Errors crossing the wire are caf::error values of category
// `cluster_error_category` whose context is (int32_t status, std::string
// message), e.g. (401, "bad signature").

/// Category atom of the errors the cluster front door answers with.
constexpr caf::atom_value cluster_error_category = caf::atom("movegate");

/// Login proof (SPEC §5's scheme over a login message): signature is the
/// lower-case hex HMAC-SHA256(secret, canonical) with
///   canonical = "LOGIN\n/v3/cluster/login\n\n" + hex(sha256(key_id)) +
///               "\n" + timestamp + "\n" + nonce
/// i.e. domain/api_auth's sign_request(secret, "LOGIN", "/v3/cluster/login",
/// "", key_id, timestamp, nonce): api::sign_cluster_login in
/// domain/api_auth.hpp. Timestamp is unix seconds (±300 s); the nonce
/// (16–128 of [A-Za-z0-9_-]) is remembered in api_nonces like an HTTP one,
/// so a login proof is never accepted twice (nor as an HTTP request: no
/// HTTP method is LOGIN).
//
// A session is a capability, not an address: CAF 0.17 delivers a message
// from any connected peer to any actor id it has ever sent to a peer, so
// holding a session's handle proves nothing. Login therefore also answers
// a random 256-bit session token (64 lower-case hex characters) and every
// session message carries it right after its atom; the session compares it
// in constant time and answers anything else (a wrong token, or a message
// of the older protocol without one) with (401, error body), doing nothing.
// This changed the login reply and every session message: siblings built
// against an older movegate_client must be rebuilt.
//
// Logins are limited: failed ones per peer address (from the middleman;
// all peers of a loopback door share 127.0.0.1), successful ones per key,
// and a key holds at most MG_CLUSTER_MAX_SESSIONS_PER_KEY live sessions;
// each answers 429. A login from a sender that cannot be monitored (an
// anonymous send, or a node the middleman has no connection to) is refused.
using movement_api_actor = caf::typed_actor<
    // (login, key_id, timestamp, nonce, signature_hex) -> (movement_session
    // handle as caf::actor (actor_cast it), session token); 401 error:
    // unknown key, skew, bad nonce or signature, replay, unmonitorable
    // sender; 429 error: too many failed logins from this address, too many
    // logins or live sessions for this key; 503 error: database down.
    caf::replies_to<login_atom, std::string, uint64_t, std::string, std::string>::with<caf::actor,
                                                                                       std::string>,
    caf::replies_to<status_atom>::with<std::string>>;

/// A logged-in sibling's session, bound to its key's scopes. Each call
/// carries the login's session token first and answers (http_like_status,
/// json_body) exactly as the /v3 HTTP call would (403 scope, 429 rate
/// limit, 400…409, 503), through the same service layer (four-eyes,
/// audit); 401 when the token is not this session's. The session ends
/// when the client's actor (the login's sender) goes down, e.g. its node
/// disconnects.
using movement_session = caf::typed_actor<
    // (create, token, body): POST /v3/movements with this JSON body (scope create).
    caf::replies_to<create_atom, std::string, std::string>::with<int32_t, std::string>,
    // (approve, token, id, body): POST /v3/movements/{id}/approve (scope approve).
    caf::replies_to<approve_atom, std::string, std::string, std::string>::with<int32_t,
                                                                               std::string>,
    // (reject, token, id, body): POST /v3/movements/{id}/reject (scope approve).
    caf::replies_to<reject_atom, std::string, std::string, std::string>::with<int32_t, std::string>,
    // (cancel, token, id, body): POST /v3/movements/{id}/cancel (scope approve).
    caf::replies_to<cancel_atom, std::string, std::string, std::string>::with<int32_t, std::string>,
    // (get, token, id): GET /v3/movements/{id} (scope read).
    caf::replies_to<get_atom, std::string, std::string>::with<int32_t, std::string>,
    // (list, token, raw query): GET /v3/movements?<raw query> (scope read),
    // e.g. "state=EXECUTING&limit=10".
    caf::replies_to<list_atom, std::string, std::string>::with<int32_t, std::string>,
    // (subscribe, token, request_id or "" for every request, after_event_id
    // or "", subscriber) (scope read): from now on (or right after event
    // after_event_id, to resume without a gap) `subscriber` receives
    // (event_atom, request_id, event_id, uint64_t seq, item_json) per
    // movement_events row, in seq order, sent anonymously; item_json is the
    // item GET /v3/movements/{id}/events gives. Answers (200, {"request_id",
    // "after_seq"}), 400 bad id, 403 scope, 404 no such request or event.
    // The subscription ends when `subscriber` goes down (or its node).
    caf::replies_to<subscribe_atom, std::string, std::string, std::string,
                    caf::actor>::with<int32_t, std::string>,
    // (unsub, token, request_id or "" for all of them, subscriber): (200, {"removed": n}).
    caf::replies_to<unsub_atom, std::string, std::string, caf::actor>::with<int32_t, std::string>,
    // (reg_exec, token, executor_key, actor) (scope admin): workers call
    // `actor` (a remote_executor_actor) for nodes with that executor_key
    // until it or this session goes down. (200, {"registered", "kind"});
    // 400 bad key; 403 scope; 409 a local provider or another live actor has it.
    caf::replies_to<reg_exec_atom, std::string, std::string, caf::actor>::with<int32_t,
                                                                               std::string>,
    // (reg_sign, token, signer_key, actor): as reg_exec, for a remote_signer_actor.
    caf::replies_to<reg_sign_atom, std::string, std::string, caf::actor>::with<int32_t,
                                                                               std::string>>;

/// One per serve process, linked to the movement_api: polls new
/// movement_events rows (one short read per ~100 ms tick, only while
/// someone is subscribed) and pushes each to the subscribers whose filter
/// it matches; monitors every subscriber and forgets it when it goes down.
/// Sessions ask it (never delegate: the answer's sender would reveal the
/// fan-out's handle to the peer) after their token and scope checks; its
/// handle never leaves the process and its pushes are anonymous.
using event_fanout_actor = caf::typed_actor<
    // As movement_session's subscribe, scope already checked.
    caf::replies_to<subscribe_atom, std::string, std::string, caf::actor>::with<int32_t,
                                                                                std::string>,
    // As movement_session's unsub.
    caf::replies_to<unsub_atom, std::string, caf::actor>::with<int32_t, std::string>,
    // Poll timer; the generation tells stale timers apart.
    caf::reacts_to<tick_atom, uint64_t>,
    // {"subscribers": n, "subscriptions": n, "delivered": n, "cursor": seq}
    caf::replies_to<status_atom>::with<std::string>>;

/// An executor a sibling offers (domain::executor over messages). Every
/// argument and answer is JSON text of domain/provider_json.hpp; "null"
/// stands for nullopt (preflight: go on; prepare: nothing to submit) and
/// for no signature. A failure is any caf::error answer (e.g. category
/// cluster_error_category with (int32_t, message)); movegate treats it,
/// a timeout (MG_EXECUTOR_TIMEOUT_SECONDS) or a lost peer as
/// domain::executor_error.
using remote_executor_actor = caf::typed_actor<
    caf::replies_to<preflight_atom, std::string>::with<std::string>, // ctx → step_result|null
    caf::replies_to<prepare_atom, std::string>::with<std::string>,   // ctx → prepared_action|null
    // (ctx, prepared_action, sign_result|null) → step_result
    caf::replies_to<submit_atom, std::string, std::string, std::string>::with<std::string>,
    caf::replies_to<observe_atom, std::string>::with<std::string>, // ctx → step_result
    caf::replies_to<recover_atom, std::string>::with<std::string>, // ctx → recover_result
    caf::replies_to<health_atom>::with<std::string>,               // → health_result
    // (ctx, prepared_action) → "{}": domain::executor::abandon, best effort
    caf::replies_to<abandon_atom, std::string, std::string>::with<std::string>>;

/// A signer a sibling offers, as remote_executor_actor.
using remote_signer_actor =
    caf::typed_actor<caf::replies_to<sign_atom, std::string>::with<std::string>, // sign_request →
                                                                                 // sign_result
                     caf::replies_to<health_atom>::with<std::string>>; // → health_result

/// Watches the middleman connections to the cluster's other processes
/// (actors/cluster/peer_watch): ticks re-read cluster_nodes for new peers.
using peer_watch_actor = caf::typed_actor<caf::reacts_to<tick_atom>>;

} // namespace mg::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mg::actors::handed_result_ptr)
