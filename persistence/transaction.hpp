#pragma once
// Transactions for the layers above persistence/ (services, the CLI): they
// decide what belongs in one unit of work, persistence decides how it is
// opened.
#include <pqxx/pqxx>
#include <type_traits>

namespace mg::db {

/// Runs `body(tx)` in one read-write transaction and answers what body
/// answers. Its writes land only when body calls tx.commit(); returning or
/// throwing without a commit rolls them all back.
template <class F> decltype(auto) in_transaction(pqxx::connection& c, F&& body) {
  pqxx::work tx(c);
  return body(static_cast<pqxx::transaction_base&>(tx));
}

/// in_transaction that commits when body returns (a throw rolls back).
template <class F> decltype(auto) committed(pqxx::connection& c, F&& body) {
  pqxx::work tx(c);
  if constexpr (std::is_void_v<decltype(body(static_cast<pqxx::transaction_base&>(tx)))>) {
    body(static_cast<pqxx::transaction_base&>(tx));
    tx.commit();
  } else {
    auto result = body(static_cast<pqxx::transaction_base&>(tx));
    tx.commit();
    return result;
  }
}

/// Runs `body(tx)` in a read-only transaction (rolled back at the end).
template <class F> decltype(auto) read_only(pqxx::connection& c, F&& body) {
  pqxx::read_transaction tx(c);
  return body(static_cast<pqxx::transaction_base&>(tx));
}

} // namespace mg::db
