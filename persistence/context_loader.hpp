#pragma once
// build_execution_context (reference §1): everything an executor call needs,
// read in the claiming transaction.
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "domain/executor.hpp"
#include "persistence/node_store.hpp"
#include "persistence/template_store.hpp"

namespace mg::db {

struct context_result {
  bool ok = false;
  domain::execution_context ctx;
  std::string error_code; // CONFIG_REF_UNRESOLVED when a $ref cannot be resolved
  std::string error_detail;
};

/// `attempt_no` is the attempt the call belongs to (the dispatcher passes
/// the next one; observer and recovery the current one).
context_result build_context(pqxx::transaction_base& tx, const claimed_node& n,
                             const stored_plan& plan, int attempt_no);

struct context_request {
  const claimed_node* node = nullptr;
  const stored_plan* plan = nullptr;
  int attempt_no = 0;
};

/// A scalar subquery on a node row `n` and its request row `r` that reads
/// what a context needs of the database: the request's COMPLETED nodes'
/// provider_refs and, for the node's direct predecessors, their latest
/// attempt's artifacts. The dispatch claims select it (a claimed node's
/// `completed_for_context`), so a context costs no round trip of its own.
extern const char* const completed_nodes_sql;

/// The contexts of several nodes, read in one statement (none for a node
/// whose claim read its `completed_for_context`, in the same transaction);
/// answered in the order of `wanted`, each as build_context would have
/// built it.
std::vector<context_result> build_contexts(pqxx::transaction_base& tx,
                                           const std::vector<context_request>& wanted);

} // namespace mg::db
