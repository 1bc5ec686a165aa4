"""A signed client for movegate's /v3 API (SPEC §5), standard library only."""

from __future__ import annotations

import http.client
import json
import ssl
import time
import urllib.parse
import uuid
from typing import Any, Callable, Iterable, Iterator, TypeVar

from . import errors
from .models import (
    REQUEST_STATES,
    TERMINAL_STATES,
    Balances,
    Executor,
    Movement,
    Page,
    Signer,
    Template,
    TemplateProposal,
    TemplateVersions,
    TimelineEntry,
)
from .signing import percent_encode, signed_headers

T = TypeVar("T")

_RETRYABLE_STATUSES = frozenset({503})
# movegate's answers are far smaller (a page is at most 200 items); a peer
# that sends more is not taken at its word and never fills the memory.
DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024


def new_idempotency_key() -> str:
    """A fresh key in the server's alphabet ([A-Za-z0-9._:-], at most 128)."""
    return "py-" + uuid.uuid4().hex


def _segment(value: str) -> str:
    """One path segment on the wire: a '/' or '?' in an id must not change
    the path that is signed and routed."""
    if not isinstance(value, str) or not value:
        raise ValueError("path segments must be non-empty strings")
    return percent_encode(value)


def _query(params: dict[str, Any]) -> str:
    """'?k=v&…' of the parameters that are set; '' when none is."""
    pairs = [(k, v) for k, v in params.items() if v is not None]
    if not pairs:
        return ""
    return "?" + "&".join(f"{percent_encode(k)}={percent_encode(str(v))}" for k, v in pairs)


def _json_body(members: dict[str, Any]) -> bytes:
    return json.dumps(
        {k: v for k, v in members.items() if v is not None}, separators=(",", ":")
    ).encode("utf-8")


class Client:
    """Signs every call with the key's secret; raises an `errors.ApiError`
    subclass for every refusal.

    Reads, PUTs and creates (idempotent by their key) are retried up to
    `retries` times on a broken connection or a 503, each attempt signed
    afresh; operator transitions are never resent, since a lost answer may
    hide a change that happened.
    """

    def __init__(
        self,
        base_url: str,
        key_id: str,
        secret: str | bytes,
        *,
        timeout: float = 10.0,
        retries: int = 2,
        retry_delay: float = 0.5,
        clock: Callable[[], float] = time.time,
        ssl_context: ssl.SSLContext | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    ):
        url = urllib.parse.urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError("base_url must be http(s)://host[:port]")
        if url.path not in ("", "/") or url.query or url.fragment:
            # The signature covers the path as sent; a prefix a proxy strips
            # would make every signature wrong.
            raise ValueError("base_url must not carry a path, query or fragment")
        self._scheme = url.scheme
        self._host = url.hostname
        self._port = url.port
        self._key_id = key_id
        self._secret = secret
        self._timeout = timeout
        self._retries = retries
        self._retry_delay = retry_delay
        self._clock = clock
        self._ssl_context = ssl_context
        self._max_answer_bytes = max_answer_bytes

    # --- transport --------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        if self._scheme == "https":
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=self._timeout, context=self._ssl_context
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)

    def _send_once(self, method: str, target: str, body: bytes) -> tuple[int, dict, bytes]:
        headers = signed_headers(self._key_id, self._secret, method, target, body, self._clock())
        headers["Accept"] = "application/json"
        if body:
            headers["Content-Type"] = "application/json"
        conn = self._connection()
        try:
            try:
                conn.request(method, target, body=body, headers=headers)
            except (BrokenPipeError, ConnectionResetError) as e:
                # The server may refuse early (413 for a body over its limit)
                # and close before reading the rest: its answer may still be
                # there to read.
                if conn.sock is None:
                    raise
                send_error = e
            else:
                send_error = None
            try:
                response = conn.getresponse()
                data = response.read(self._max_answer_bytes + 1)
            except (OSError, http.client.HTTPException):
                if send_error is not None:
                    raise send_error from None
                raise
            if len(data) > self._max_answer_bytes:
                raise errors.MovegateError(
                    f"{method} {target}: answer over {self._max_answer_bytes} bytes"
                )
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        except (OSError, http.client.HTTPException) as e:
            raise errors.TransportError(f"{method} {target}: {e}") from e
        finally:
            conn.close()

    def request(
        self, method: str, target: str, body: bytes = b"", *, idempotent: bool | None = None
    ) -> Any:
        """Sends one signed call to `target` (path and raw query, exactly as
        they go on the wire) and answers its decoded JSON body."""
        if idempotent is None:
            idempotent = method in ("GET", "PUT", "HEAD")
        attempts = 1 + (self._retries if idempotent else 0)
        for attempt in range(1, attempts + 1):
            try:
                status, headers, data = self._send_once(method, target, body)
            except errors.TransportError:
                if attempt == attempts:
                    raise
                time.sleep(self._retry_delay * attempt)
                continue
            if status in _RETRYABLE_STATUSES and attempt < attempts:
                time.sleep(self._retry_delay * attempt)
                continue
            return self._decode(status, headers, data)
        raise AssertionError("unreachable")

    @staticmethod
    def _decode(status: int, headers: dict, data: bytes) -> Any:
        try:
            parsed = json.loads(data) if data else None
        except ValueError:
            parsed = None
            if status < 400:
                raise errors.MovegateError(f"answer {status} is not JSON") from None
        if status >= 400:
            raise errors.from_response(status, headers, data, parsed)
        return parsed

    def _get(self, target: str) -> Any:
        return self.request("GET", target)

    def _post(self, target: str, members: dict[str, Any], *, idempotent: bool = False) -> Any:
        return self.request("POST", target, _json_body(members), idempotent=idempotent)

    @staticmethod
    def _page(data: dict, item: Callable[[dict], T]) -> Page[T]:
        return Page(items=[item(x) for x in data.get("items") or []], next_cursor=data.get("next_cursor"))

    @staticmethod
    def _paginate(fetch: Callable[[str | None], Page[T]]) -> Iterator[T]:
        cursor = None
        while True:
            page = fetch(cursor)
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    # --- movements ----------------------------------------------------------

    def create_movement(
        self,
        template_key: str,
        intent: dict[str, Any],
        *,
        input_params: dict[str, Any] | None = None,
        template_version: int | None = None,
        callback_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> Movement:
        """POST /v3/movements. Without `idempotency_key` one is made up, and
        every retry of this call resends it with the same body, so a lost
        answer never creates a second movement (the server answers the
        first one with `deduplicated` true)."""
        body = {
            "template_key": template_key,
            "template_version": template_version,
            "intent": intent,
            "input_params": input_params,
            "callback_url": callback_url,
            "idempotency_key": idempotency_key or new_idempotency_key(),
        }
        return Movement.from_json(self._post("/v3/movements", body, idempotent=True))

    def get_movement(self, movement_id: str) -> Movement:
        return Movement.from_json(self._get(f"/v3/movements/{_segment(movement_id)}"))

    def list_movements(
        self, state: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> Page[Movement]:
        """One page, newest first (items carry no nodes)."""
        q = _query({"state": state, "limit": limit, "cursor": cursor})
        return self._page(self._get("/v3/movements" + q), Movement.from_json)

    def iter_movements(self, state: str | None = None, page_size: int = 50) -> Iterator[Movement]:
        """Every movement (of `state`), following the keyset cursor."""
        return self._paginate(lambda c: self.list_movements(state, page_size, c))

    def list_events(
        self, movement_id: str, limit: int | None = None, cursor: str | None = None
    ) -> Page[TimelineEntry]:
        q = _query({"limit": limit, "cursor": cursor})
        path = f"/v3/movements/{_segment(movement_id)}/events"
        return self._page(self._get(path + q), TimelineEntry.from_json)

    def iter_events(self, movement_id: str, page_size: int = 50) -> Iterator[TimelineEntry]:
        """The whole timeline (events and audit rows), oldest first."""
        return self._paginate(lambda c: self.list_events(movement_id, page_size, c))

    def _transition(self, movement_id: str, action: str, members: dict[str, Any]) -> Movement:
        path = f"/v3/movements/{_segment(movement_id)}/{action}"
        return Movement.from_json(self._post(path, members))

    def approve(self, movement_id: str, approver_id: str | None = None) -> Movement:
        return self._transition(movement_id, "approve", {"approver_id": approver_id})

    def reject(self, movement_id: str, reason: str | None = None) -> Movement:
        return self._transition(movement_id, "reject", {"reason": reason})

    def cancel(self, movement_id: str, reason: str | None = None) -> Movement:
        return self._transition(movement_id, "cancel", {"reason": reason})

    def resume(self, movement_id: str) -> Movement:
        return self._transition(movement_id, "resume", {})

    def retry(self, movement_id: str, node_key: str) -> Movement:
        """The answer lists in `unresolved_nodes` any FAILED/UNKNOWN node left."""
        return self._transition(movement_id, "retry", {"node_key": node_key})

    def complete_node(
        self, movement_id: str, node_key: str, provider_refs: dict[str, Any] | None = None
    ) -> Movement:
        """Completes a READY manual_* node."""
        path = f"/v3/movements/{_segment(movement_id)}/nodes/{_segment(node_key)}/complete"
        return Movement.from_json(self._post(path, {"provider_refs": provider_refs}))

    def wait(
        self,
        movement_id: str,
        states: str | Iterable[str],
        timeout: float = 60.0,
        interval: float = 0.25,
    ) -> Movement:
        """Polls until the movement is in one of `states` and answers it.
        Raises `WaitTimeout` when `timeout` seconds pass first, and
        `UnexpectedTerminalState` at once when it ends in a terminal state
        that is not wanted (nothing would change any more)."""
        wanted = {states} if isinstance(states, str) else set(states)
        unknown = wanted - set(REQUEST_STATES)
        if not wanted or unknown:
            raise ValueError(f"unknown request states: {sorted(unknown) or 'none given'}")
        deadline = time.monotonic() + timeout
        while True:
            movement = self.get_movement(movement_id)
            if movement.request_state in wanted:
                return movement
            if movement.request_state in TERMINAL_STATES:
                raise errors.UnexpectedTerminalState(
                    f"movement {movement_id} is {movement.request_state}, "
                    f"not one of {sorted(wanted)}",
                    movement,
                )
            left = deadline - time.monotonic()
            if left <= 0:
                raise errors.WaitTimeout(
                    f"movement {movement_id} still {movement.request_state} after {timeout} s",
                    movement,
                )
            time.sleep(min(interval, left))

    # --- templates ----------------------------------------------------------

    def list_templates(self, limit: int | None = None, cursor: str | None = None) -> Page[Template]:
        """One page of the latest version of each template, by key."""
        q = _query({"limit": limit, "cursor": cursor})
        return self._page(self._get("/v3/templates" + q), Template.from_json)

    def iter_templates(self, page_size: int = 50) -> Iterator[Template]:
        return self._paginate(lambda c: self.list_templates(page_size, c))

    def get_template(self, template_key: str) -> TemplateVersions:
        return TemplateVersions.from_json(self._get(f"/v3/templates/{_segment(template_key)}"))

    def propose_template(self, template_key: str, plan: dict[str, Any]) -> TemplateProposal:
        body = {"template_key": template_key, "plan": plan}
        return TemplateProposal.from_json(self._post("/v3/template-proposals", body))

    def approve_proposal(self, proposal_id: str) -> TemplateProposal:
        """Publishes the plan as the key's next version (`published_version`)."""
        path = f"/v3/template-proposals/{_segment(proposal_id)}/approve"
        return TemplateProposal.from_json(self._post(path, {}))

    def reject_proposal(self, proposal_id: str, reason: str | None = None) -> TemplateProposal:
        path = f"/v3/template-proposals/{_segment(proposal_id)}/reject"
        return TemplateProposal.from_json(self._post(path, {"reason": reason}))

    # --- posture ------------------------------------------------------------

    def balances(self, fresh: bool = False) -> Balances:
        return Balances.from_json(self._get("/v3/balances" + ("?fresh=true" if fresh else "")))

    def executors(self) -> list[Executor]:
        return [Executor.from_json(x) for x in self._get("/v3/executors").get("items") or []]

    def signers(self) -> list[Signer]:
        return [Signer.from_json(x) for x in self._get("/v3/signers").get("items") or []]

    def set_expected_identity(self, signer_key: str, address: str) -> Signer:
        path = f"/v3/signers/{_segment(signer_key)}/expected-identity"
        body = json.dumps({"address": address}, separators=(",", ":")).encode("utf-8")
        return Signer.from_json(self.request("PUT", path, body))

