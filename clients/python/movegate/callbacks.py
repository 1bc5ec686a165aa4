"""Verifying movegate's callback deliveries (SPEC §6).

Two schemes, chosen by the server's MG_CALLBACK_SIGNATURE_SCHEME:

* ``v3`` (default): X-QTG-Callback-Timestamp / -Nonce / -Signature-Version /
  -Signature, HMAC-SHA256(secret, "{timestamp}\\n{nonce}\\n{hex sha256(body)}").
  Retries resend the same timestamp, nonce and body, so an age check is
  optional (a redelivery may be hours old); dedupe on event_id instead.
* ``standard-webhooks``: webhook-id / webhook-timestamp / webhook-signature
  ("v1,<base64>" entries), HMAC-SHA256(key, "{id}.{timestamp}.{body}") with
  the key base64-decoded from "whsec_…"; each attempt is signed afresh, so
  the timestamp must lie within `tolerance` seconds of now.

`body` is always the raw bytes received, never re-serialised JSON.
"""

from __future__ import annotations

import base64
import binascii
import collections
import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .errors import MovegateError
from .models import Model

DEFAULT_TOLERANCE_SECONDS = 300

_V3_HEADERS = (
    "x-qtg-callback-timestamp",
    "x-qtg-callback-nonce",
    "x-qtg-callback-signature-version",
    "x-qtg-callback-signature",
)
_SW_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")


class InvalidCallback(MovegateError):
    """The delivery is not authentic (or not well-formed); `reason` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(kw_only=True)
class CallbackEvent(Model):
    """A verified delivery's body (SPEC §6)."""

    event_id: str = ""
    event_type: str = ""
    request_id: str = ""
    request_state: str = ""
    node_key: str | None = None
    node_state: str | None = None
    occurred_at: str = ""
    data: Any = None


Headers = Mapping[str, str] | Iterable[tuple[str, str]]


def _lower_headers(headers: Headers, names: Iterable[str]) -> dict[str, str]:
    """The headers of `names` by lower-case name. A signature header given
    twice is refused: one copy could be checked and the other believed."""
    wanted = set(names)
    items = headers.items() if isinstance(headers, Mapping) else headers
    found: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        if key not in wanted:
            continue
        if key in found:
            raise InvalidCallback(f"header {name} given more than once")
        found[key] = value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return found


def _unix_seconds(text: str, name: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        raise InvalidCallback(f"{name} is not unix seconds")
    return int(text)


def _now(now: float | None) -> float:
    return time.time() if now is None else now


def v3_signature(secret: str | bytes, timestamp: int, nonce: str, body: bytes) -> str:
    """Lower-case hex HMAC-SHA256(secret, "{timestamp}\\n{nonce}\\n{hex sha256(body)}")."""
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    message = f"{timestamp}\n{nonce}\n{hashlib.sha256(body).hexdigest()}".encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def verify_v3(
    secret: str | bytes,
    headers: Headers,
    body: bytes,
    *,
    tolerance: float | None = None,
    now: float | None = None,
) -> None:
    """Raises InvalidCallback unless the v3 signature is right. The age
    check runs only with a `tolerance` (retries keep the enqueue time)."""
    h = _lower_headers(headers, _V3_HEADERS)
    ts, nonce, sig = (h.get(k) for k in (_V3_HEADERS[0], _V3_HEADERS[1], _V3_HEADERS[3]))
    if ts is None or nonce is None or sig is None:
        raise InvalidCallback("missing X-QTG-Callback-Timestamp, -Nonce or -Signature header")
    version = h.get("x-qtg-callback-signature-version")
    if version is not None and version != "v3":
        raise InvalidCallback(f"unsupported signature version {version!r}")
    t = _unix_seconds(ts, "X-QTG-Callback-Timestamp")
    if tolerance is not None and abs(_now(now) - t) > tolerance:
        raise InvalidCallback(f"timestamp outside the {tolerance} s tolerance")
    expected = v3_signature(secret, t, nonce, body)
    if not hmac.compare_digest(expected.encode("ascii"), sig.lower().encode("utf-8", "replace")):
        raise InvalidCallback("signature mismatch")


def standard_webhooks_key(secret: str) -> bytes:
    """The HMAC key of a "whsec_<base64>" secret."""
    if not isinstance(secret, str) or not secret.startswith("whsec_"):
        raise InvalidCallback("secret is not whsec_<base64>")
    try:
        key = base64.b64decode(secret[len("whsec_") :], validate=True)
    except (binascii.Error, ValueError):
        raise InvalidCallback("secret is not whsec_<base64>") from None
    if not key:
        raise InvalidCallback("secret is not whsec_<base64>")
    return key


def standard_webhooks_signature(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """"v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>"."""
    message = f"{webhook_id}.{timestamp}.".encode("utf-8") + body
    digest = hmac.new(standard_webhooks_key(secret), message, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def verify_standard_webhooks(
    secret: str,
    headers: Headers,
    body: bytes,
    *,
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> None:
    """Raises InvalidCallback unless one of the "v1,…" signatures matches
    and the timestamp lies within `tolerance` seconds of now."""
    standard_webhooks_key(secret)  # a bad secret fails before any header is read
    h = _lower_headers(headers, _SW_HEADERS)
    wid, ts, sigs = (h.get(k) for k in _SW_HEADERS)
    if wid is None or ts is None or sigs is None:
        raise InvalidCallback("missing webhook-id, webhook-timestamp or webhook-signature header")
    t = _unix_seconds(ts, "webhook-timestamp")
    if abs(_now(now) - t) > tolerance:
        raise InvalidCallback(f"timestamp outside the {tolerance} s tolerance")
    expected = standard_webhooks_signature(secret, wid, t, body).encode("ascii")
    # Several space-separated signatures during a key rotation; every one is
    # compared, so the time taken does not say which one matched.
    match = False
    for one in sigs.split(" "):
        match |= hmac.compare_digest(expected, one.encode("utf-8", "replace"))
    if not match:
        raise InvalidCallback("signature mismatch")


def detect_scheme(headers: Headers) -> str:
    """"standard-webhooks" when a webhook-signature header is present, else "v3"."""
    names = headers.keys() if isinstance(headers, Mapping) else (n for n, _ in headers)
    return "standard-webhooks" if any(n.lower() == "webhook-signature" for n in names) else "v3"


def parse_event(body: bytes) -> CallbackEvent:
    try:
        data = json.loads(body)
    except ValueError:
        raise InvalidCallback("body is not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("event_id"), str):
        raise InvalidCallback("body is not a callback event")
    return CallbackEvent.from_json(data)


def verify(
    secret: str | bytes,
    headers: Headers,
    body: bytes,
    *,
    scheme: str | None = None,
    tolerance: float | None = None,
    now: float | None = None,
) -> CallbackEvent:
    """Verifies a delivery under `scheme` ("v3" | "standard-webhooks"; read
    from the headers when None) and answers its event. `tolerance` defaults
    to none for v3 and 300 s for Standard Webhooks."""
    if isinstance(headers, Iterable) and not isinstance(headers, Mapping):
        headers = list(headers)
    scheme = scheme or detect_scheme(headers)
    if scheme == "v3":
        verify_v3(secret, headers, body, tolerance=tolerance, now=now)
    elif scheme == "standard-webhooks":
        if isinstance(secret, bytes):
            secret = secret.decode("ascii")
        verify_standard_webhooks(
            secret,
            headers,
            body,
            tolerance=DEFAULT_TOLERANCE_SECONDS if tolerance is None else tolerance,
            now=now,
        )
    else:
        raise ValueError(f"unknown callback scheme {scheme!r}")
    event = parse_event(body)
    if scheme == "standard-webhooks":
        # The signed id is the event id: a body that names another event
        # would let a receiver dedupe on one id and act on another.
        if _lower_headers(headers, ("webhook-id",))["webhook-id"] != event.event_id:
            raise InvalidCallback("webhook-id differs from the body's event_id")
    return event


class Deduper:
    """Remembers the last `capacity` event ids (delivery is at least once).

    `first_time(event_id)` is True once per id and False for every repeat
    while the id is remembered; thread-safe. Keep a durable record (a unique
    column) where a repeat after a restart would do harm.
    """

    def __init__(self, capacity: int = 100_000):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._capacity = capacity
        self._seen: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, event_id: str) -> bool:
        with self._lock:
            if event_id in self._seen:
                self._seen.move_to_end(event_id)
                return False
            self._seen[event_id] = None
            if len(self._seen) > self._capacity:
                self._seen.popitem(last=False)
            return True

    def forget(self, event_id: str) -> None:
        """Drops an id, e.g. when acting on its event failed and a retry
        should be processed."""
        with self._lock:
            self._seen.pop(event_id, None)

    def __contains__(self, event_id: str) -> bool:
        with self._lock:
            return event_id in self._seen

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)
