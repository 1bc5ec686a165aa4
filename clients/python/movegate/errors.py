"""One exception class per error class of the /v3 API (SPEC §5).

Every refusal carries the HTTP status, the server's stable `error.code`, its
message and the per-field `details`; `raise_for` picks the class by status.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str


class MovegateError(Exception):
    """Base of everything this package raises."""


class TransportError(MovegateError):
    """The server could not be reached or the connection broke mid-call."""


class ApiError(MovegateError):
    """The server answered with an error status."""

    status: int = 0

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: list[FieldError] | None = None,
        headers: dict[str, str] | None = None,
        body: bytes = b"",
    ):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []
        self.headers = headers or {}
        self.body = body


class BadRequest(ApiError):
    """400: not JSON, wrong shape, unknown field or query parameter."""


class Unauthorized(ApiError):
    """401: missing or bad signature headers, unknown key, clock skew, replay."""


class Forbidden(ApiError):
    """403: the key lacks the route's scope, or four-eyes refused an approval."""


class NotFound(ApiError):
    """404: unknown id or path."""


class MethodNotAllowed(ApiError):
    """405: the path exists with another method."""


class Conflict(ApiError):
    """409: the state does not allow the call, or an idempotency key was
    reused with another body."""


class PayloadTooLarge(ApiError):
    """413: body over 1 MiB."""


class Unprocessable(ApiError):
    """422: well-formed but invalid (amount, template, risk limit, URL)."""


class RateLimited(ApiError):
    """429: per-key rate limit; `retry_after` is the server's hint in seconds."""

    @property
    def retry_after(self) -> int | None:
        value = self.headers.get("retry-after", "")
        return int(value) if value.isdigit() else None


class ServerError(ApiError):
    """500 and any other 5xx but 503."""


class Unavailable(ApiError):
    """503: the database is unreachable; retry later."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    413: PayloadTooLarge,
    422: Unprocessable,
    429: RateLimited,
    503: Unavailable,
}


def error_class(status: int) -> type[ApiError]:
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else ApiError


def from_response(status: int, headers: dict[str, str], body: bytes, parsed) -> ApiError:
    """The exception for an error answer; `parsed` is the decoded JSON body
    or None when it was not JSON."""
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        error = {}
    code = error.get("code") if isinstance(error.get("code"), str) else f"http_{status}"
    message = error.get("message") if isinstance(error.get("message"), str) else ""
    details = [
        FieldError(str(d.get("field", "")), str(d.get("message", "")))
        for d in error.get("details") or []
        if isinstance(d, dict)
    ]
    return error_class(status)(status, code, message, details, headers, body)


class WaitFailed(MovegateError):
    """`Client.wait` did not see one of the wanted states; `movement` is the
    last one read."""

    def __init__(self, message: str, movement):
        super().__init__(message)
        self.movement = movement


class WaitTimeout(WaitFailed):
    """The deadline passed first."""


class UnexpectedTerminalState(WaitFailed):
    """The movement ended in a terminal state that was not asked for."""
