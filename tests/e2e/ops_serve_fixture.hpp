#pragma once
// The operator-facing e2e tests' `movegate serve` (metrics, OpenAPI, CLI,
// admin page): a creator and an approver key, one sim template that
// completes in two steps.
#include <fstream>

#include "tests/support/serve_fixture.hpp"

namespace mg::test::ops {

using namespace std::chrono_literals;
using test::free_port;
using test::run_shell;
using test::shell_result;

inline const api_key_spec creator{"ops-creator", "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c",
                                  R"(["create", "read"])"};
inline const api_key_spec approver{"ops-approver", "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a",
                                   R"(["approve", "read"])"};
/// May create and approve: only four-eyes refuses its approval of its own
/// movement (the tests that need it add it to `keys`).
inline const api_key_spec creator_approver{"ops-both", "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
                                           R"(["create", "approve", "read"])"};

inline std::string field(const std::string& body, const char* name) {
  return json_field(body, name);
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

inline std::string key_entry(const api_key_spec& k) {
  return "{\"key_id\": \"" + k.id + "\", \"secret\": \"" + k.secret +
         "\", \"scopes\": " + k.scopes_json + "}";
}

struct ops_fixture : serve_fixture {
  ops_fixture() {
    keys = {creator, approver};
    add_template(R"({"template_key": "ops_chain", "version": 1,
      "nodes": [
        {"node_key": "send", "action_type": "chain_transfer", "executor_key": "sim",
         "side_effect": true, "config": {"to": "0xabc"}},
        {"node_key": "confirm", "action_type": "destination_chain_finality_observe",
         "executor_key": "sim", "config": {"tx": "$ref:send.tx_hash",
         "sim": {"polls_until_done": 1, "retry_after_seconds": 0}}}],
      "edges": [["send", "confirm"]]})");
  }

  std::string create(const std::string& idem) {
    auto created = client(creator).post(
        "/v3/movements",
        R"({"template_key": "ops_chain", "intent": {"asset": "USDC", "amount": "5"},
          "idempotency_key": ")" +
            idem + "\"}");
    BOOST_REQUIRE_MESSAGE(created.status == 201, created.body);
    return field(created.body, "id");
  }
};

} // namespace mg::test::ops
