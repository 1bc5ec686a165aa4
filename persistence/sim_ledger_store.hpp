#pragma once
// The `sim` provider's own at-most-once ledger (`sim_ledger`): what it has
// accepted and what recovery fenced. Written on the provider's own
// connections, never inside the engine's transactions, so a record is
// durable before the provider answers.
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

/// One attempt as the ledger keys it.
struct sim_ledger_key {
  std::string idempotency_key;
  std::string node_id;
  int attempt_no = 0;
  std::string action_type;
};

/// How a submit's ledger write ended.
enum class sim_accept_outcome {
  accepted, // a new record, or an earlier accepted one of the same key
  fenced,   // recovery fenced the key: the submit is refused
};

/// Records `key` as accepted (idempotent for an accepted key) in `w`, which
/// must autocommit (a nontransaction): the record is durable when this
/// returns.
sim_accept_outcome sim_ledger_accept(pqxx::transaction_base& w, const sim_ledger_key& key);

/// sim_ledger_accept for several keys in one statement (one commit for
/// all): the outcomes in the keys' order, every record durable on return.
std::vector<sim_accept_outcome> sim_ledger_accept_all(pqxx::transaction_base& w,
                                                      const std::vector<sim_ledger_key>& keys);

/// Recovery: fences `key` unless the ledger has it, in `tx` (committed by
/// the caller). True when the key is fenced (now or before), false when an
/// accepted record exists.
bool sim_ledger_fence(pqxx::transaction_base& tx, const sim_ledger_key& key);

} // namespace mg::db
