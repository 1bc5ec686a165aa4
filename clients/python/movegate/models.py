"""Typed results of the /v3 API (SPEC §5).

Each class is built from the server's JSON by `from_json`; members this
version does not know are kept in `raw`, so nothing the server sends is lost.
Amounts stay decimal strings, never floats.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, ClassVar, Generic, TypeVar

REQUEST_STATES = (
    "PENDING_APPROVAL",
    "APPROVED",
    "EXECUTING",
    "WAITING_MANUAL_ACTION",
    "MANUAL_INTERVENTION",
    "COMPLETED",
    "FAILED",
    "REJECTED",
    "EXPIRED",
    "CANCELLED",
)
TERMINAL_STATES = frozenset({"COMPLETED", "FAILED", "REJECTED", "EXPIRED", "CANCELLED"})

T = TypeVar("T")


def _list_of(model):
    return lambda items: [model.from_json(x) for x in items]


@dataclass(kw_only=True)
class Model:
    """Base of every result: `raw` holds the object exactly as the server sent it."""

    raw: dict = field(default_factory=dict, repr=False)
    # Members holding nested objects, and how to build them.
    _nested: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    @classmethod
    def from_json(cls, data: dict):
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        values = {}
        for f in fields(cls):
            if f.name == "raw" or f.name not in data:
                continue
            value = data[f.name]
            convert = cls._nested.get(f.name)
            values[f.name] = convert(value) if convert and value is not None else value
        return cls(**values, raw=data)


@dataclass(kw_only=True)
class Node(Model):
    node_key: str = ""
    node_kind: str | None = None
    action_type: str = ""
    node_state: str = ""
    attempt_no: int = 0
    provider_state: str | None = None
    provider_refs: Any = None
    error_code: str | None = None
    started_at: str | None = None
    updated_at: str | None = None
    artifacts: dict[str, int] = field(default_factory=dict)


@dataclass(kw_only=True)
class NodeStateRef(Model):
    node_key: str = ""
    node_state: str = ""


@dataclass(kw_only=True)
class Movement(Model):
    """A movement request. List items carry no `nodes`; `deduplicated` is set
    on create answers, `unresolved_nodes` on retry answers."""

    id: str = ""
    template_key: str = ""
    template_version: int = 0
    compiled_plan_hash: str = ""
    request_state: str = ""
    approval_status: str = ""
    approved_by: str | None = None
    created_by: str | None = None
    intent: dict = field(default_factory=dict)
    input_params: dict = field(default_factory=dict)
    current_frontier: list[str] = field(default_factory=list)
    callback_url: str | None = None
    expires_at: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    nodes: list[Node] = field(default_factory=list)
    deduplicated: bool | None = None
    unresolved_nodes: list[NodeStateRef] | None = None

    _nested: ClassVar = {"nodes": _list_of(Node), "unresolved_nodes": _list_of(NodeStateRef)}

    @property
    def terminal(self) -> bool:
        return self.request_state in TERMINAL_STATES

    def node(self, node_key: str) -> Node:
        for n in self.nodes:
            if n.node_key == node_key:
                return n
        raise KeyError(node_key)


@dataclass(kw_only=True)
class TimelineEntry(Model):
    """One entry of GET /v3/movements/{id}/events: an event (`kind` "event":
    event_type, node_key, payload) or an audit row (`kind` "audit": action,
    actor, detail)."""

    kind: str = ""
    id: str = ""
    occurred_at: str = ""
    event_type: str | None = None
    node_key: str | None = None
    payload: Any = None
    action: str | None = None
    actor: str | None = None
    detail: Any = None


@dataclass(kw_only=True)
class Template(Model):
    template_key: str = ""
    version: int = 0
    graph_hash: str = ""
    risk_controls: dict = field(default_factory=dict)
    plan: dict = field(default_factory=dict)
    created_at: str | None = None


@dataclass(kw_only=True)
class TemplateVersions(Model):
    """GET /v3/templates/{key}: every version, newest first."""

    template_key: str = ""
    latest_version: int = 0
    versions: list[Template] = field(default_factory=list)

    _nested: ClassVar = {"versions": _list_of(Template)}


@dataclass(kw_only=True)
class TemplateProposal(Model):
    id: str = ""
    template_key: str = ""
    state: str = ""
    proposed_by: str = ""
    reviewed_by: str | None = None
    expires_at: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    plan: dict = field(default_factory=dict)
    published_version: int | None = None


@dataclass(kw_only=True)
class Balance(Model):
    venue_key: str = ""
    asset: str = ""
    amount: str = ""
    fetched_at: str = ""
    stale: bool = False


@dataclass(kw_only=True)
class VenueError(Model):
    venue_key: str | None = None
    message: str = ""


@dataclass(kw_only=True)
class Balances(Model):
    items: list[Balance] = field(default_factory=list)
    stale_threshold_seconds: float = 0.0
    errors: list[VenueError] = field(default_factory=list)

    _nested: ClassVar = {"items": _list_of(Balance), "errors": _list_of(VenueError)}


@dataclass(kw_only=True)
class Executor(Model):
    executor_key: str = ""
    runtime_node: str = ""
    health_state: str = ""
    last_health_checked_at: str | None = None


@dataclass(kw_only=True)
class SignerProcess(Model):
    runtime_node: str = ""
    health_state: str = ""
    observed_signer_address: str | None = None
    status: str = ""
    last_health_checked_at: str | None = None


@dataclass(kw_only=True)
class Signer(Model):
    signer_key: str = ""
    expected_signer_address: str | None = None
    posture: str = ""
    processes: list[SignerProcess] = field(default_factory=list)

    _nested: ClassVar = {"processes": _list_of(SignerProcess)}


@dataclass(kw_only=True)
class Page(Generic[T]):
    """One page of a list: its items and the cursor of the next (None at the end)."""

    items: list[T]
    next_cursor: str | None
