"""Request signatures of SPEC §5, built byte for byte as the server builds them.

The canonical string is::

    METHOD \\n path \\n sorted_query \\n hex(sha256(body)) \\n timestamp \\n nonce

and the signature its lower-case hex HMAC-SHA256 under the key's secret.
Everything here works on bytes: a query may carry percent-escapes of bytes
that are not UTF-8, and the server signs those bytes, not a decoded text.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_NONCE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else value


def percent_encode(value: str | bytes) -> str:
    """Everything but RFC 3986's unreserved characters as upper-case %XX."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in _as_bytes(value))


def percent_decode(value: str | bytes) -> bytes:
    """Decodes %XX escapes; '+' stays a plus, and a '%' without two hex
    digits after it stays a literal '%' (the server's rule, so malformed
    input still has one canonical form)."""
    raw = _as_bytes(value)
    out = bytearray()
    i = 0
    while i < len(raw):
        if raw[i] == 0x25 and i + 2 < len(raw) and raw[i + 1] in _HEX and raw[i + 2] in _HEX:
            out.append(int(raw[i + 1 : i + 3], 16))
            i += 3
            continue
        out.append(raw[i])
        i += 1
    return bytes(out)


def decode_query(raw_query: str | bytes) -> list[tuple[bytes, bytes]]:
    """The raw query split on '&' into decoded (key, value) pairs in their
    order; a piece without '=' is (key, b""), empty pieces are skipped."""
    pairs = []
    for piece in _as_bytes(raw_query).split(b"&"):
        if not piece:
            continue
        key, eq, value = piece.partition(b"=")
        pairs.append((percent_decode(key), percent_decode(value) if eq else b""))
    return pairs


def canonical_query(raw_query: str | bytes) -> str:
    """SPEC §5's sorted_query, built from the raw query (without '?')."""
    encoded = sorted((percent_encode(k), percent_encode(v)) for k, v in decode_query(raw_query))
    return "&".join(f"{k}={v}" for k, v in encoded)


def canonical_request(
    method: str, path: str, raw_query: str | bytes, body: bytes, timestamp: str, nonce: str
) -> bytes:
    return b"\n".join(
        [
            _as_bytes(method),
            _as_bytes(path),
            canonical_query(raw_query).encode("ascii"),
            hashlib.sha256(body).hexdigest().encode("ascii"),
            _as_bytes(timestamp),
            _as_bytes(nonce),
        ]
    )


def sign_request(
    secret: str | bytes,
    method: str,
    path: str,
    raw_query: str | bytes,
    body: bytes,
    timestamp: str,
    nonce: str,
) -> str:
    """Lower-case hex HMAC-SHA256(secret, canonical_request(...))."""
    message = canonical_request(method, path, raw_query, body, timestamp, nonce)
    return hmac.new(_as_bytes(secret), message, hashlib.sha256).hexdigest()


def new_nonce(length: int = 32) -> str:
    """A random nonce of [A-Za-z0-9_-] (the server takes 16-128 characters)."""
    return "".join(secrets.choice(_NONCE_ALPHABET) for _ in range(length))


def signed_headers(
    key_id: str,
    secret: str | bytes,
    method: str,
    target: str,
    body: bytes,
    timestamp: int,
    nonce: str | None = None,
) -> dict[str, str]:
    """The four X-QTG headers for `target` (path plus optional '?query',
    exactly as it goes on the wire)."""
    path, _, raw_query = target.partition("?")
    nonce = nonce or new_nonce()
    ts = str(int(timestamp))
    return {
        "X-QTG-Key-Id": key_id,
        "X-QTG-Timestamp": ts,
        "X-QTG-Nonce": nonce,
        "X-QTG-Signature": sign_request(secret, method, path, raw_query, body, ts, nonce),
    }
