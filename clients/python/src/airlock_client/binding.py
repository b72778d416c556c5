"""Checks that an approval binds exactly the arguments about to run and has not expired, the way the
server computes it (SHA-256 of the canonical JSON: keys sorted at every depth, no spaces), then
claims the execution once. The one path by which gated Python code runs after a human."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from .errors import AlreadyExecutedError, ConflictError, NotApprovedError
from .models import ApprovalRequest


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        # JavaScript sorts keys by UTF-16 code units; so do we, to hash alike.
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be"))
        return {str(k): _sorted(value[k]) for k in keys}
    if isinstance(value, (list, tuple)):
        return [_sorted(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)  # JSON.stringify(2.0) is "2"
    return value


def canonical_json(value: Any) -> str:
    return json.dumps(_sorted(value), separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def hash_args(args: Any) -> str:
    return hashlib.sha256(canonical_json(args or {}).encode("utf-8")).hexdigest()


def approved_args(request: ApprovalRequest) -> dict[str, Any]:
    """The approved arguments, or ``NotApprovedError`` saying why there are none to run."""
    d = request.decision
    if not request.approved or d is None:
        reason = request.status if request.status != "approved" else "not_approved"
        by = f" by {d.reviewer}" if d is not None else ""
        said = f': "{d.comment}"' if d is not None and d.comment else ""
        raise NotApprovedError(
            reason, f"request {request.id} is {request.status}{by}{said}", request
        )
    args = request.approved_args
    expected = d.args_hash or request.args_hash
    if hash_args(args) != expected:
        raise NotApprovedError(
            "args_mismatch",
            f"the arguments differ from what {d.reviewer} approved (hash {expected[:12]}…)",
            request,
        )
    if d.valid_until is not None and time.time() * 1000 > d.valid_until:
        raise NotApprovedError("expired", f"the approval of {request.id} has expired", request)
    return args


def claim_conflict(err: ConflictError, request: ApprovalRequest) -> AlreadyExecutedError:
    return AlreadyExecutedError("already_executed", err.detail, request)
