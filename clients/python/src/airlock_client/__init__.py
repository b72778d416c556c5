"""Airlock's Python client: open approval gates on an Airlock server, wait for people, run what
they approved, once. See README.md."""

from .ask import ask
from .async_client import AsyncAirlock
from .binding import approved_args, canonical_json, hash_args
from .client import Airlock
from .decorator import require_approval
from .errors import (
    AirlockError,
    AlreadyExecutedError,
    ConflictError,
    ForbiddenError,
    InvalidInputError,
    NotApprovedError,
    NotFoundError,
    UnavailableError,
    WaitTimeoutError,
)
from .hitl import (
    HITL_PENDING_KEY,
    ApprovalLevel,
    HITLConfig,
    calculate_confidence,
    determine_approval_level,
    get_hitl_config,
    hitl_tool,
    is_hitl_pending,
    is_hitl_tool,
)
from .models import (
    ApprovalDecision,
    ApprovalRequest,
    AuditEvent,
    Decision,
    DecisionInput,
    Item,
    RequestInput,
    RequestPage,
)
from .redaction import (
    REDACTED,
    REDACTED_INLINE,
    is_sensitive_key,
    redact,
    redact_string,
    set_redaction_keys,
)

__all__ = [
    "HITL_PENDING_KEY",
    "REDACTED",
    "REDACTED_INLINE",
    "AirlockError",
    "Airlock",
    "AlreadyExecutedError",
    "ApprovalDecision",
    "ApprovalLevel",
    "ApprovalRequest",
    "AsyncAirlock",
    "AuditEvent",
    "ConflictError",
    "Decision",
    "DecisionInput",
    "ForbiddenError",
    "HITLConfig",
    "InvalidInputError",
    "Item",
    "NotApprovedError",
    "NotFoundError",
    "RequestInput",
    "RequestPage",
    "UnavailableError",
    "WaitTimeoutError",
    "approved_args",
    "ask",
    "calculate_confidence",
    "canonical_json",
    "determine_approval_level",
    "get_hitl_config",
    "hash_args",
    "hitl_tool",
    "is_hitl_pending",
    "is_hitl_tool",
    "is_sensitive_key",
    "redact",
    "redact_string",
    "require_approval",
    "set_redaction_keys",
]
