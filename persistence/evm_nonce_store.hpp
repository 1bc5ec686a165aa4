#pragma once
// EVM nonce reservations and broadcast attempts (0005_evm.sql): the
// protocol that never hands one nonce to two attempts and never reuses a
// nonce whose signed transaction may still be mined. Every call runs in
// its own short transaction on a connection of the executor's own, so its
// effects are durable whatever the engine's transactions do.
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

/// A sending account on a chain; address is `0x` + 40 lower-case hex.
struct evm_sender {
  std::uint64_t chain_id = 0;
  std::string address;
};

/// The attempt that holds a reservation.
struct nonce_owner {
  std::string idempotency_key; // <node_id>:<attempt_no>
  std::string node_id;
  int attempt_no = 0;
};

/// The nonce `owner` holds: its existing reservation when prepare runs again
/// for the same attempt; else the sender's lowest reclaimed nonce not below
/// `chain_mined` (the chain's latest transaction count); else one past the
/// highest reserved, and at least `chain_pending`. Concurrent callers get
/// distinct nonces (unique constraint, SKIP LOCKED). Throws std::logic_error
/// when the owner's reservation has already moved past `reserved`.
std::uint64_t reserve_nonce(pqxx::connection& c, const evm_sender& s, const nonce_owner& owner,
                            std::uint64_t chain_mined, std::uint64_t chain_pending);

/// Gives back the nonce `idempotency_key`'s attempt holds while it is still
/// only `reserved` (nothing signed was stored, so nothing can have been
/// broadcast): it becomes `reclaimed`, the next reserver's first pick. True
/// when a reservation was released.
bool release_reservation(pqxx::connection& c, const std::string& idempotency_key);

enum class store_outcome {
  stored,         // the bytes are the attempt's now: broadcast them
  already_stored, // the same bytes were stored before (a repeated submit)
  refused,        // the key lost its nonce (reclaimed) or was fenced: never broadcast
};

/// Records the signed bytes of `owner`'s attempt at `nonce` before anything
/// is broadcast: reservation reserved → broadcast, plus the attempt row,
/// in one transaction.
store_outcome store_signed(pqxx::connection& c, const evm_sender& s, const nonce_owner& owner,
                           std::uint64_t nonce, const std::string& raw, const std::string& tx_hash);

struct evm_attempt {
  std::string status; // signed | fenced
  evm_sender sender;
  std::uint64_t nonce = 0;
  std::string raw; // the exact bytes broadcast (signed only)
  std::string tx_hash;
};
std::optional<evm_attempt> find_attempt(pqxx::connection& c, const std::string& idempotency_key);

struct evm_reservation {
  evm_sender sender;
  std::uint64_t nonce = 0;
  std::string state;
  std::string idempotency_key;
  std::string tx_hash;
};
std::optional<evm_reservation> find_reservation(pqxx::connection& c,
                                                const std::string& idempotency_key);
/// The same inside the caller's transaction (the dispatcher's claim reads
/// the attempt's reservation before it lets anything be signed).
std::optional<evm_reservation> find_reservation(pqxx::transaction_base& tx,
                                                const std::string& idempotency_key);

/// Makes `owner`'s key unable to store signed bytes ever again (a 'fenced'
/// attempt row). Returns the reservation it held when it held one in state
/// `reserved` (its nonce still needs a fence on chain), and sets `had_bytes`
/// when the attempt had stored signed bytes (then nothing is fenced).
std::optional<evm_reservation> fence_attempt(pqxx::connection& c, const nonce_owner& owner,
                                             bool& had_bytes);

/// A 0-value self-send was broadcast at the nonce (no stored bytes, or bytes
/// the node refused): state fencing, its hash.
void mark_fencing(pqxx::connection& c, const evm_sender& s, std::uint64_t nonce,
                  const std::string& fence_hash);
/// The chain shows the nonce used: state consumed.
void mark_consumed(pqxx::connection& c, const evm_sender& s, std::uint64_t nonce);

/// evm_nonce_reaper: frees reservations older than `older_than_seconds`
/// that are still `reserved` and whose node never reached SUBMITTING with
/// that attempt (its claim transaction rolled back or failed before it):
/// nothing signed was ever stored, so nothing can be broadcast. Returns the
/// number freed; SKIP LOCKED, so two reapers never free one row twice.
int reclaim_stale_reservations(pqxx::connection& c, double older_than_seconds, int limit);

/// Reservations whose transaction may be on chain (broadcast, fencing),
/// oldest first: the reaper releases each once the chain shows its nonce used.
std::vector<evm_reservation> open_broadcasts(pqxx::connection& c, int limit);

} // namespace mg::db
