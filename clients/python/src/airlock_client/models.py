"""The shapes of the HTTP API as pydantic models. Fields are snake_case in Python and camelCase on
the wire; unknown fields the server adds later are kept (``extra="allow"``), never refused."""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Status = Literal["pending", "approved", "rejected", "revise", "timed_out", "cancelled"]
Outcome = Literal["approved", "rejected", "revise", "timed_out", "cancelled"]
Level = Literal["auto", "quick", "full"]
Risk = Literal["low", "medium", "high", "critical"]
Allowed = Literal["approve", "reject", "revise", "select", "edit"]

TERMINAL: frozenset[str] = frozenset({"approved", "rejected", "revise", "timed_out", "cancelled"})


class _Wire(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON body the server expects (camelCase, unset fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class Item(_Wire):
    """A selectable thing of a request (a search query, a file, a recipient)."""

    id: str
    label: str
    detail: str | None = None


class Decision(_Wire):
    """How a request was settled: by whom, how, and what exactly was approved."""

    outcome: Outcome
    method: str
    selected: list[str] | None = None
    edited_args: dict[str, Any] | None = None
    args_hash: str | None = None
    comment: str | None = None
    reviewer: str
    channel: str
    decided_at: float
    valid_until: float | None = None
    key: str | None = None


class ApprovalRequest(_Wire):
    """One gate, as the server stores it. ``wait`` returns it once it is terminal."""

    id: str
    key: str | None = None
    action: str
    title: str
    summary: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    args_hash: str
    preview: str | None = None
    items: list[Item] = Field(default_factory=list)
    allowed: list[str] = Field(default_factory=list)
    risk: Risk | None = None
    confidence: float | None = None
    level: Level
    requester: str
    approvers: list[str] = Field(default_factory=list)
    quorum: int = 1
    deadline: float | None = None
    on_timeout: Any = "reject"
    escalations: int = 0
    revision_of: str | None = None
    correlation_id: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    status: Status
    decisions: list[Decision] = Field(default_factory=list)
    decision: Decision | None = None
    created_at: float
    updated_at: float
    version: int
    executed_at: float | None = None
    executed_by: str | None = None

    @property
    def pending(self) -> bool:
        return self.status == "pending"

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def approved(self) -> bool:
        """Approved by an approving decision (what may be executed)."""
        return (
            self.status == "approved"
            and self.decision is not None
            and self.decision.outcome == "approved"
        )

    @property
    def selected_ids(self) -> list[str]:
        """Ids of the approved items: the reviewer's selection, or every item when they approved
        without selecting. Empty unless approved."""
        if not self.approved or self.decision is None:
            return []
        if self.decision.selected is not None:
            return list(self.decision.selected)
        return [it.id for it in self.items]

    @property
    def selected_items(self) -> list[str]:
        """Labels of the approved items (the strings given as ``items``), in the request's order."""
        chosen = set(self.selected_ids)
        return [it.label for it in self.items if it.id in chosen]

    @property
    def approved_args(self) -> dict[str, Any]:
        """The arguments to run with: the reviewer's edited args when they edited, else ``args``."""
        if self.decision is not None and self.decision.edited_args is not None:
            return dict(self.decision.edited_args)
        return dict(self.args)


class RequestPage(_Wire):
    items: list[ApprovalRequest]
    next_cursor: str | None = None


class AuditEvent(_Wire):
    seq: int
    type: str
    request_id: str | None = None
    actor: str
    at: float
    data: dict[str, Any] = Field(default_factory=dict)
    prev_hash: str
    hash: str


class RequestInput(_Wire):
    """What ``request()`` sends. ``timeout_ms`` is the gate's deadline (``request(timeout_s=...)``)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True
    )

    title: str = Field(min_length=1, max_length=500)
    action: str | None = None
    key: str | None = Field(default=None, min_length=1, max_length=200)
    summary: str | None = None
    args: dict[str, Any] | None = None
    preview: str | None = None
    items: list[str | dict[str, Any]] | None = None
    allowed: list[Allowed] | None = None
    risk: Risk | None = None
    confidence: float | None = Field(default=None, ge=0, le=100)
    level: Level | None = None
    approvers: list[str] | None = None
    quorum: int | None = Field(default=None, ge=1, le=100)
    timeout_ms: int | None = Field(default=None, gt=0)
    on_timeout: Any | None = None
    require_approval: bool | None = None
    revision_of: str | None = None
    correlation_id: str | None = None
    metadata: dict[str, Any] | None = None


class DecisionInput(_Wire):
    """What ``decide()`` sends. The reviewer and the channel come from the token on the server."""

    outcome: Literal["approved", "rejected", "revise"]
    method: str | None = None
    selected: list[str] | None = None
    edited_args: dict[str, Any] | None = None
    comment: str | None = None
    key: str | None = None
    valid_for_ms: int | None = Field(default=None, gt=0)


class ApprovalDecision(BaseModel):
    """Pattern 1's decision (``ask``): always returned, never raised. ``approved`` is false for every
    failure. ``approval_method`` is one of ``approve_all``, ``select``, ``skip``, ``parse_error``,
    ``error``, ``timeout``, ``auto`` (approval not required) or ``no_items``."""

    approved: bool = False
    selected_items: list[str] = Field(default_factory=list)
    approval_method: str = ""
    reviewer_notes: str = ""
    reviewer: str | None = None
    request_id: str | None = None
    timestamp: float = Field(default_factory=time.time)

    @property
    def selected_queries(self) -> list[str]:
        """The pipeline's name for ``selected_items``."""
        return self.selected_items
