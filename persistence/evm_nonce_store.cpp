#include "persistence/evm_nonce_store.hpp"

#include <stdexcept>

#include "persistence/db.hpp"

namespace mg::db {

namespace {

long long as_bigint(std::uint64_t v) {
  return static_cast<long long>(v);
}

evm_reservation reservation_of(const pqxx::row& r) {
  evm_reservation out;
  out.sender.chain_id = r["chain_id"].as<std::uint64_t>();
  out.sender.address = r["address"].c_str();
  out.nonce = r["nonce"].as<std::uint64_t>();
  out.state = r["state"].c_str();
  out.idempotency_key = r["idempotency_key"].is_null() ? "" : r["idempotency_key"].c_str();
  out.tx_hash = r["tx_hash"].is_null() ? "" : r["tx_hash"].c_str();
  return out;
}

const char* reservation_columns = "chain_id, address, nonce, state, idempotency_key, tx_hash";

} // namespace

std::uint64_t reserve_nonce(pqxx::connection& c, const evm_sender& s, const nonce_owner& owner,
                            std::uint64_t chain_mined, std::uint64_t chain_pending) {
  static const statement existing{
      "evm_nonce_existing",
      "SELECT nonce, state FROM evm_nonce_reservation WHERE idempotency_key = $1 FOR UPDATE"};
  static const statement take_reclaimed{
      "evm_nonce_take_reclaimed",
      "UPDATE evm_nonce_reservation SET state = 'reserved', idempotency_key = $3, node_id = $4,"
      " attempt_no = $5, reserved_at = clock_timestamp(), updated_at = clock_timestamp()"
      " WHERE id = (SELECT id FROM evm_nonce_reservation WHERE chain_id = $1 AND address = $2"
      "   AND state = 'reclaimed' AND nonce >= $6 ORDER BY nonce LIMIT 1 FOR UPDATE SKIP LOCKED)"
      " RETURNING nonce"};
  static const statement insert_next{
      "evm_nonce_insert_next",
      "INSERT INTO evm_nonce_reservation (chain_id, address, nonce, state, idempotency_key,"
      " node_id, attempt_no)"
      " SELECT $1, $2, GREATEST($6::bigint, COALESCE(MAX(nonce) + 1, 0)), 'reserved', $3, $4, $5"
      " FROM evm_nonce_reservation WHERE chain_id = $1 AND address = $2"
      " ON CONFLICT (chain_id, address, nonce) DO NOTHING RETURNING nonce"};
  for (int tries = 0; tries < 1000; ++tries) {
    pqxx::work tx(c);
    auto held = exec(tx, existing, owner.idempotency_key);
    if (!held.empty()) {
      if (std::string(held[0][1].c_str()) != "reserved")
        throw std::logic_error("attempt " + owner.idempotency_key + " already broadcast at nonce " +
                               held[0][0].c_str());
      tx.commit();
      return held[0][0].as<std::uint64_t>();
    }
    auto reused = exec(tx, take_reclaimed, as_bigint(s.chain_id), s.address, owner.idempotency_key,
                       owner.node_id, owner.attempt_no, as_bigint(chain_mined));
    if (reused.empty())
      reused = exec(tx, insert_next, as_bigint(s.chain_id), s.address, owner.idempotency_key,
                    owner.node_id, owner.attempt_no, as_bigint(chain_pending));
    if (!reused.empty()) {
      tx.commit();
      return reused[0][0].as<std::uint64_t>();
    }
    // Another reserver took the same next nonce first: look again.
    tx.abort();
  }
  throw std::runtime_error("could not reserve a nonce for " + s.address);
}

store_outcome store_signed(pqxx::connection& c, const evm_sender& s, const nonce_owner& owner,
                           std::uint64_t nonce, const std::string& raw,
                           const std::string& tx_hash) {
  static const statement lock_reservation{
      "evm_store_lock",
      "SELECT state FROM evm_nonce_reservation WHERE idempotency_key = $1 AND chain_id = $2"
      " AND address = $3 AND nonce = $4 FOR UPDATE"};
  static const statement insert_attempt{
      "evm_store_attempt",
      "INSERT INTO evm_tx_attempts (idempotency_key, node_id, attempt_no, chain_id, address, nonce,"
      " status, signed_raw, tx_hash) VALUES ($1, $2, $3, $4, $5, $6, 'signed', $7, $8)"
      " ON CONFLICT (idempotency_key) DO NOTHING RETURNING 1"};
  static const statement same_attempt{
      "evm_store_same",
      "SELECT 1 FROM evm_tx_attempts WHERE idempotency_key = $1 AND status = 'signed'"
      " AND tx_hash = $2"};
  static const statement mark_broadcast{
      "evm_store_mark", "UPDATE evm_nonce_reservation SET state = 'broadcast', tx_hash = $2,"
                        " updated_at = clock_timestamp() WHERE idempotency_key = $1"};
  pqxx::work tx(c);
  auto held = exec(tx, lock_reservation, owner.idempotency_key, as_bigint(s.chain_id), s.address,
                   as_bigint(nonce));
  if (held.empty())
    return store_outcome::refused;
  const std::string state = held[0][0].c_str();
  if (state != "reserved") {
    auto same = exec(tx, same_attempt, owner.idempotency_key, tx_hash);
    return same.empty() ? store_outcome::refused : store_outcome::already_stored;
  }
  pqxx::binarystring bytes(raw);
  if (exec(tx, insert_attempt, owner.idempotency_key, owner.node_id, owner.attempt_no,
           as_bigint(s.chain_id), s.address, as_bigint(nonce), bytes, tx_hash)
          .empty())
    return store_outcome::refused; // a fenced tombstone holds the key
  exec(tx, mark_broadcast, owner.idempotency_key, tx_hash);
  tx.commit();
  return store_outcome::stored;
}

std::optional<evm_attempt> find_attempt(pqxx::connection& c, const std::string& idempotency_key) {
  static const statement q{"evm_find_attempt",
                           "SELECT status, chain_id, address, nonce, signed_raw, tx_hash"
                           " FROM evm_tx_attempts WHERE idempotency_key = $1"};
  pqxx::read_transaction tx(c);
  auto rows = exec(tx, q, idempotency_key);
  if (rows.empty())
    return std::nullopt;
  auto r = rows[0];
  evm_attempt a;
  a.status = r[0].c_str();
  if (a.status == "signed") {
    a.sender.chain_id = r[1].as<std::uint64_t>();
    a.sender.address = r[2].c_str();
    a.nonce = r[3].as<std::uint64_t>();
    a.raw = pqxx::binarystring(r[4]).str();
    a.tx_hash = r[5].c_str();
  }
  return a;
}

std::optional<evm_reservation> find_reservation(pqxx::connection& c,
                                                const std::string& idempotency_key) {
  pqxx::read_transaction tx(c);
  return find_reservation(tx, idempotency_key);
}

std::optional<evm_reservation> find_reservation(pqxx::transaction_base& tx,
                                                const std::string& idempotency_key) {
  static const statement q{"evm_find_reservation",
                           std::string("SELECT ") + reservation_columns +
                               " FROM evm_nonce_reservation WHERE idempotency_key = $1"};
  auto rows = exec(tx, q, idempotency_key);
  if (rows.empty())
    return std::nullopt;
  return reservation_of(rows[0]);
}

std::optional<evm_reservation> fence_attempt(pqxx::connection& c, const nonce_owner& owner,
                                             bool& had_bytes) {
  static const statement lock_reservation{
      "evm_fence_lock", std::string("SELECT ") + reservation_columns +
                            " FROM evm_nonce_reservation WHERE idempotency_key = $1 FOR UPDATE"};
  static const statement tombstone{
      "evm_fence_tombstone",
      "INSERT INTO evm_tx_attempts (idempotency_key, node_id, attempt_no, status)"
      " VALUES ($1, $2, $3, 'fenced') ON CONFLICT (idempotency_key) DO NOTHING"};
  static const statement status_of{"evm_fence_status",
                                   "SELECT status FROM evm_tx_attempts WHERE idempotency_key = $1"};
  pqxx::work tx(c);
  // The reservation row lock orders this against store_signed.
  auto held = exec(tx, lock_reservation, owner.idempotency_key);
  exec(tx, tombstone, owner.idempotency_key, owner.node_id, owner.attempt_no);
  had_bytes = std::string(exec(tx, status_of, owner.idempotency_key)[0][0].c_str()) == "signed";
  tx.commit();
  if (had_bytes || held.empty())
    return std::nullopt;
  auto r = reservation_of(held[0]);
  if (r.state != "reserved")
    return std::nullopt;
  return r;
}

void mark_fencing(pqxx::connection& c, const evm_sender& s, std::uint64_t nonce,
                  const std::string& fence_hash) {
  static const statement q{
      "evm_mark_fencing",
      "UPDATE evm_nonce_reservation SET state = 'fencing', tx_hash = $4,"
      " updated_at = clock_timestamp() WHERE chain_id = $1 AND address = $2 AND nonce = $3"
      " AND state IN ('reserved', 'broadcast', 'fencing')"};
  pqxx::work tx(c);
  exec(tx, q, as_bigint(s.chain_id), s.address, as_bigint(nonce), fence_hash);
  tx.commit();
}

void mark_consumed(pqxx::connection& c, const evm_sender& s, std::uint64_t nonce) {
  static const statement q{"evm_mark_consumed",
                           "UPDATE evm_nonce_reservation SET state = 'consumed',"
                           " updated_at = clock_timestamp() WHERE chain_id = $1 AND address = $2"
                           " AND nonce = $3 AND state <> 'consumed'"};
  pqxx::work tx(c);
  exec(tx, q, as_bigint(s.chain_id), s.address, as_bigint(nonce));
  tx.commit();
}

bool release_reservation(pqxx::connection& c, const std::string& idempotency_key) {
  static const statement q{
      "evm_release_reservation",
      "UPDATE evm_nonce_reservation SET state = 'reclaimed', idempotency_key = NULL,"
      " node_id = NULL, attempt_no = NULL, updated_at = clock_timestamp()"
      " WHERE idempotency_key = $1 AND state = 'reserved' RETURNING id"};
  pqxx::work tx(c);
  auto rows = exec(tx, q, idempotency_key);
  tx.commit();
  return !rows.empty();
}

int reclaim_stale_reservations(pqxx::connection& c, double older_than_seconds, int limit) {
  static const statement q{
      "evm_reclaim_stale",
      "UPDATE evm_nonce_reservation r SET state = 'reclaimed', idempotency_key = NULL,"
      " node_id = NULL, attempt_no = NULL, updated_at = clock_timestamp()"
      " WHERE r.id IN (SELECT x.id FROM evm_nonce_reservation x"
      "   WHERE x.state = 'reserved'"
      "     AND x.reserved_at < clock_timestamp() - make_interval(secs => $1)"
      "     AND NOT EXISTS (SELECT 1 FROM movement_request_nodes n"
      "                     WHERE n.id = x.node_id AND n.attempt_no >= x.attempt_no)"
      "   ORDER BY x.reserved_at LIMIT $2 FOR UPDATE SKIP LOCKED)"
      " RETURNING r.id"};
  pqxx::work tx(c);
  auto rows = exec(tx, q, older_than_seconds, limit);
  tx.commit();
  return static_cast<int>(rows.size());
}

std::vector<evm_reservation> open_broadcasts(pqxx::connection& c, int limit) {
  static const statement q{"evm_open_broadcasts",
                           std::string("SELECT ") + reservation_columns +
                               " FROM evm_nonce_reservation WHERE state IN ('broadcast', 'fencing')"
                               " ORDER BY reserved_at LIMIT $1"};
  pqxx::read_transaction tx(c);
  std::vector<evm_reservation> out;
  for (const auto& r : exec(tx, q, limit))
    out.push_back(reservation_of(r));
  return out;
}

} // namespace mg::db
