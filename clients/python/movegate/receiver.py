"""A tiny callback receiver, independent of any web framework.

`handle_delivery` does the work on (headers, raw body) and answers (status,
body); `make_wsgi_app` and `make_asgi_app` wrap it for either kind of server::

    from movegate.receiver import make_wsgi_app, make_asgi_app

    def on_event(event):            # a movegate.callbacks.CallbackEvent
        print(event.event_type, event.request_id, event.request_state)

    app = make_wsgi_app(b"the callback secret", on_event)   # gunicorn, wsgiref, Flask mount …
    app = make_asgi_app(b"the callback secret", on_event)   # uvicorn, hypercorn, Starlette mount …

Answers: 200 when acted on or already seen (a duplicate is acknowledged so
the server stops resending it), 401 when the signature does not verify, 500
when `on_event` raised (the id is forgotten, so the server's retry is acted
on), 400/405/411/413 for requests that are not deliveries at all.
"""

from __future__ import annotations

import inspect
import json
import logging
from typing import Any, Callable

from .callbacks import CallbackEvent, Deduper, InvalidCallback, verify

MAX_BODY_BYTES = 1024 * 1024

log = logging.getLogger("movegate.receiver")


def _answer(status: int, message: str) -> tuple[int, bytes]:
    return status, json.dumps({"status": message}).encode("utf-8")


def handle_delivery(
    secret: str | bytes,
    headers,
    body: bytes,
    on_event: Callable[[CallbackEvent], Any],
    *,
    deduper: Deduper | None = None,
    scheme: str | None = None,
    tolerance: float | None = None,
) -> tuple[int, bytes]:
    """Verifies one delivery, drops a repeat of an event already handled,
    and calls `on_event` with the event otherwise."""
    try:
        event = verify(secret, headers, body, scheme=scheme, tolerance=tolerance)
    except InvalidCallback as e:
        log.warning("refused callback: %s", e.reason)
        return _answer(401, "invalid signature")
    if deduper is not None and not deduper.first_time(event.event_id):
        return _answer(200, "duplicate")
    try:
        on_event(event)
    except Exception:
        log.exception("callback handler failed for event %s", event.event_id)
        if deduper is not None:
            deduper.forget(event.event_id)
        return _answer(500, "handler failed")
    return _answer(200, "ok")


def _wsgi_headers(environ: dict) -> dict[str, str]:
    out = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            out[key[5:].replace("_", "-").lower()] = value
    return out


def make_wsgi_app(secret: str | bytes, on_event: Callable[[CallbackEvent], Any], **options):
    """A WSGI application receiving deliveries on any path (options as for
    `handle_delivery`). A shared `Deduper` is made unless one is given."""
    options.setdefault("deduper", Deduper())

    def app(environ, start_response):
        status, body = _wsgi_delivery(environ, secret, on_event, options)
        reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 405: "Method Not Allowed",
                  411: "Length Required", 413: "Payload Too Large",
                  500: "Internal Server Error"}[status]
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        if status == 405:
            headers.append(("Allow", "POST"))
        start_response(f"{status} {reason}", headers)
        return [body]

    return app


def _wsgi_delivery(environ, secret, on_event, options) -> tuple[int, bytes]:
    if environ.get("REQUEST_METHOD") != "POST":
        return _answer(405, "POST only")
    length = environ.get("CONTENT_LENGTH") or ""
    if not length:
        return _answer(411, "Content-Length required")
    if not length.isascii() or not length.isdigit():
        return _answer(400, "bad Content-Length")
    if int(length) > MAX_BODY_BYTES:
        return _answer(413, "body too large")
    body = environ["wsgi.input"].read(int(length))
    return handle_delivery(secret, _wsgi_headers(environ), body, on_event, **options)


def make_asgi_app(secret: str | bytes, on_event: Callable[[CallbackEvent], Any], **options):
    """The same receiver as an ASGI (3.0) application. `on_event` may be a
    coroutine function; a blocking one runs on the event loop, so keep it
    short or hand the work to a queue."""
    options.setdefault("deduper", Deduper())

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        status, body = await _asgi_delivery(scope, receive, secret, on_event, options)
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode("ascii"))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


async def _asgi_delivery(scope, receive, secret, on_event, options) -> tuple[int, bytes]:
    if scope.get("method") != "POST":
        return _answer(405, "POST only")
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return _answer(400, "client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return _answer(413, "body too large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    # Raw (name, value) pairs: a signature header sent twice is refused.
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", [])]
    pending = []

    def collect(event):
        result = on_event(event)
        if inspect.isawaitable(result):
            pending.append((event, result))

    status, body = handle_delivery(secret, headers, b"".join(chunks), collect, **options)
    for event, awaitable in pending:
        try:
            await awaitable
        except Exception:
            log.exception("callback handler failed for event %s", event.event_id)
            if options.get("deduper") is not None:
                options["deduper"].forget(event.event_id)
            return _answer(500, "handler failed")
    return status, body
