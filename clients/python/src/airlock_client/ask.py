"""``ask(message, items, timeout_s)``: pattern 1's approval step. Opens one request listing the items
(e.g. proposed search queries), waits for the reviewer, and returns an ``ApprovalDecision`` that is
never an exception: ``approve_all``, ``select`` (the chosen items), ``skip``, ``parse_error`` (a
reply nobody could read), ``timeout``, ``no_items``, ``auto`` (approval not required) or ``error``
(anything failed: not approved). Usable as the body of a ZenML-style step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .client import Airlock
from .models import ApprovalDecision

#: Extra seconds ``ask`` waits beyond the gate's deadline, for the server to record the timeout.
WAIT_MARGIN_S = 30.0


def ask(
    message: str,
    items: Sequence[str],
    timeout_s: float = 3600,
    *,
    airlock: Airlock | None = None,
    title: str | None = None,
    required: bool = True,
    key: str | None = None,
    action: str = "research.search",
    **fields: Any,
) -> ApprovalDecision:
    """Asks a person to approve all, some or none of ``items``; ``message`` (markdown) is what they
    read. ``airlock`` defaults to a client from ``AIRLOCK_URL`` / ``AIRLOCK_TOKEN``. ``key`` makes a
    re-run of the step find the same request instead of asking twice. Further ``fields`` (``question``,
    ``critiques``, ``estimate``, ``progress``, ``labels``, ``approvers``) go to the request."""
    chosen = list(items)
    if not required:
        return _auto_approved(airlock, message, chosen, action)
    if not chosen:
        return ApprovalDecision(
            approved=False, approval_method="no_items", reviewer_notes="Nothing to approve"
        )
    own = airlock is None
    request_id: str | None = None
    try:
        client = airlock or Airlock()
        try:
            heading = title or (message.strip().splitlines() or ["Approval requested"])[0]
            req = client.request(
                heading.strip("# *")[:500] or "Approval requested",
                action=action,
                summary=message,
                items=chosen,
                key=key,
                timeout_s=timeout_s,
                allowed=["approve", "reject", "select"],
                **fields,
            )
            request_id = req.id
            if not req.terminal:
                req = client.wait(req.id, timeout_s + WAIT_MARGIN_S)
        finally:
            if own:
                client.close()
    except Exception as err:  # the step must always answer: any failure is "not approved"
        return ApprovalDecision(
            approved=False,
            approval_method="error",
            reviewer_notes=f"Approval failed: {err}",
            request_id=request_id,
        )
    d = req.decision
    notes = (d.comment or "") if d else ""
    reviewer = d.reviewer if d else None
    if req.approved and d is not None:
        selected = req.selected_items
        method = (
            "approve_all" if len(selected) == len(chosen) and d.method != "select" else "select"
        )
        if d.method in ("approve_all", "select", "auto"):
            method = d.method
        return ApprovalDecision(
            approved=bool(selected),
            selected_items=selected,
            approval_method=method,
            reviewer_notes=notes,
            reviewer=reviewer,
            request_id=req.id,
        )
    if req.status == "timed_out":
        method = "timeout"
    elif d is not None and d.method in ("parse_error", "error"):
        method = d.method
    else:
        method = "skip"
    return ApprovalDecision(
        approved=False,
        approval_method=method,
        reviewer_notes=notes or f"request {req.id} is {req.status}",
        reviewer=reviewer,
        request_id=req.id,
    )


def _auto_approved(
    airlock: Airlock | None, message: str, items: list[str], action: str
) -> ApprovalDecision:
    """Approval not required: approved at once, and recorded in the audit log when a client is at
    hand (an agent may not open a request that skips the human, so it is a ``notified`` event)."""
    notes = "Approval not required by configuration"
    if airlock is not None:
        try:
            airlock.record(
                "notified",
                data={
                    "autoApproved": True,
                    "action": action,
                    "items": items,
                    "message": message[:2000],
                },
            )
        except Exception as err:  # recording is best effort; the step's answer stands
            notes += f" (not recorded: {err})"
    return ApprovalDecision(
        approved=True, selected_items=items, approval_method="auto", reviewer_notes=notes
    )
