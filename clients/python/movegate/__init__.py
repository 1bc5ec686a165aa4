"""movegate: a signed client for the /v3 API and a callback verifier.

    from movegate import Client
    mg = Client("http://127.0.0.1:8080", "ops-1", "the key's secret")
    movement = mg.create_movement("sim_linear", {"asset": "USDC", "amount": "10"})
"""

import logging

from .callbacks import (
    CallbackEvent,
    Deduper,
    InvalidCallback,
    verify,
    verify_standard_webhooks,
    verify_v3,
)
from .client import Client, new_idempotency_key
from .errors import (
    ApiError,
    BadRequest,
    Conflict,
    FieldError,
    Forbidden,
    MethodNotAllowed,
    MovegateError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    TransportError,
    Unauthorized,
    Unavailable,
    UnexpectedTerminalState,
    Unprocessable,
    WaitFailed,
    WaitTimeout,
)
from .models import (
    Balance,
    Balances,
    Executor,
    Model,
    Movement,
    Node,
    NodeStateRef,
    Page,
    Signer,
    SignerProcess,
    Template,
    TemplateProposal,
    TemplateVersions,
    TimelineEntry,
    VenueError,
)

__version__ = "0.1.0"

# A library logs (refused callbacks, failed handlers) but leaves the
# configuration of handlers to the application.
logging.getLogger("movegate").addHandler(logging.NullHandler())

__all__ = [
    "ApiError",
    "BadRequest",
    "Balance",
    "Balances",
    "CallbackEvent",
    "Client",
    "Conflict",
    "Deduper",
    "Executor",
    "FieldError",
    "Forbidden",
    "InvalidCallback",
    "MethodNotAllowed",
    "Model",
    "MovegateError",
    "Movement",
    "Node",
    "NodeStateRef",
    "NotFound",
    "Page",
    "PayloadTooLarge",
    "RateLimited",
    "ServerError",
    "Signer",
    "SignerProcess",
    "Template",
    "TemplateProposal",
    "TemplateVersions",
    "TimelineEntry",
    "TransportError",
    "Unauthorized",
    "Unavailable",
    "UnexpectedTerminalState",
    "Unprocessable",
    "VenueError",
    "WaitFailed",
    "WaitTimeout",
    "new_idempotency_key",
    "verify",
    "verify_standard_webhooks",
    "verify_v3",
]
