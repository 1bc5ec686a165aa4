"""Templates and keys the client tests run against (sim executor only)."""


def _plan(key, nodes, edges=(), risk=None):
    plan = {"template_key": key, "version": 1, "nodes": nodes, "edges": [list(e) for e in edges]}
    if risk:
        plan["risk_controls"] = risk
    return plan


# send → confirm, both instant: completes within moments of approval.
CHAIN = _plan(
    "py_chain",
    [
        {"node_key": "send", "action_type": "chain_transfer", "executor_key": "sim",
         "side_effect": True, "config": {"to": "$ref:input.to"}},
        {"node_key": "confirm", "action_type": "destination_chain_finality_observe",
         "executor_key": "sim", "config": {"tx": "$ref:send.tx_hash",
                                           "sim": {"polls_until_done": 1, "retry_after_seconds": 0}}},
    ],
    [("send", "confirm")],
    {"max_amount": "1000"},
)

# A manual node parks the request in WAITING_MANUAL_ACTION until completed.
MANUAL = _plan(
    "py_manual",
    [{"node_key": "sign_off", "action_type": "manual_sign_off", "executor_key": "sim"}],
)

# The provider refuses the submit: the request ends FAILED (no side effect).
FAILING = _plan(
    "py_failing",
    [{"node_key": "check", "action_type": "protocol_observe", "executor_key": "sim",
      "config": {"sim": {"fail_at": "submit"}}}],
)

TEMPLATES = [CHAIN, MANUAL, FAILING]

KEYS = {
    "maker": ("maker-secret-0123456789abcdef", ["create", "read"]),
    "checker": ("checker-secret-0123456789abcd", ["approve", "read"]),
    "reader": ("reader-secret-0123456789abcde", ["read"]),
    "admin-1": ("admin1-secret-0123456789abcde", ["admin", "read"]),
    "admin-2": ("admin2-secret-0123456789abcde", ["admin", "read"]),
    "both": ("both-secret-0123456789abcdefgh", ["create", "approve", "read"]),
    "burst": ("burst-secret-0123456789abcdefg", ["read"]),
}

INTENT = {"asset": "USDC", "amount": "12.5", "destination": "0xdef"}
