"""The shapes of the HTTP API as pydantic models, one per component of the server's
``/openapi.json`` the client sends or reads (``tests/test_openapi_drift.py`` fails when a name, a
required field, an enum or a type differs from the document). Fields are snake_case in Python and
camelCase on the wire; unknown fields the server adds later are kept (``extra="allow"``), never
refused."""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

# --- enums (the document's `enum` lists) ---------------------------------------------------------

Status = Literal["pending", "approved", "rejected", "revise", "timed_out", "cancelled", "responded"]
Outcome = Literal["approved", "rejected", "revise", "timed_out", "cancelled", "responded"]
#: The outcomes a person may give (the others are the engine's). ``responded``: the reviewer
#: answered (``response``) instead of approving; the waiting agent uses the answer.
DecisionOutcome = Literal["approved", "rejected", "revise", "responded"]
Method = Literal[
    "approve_all",
    "select",
    "edit",
    "skip",
    "reject",
    "revise",
    "cancel",
    "respond",
    "auto",
    "no_items",
    "timeout",
    "escalated",
    "error",
    "parse_error",
]
Channel = Literal["web", "cli", "api", "slack", "email", "webhook", "chat", "system"]
Proof = Literal[
    "api_token",
    "inbox_session",
    "card_token",
    "slack_signature",
    "mail_link",
    "mail_reply",
    "local",
    "in_process",
]
Level = Literal["auto", "quick", "full"]
Risk = Literal["low", "medium", "high", "critical"]
Allowed = Literal["approve", "reject", "revise", "select", "edit", "respond"]
Importance = Literal["high", "medium", "low"]
EventType = Literal[
    "created",
    "notified",
    "viewed",
    "decision_recorded",
    "decided",
    "timed_out",
    "escalated",
    "cancelled",
    "auto_executed",
    "claimed",
    "executed",
    "execution_failed",
    "execution_unknown",
    "execution_resolved",
]
#: What an agent may append to the audit log itself (``record``).
RecordType = Literal["auto_executed", "notified"]
OutboxTopic = Literal[
    "created",
    "escalated",
    "decided",
    "timed_out",
    "cancelled",
    "reminder",
    "execution_unknown",
    "test",
]
OutboxStatus = Literal["pending", "delivered", "failed", "gone"]

TERMINAL: frozenset[str] = frozenset(
    {"approved", "rejected", "revise", "timed_out", "cancelled", "responded"}
)


class _Wire(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON body the server expects (camelCase, unset fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class _Input(_Wire):
    """What the client sends. A field the client does not know yet goes as given (the server,
    which refuses unknown fields, is the judge)."""


# --- requests ------------------------------------------------------------------------------------


class Item(_Wire):
    """A selectable thing of a request (a search query, a file, a recipient)."""

    id: str
    label: str
    detail: str | None = None


class Decision(_Wire):
    """How a request was settled: by whom, how, and what exactly was approved."""

    outcome: Outcome
    method: Method
    selected: list[str] | None = None
    edited_args: dict[str, Any] | None = None
    #: What the reviewer answered (outcome ``responded``): any JSON value.
    response: Any = None
    args_hash: str | None = None
    comment: str | None = None
    reviewer: str
    channel: Channel
    #: How the reviewer was authenticated.
    proof: Proof | None = None
    decided_at: float
    valid_until: float | None = None
    key: str | None = None
    #: The digest of the review view the reviewer was shown, when the surface sent it.
    view_digest: str | None = None


class Escalation(_Wire):
    approvers: list[str]
    timeout_ms: int
    on_timeout: OnTimeout | None = None


class Escalate(_Wire):
    """``on_timeout={"escalate": {...}}``: at the deadline, ask other approvers with a new one."""

    escalate: Escalation


OnTimeout = Literal["reject", "approve"] | Escalate


class Labels(_Wire):
    """Words the inbox and the channels show instead of the defaults."""

    approve: str | None = None
    reject: str | None = None
    items: str | None = None
    item_noun: str | None = None


class Critique(_Wire):
    issue: str
    importance: Importance | None = None


class Estimate(_Wire):
    minutes: float | None = None
    cost: float | None = None


class HitlInfo(_Wire):
    """Pattern 3's routing, as shown to reviewers (``hitl_tool`` fills it)."""

    tool: str
    approval_type: str | None = None
    auto_threshold: float | None = None
    quick_threshold: float | None = None
    requires_reason: bool | None = None
    description_template: str | None = None
    context: dict[str, Any] | None = None


class ApprovalRequest(_Wire):
    """One gate, as the server stores it. ``wait`` returns it once it is terminal."""

    id: str
    key: str | None = None
    action: str
    title: str
    summary: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    args_hash: str
    #: The JSON Schema the args and any edit of them must satisfy.
    args_schema: dict[str, Any] | None = None
    #: The JSON Schema a reviewer's ``response`` must satisfy.
    response_schema: dict[str, Any] | None = None
    preview: str | None = None
    items: list[Item] = Field(default_factory=list)
    allowed: list[Allowed] = Field(default_factory=list)
    risk: Risk | None = None
    confidence: float | None = None
    level: Level
    requester: str
    approvers: list[str] = Field(default_factory=list)
    quorum: int = 1
    deadline: float | None = None
    on_timeout: OnTimeout = "reject"
    escalations: int = 0
    revision_comment_required: bool | None = None
    revision_of: str | None = None
    correlation_id: str
    labels: Labels | None = None
    question: str | None = None
    command: str | None = None
    progress: dict[str, str | float | bool] | None = None
    critiques: list[Critique] | None = None
    estimate: Estimate | None = None
    hitl: HitlInfo | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    status: Status
    decisions: list[Decision] = Field(default_factory=list)
    decision: Decision | None = None
    input_hash: str | None = None
    created_at: float
    updated_at: float
    version: int
    executed_at: float | None = None
    executed_by: str | None = None
    #: Re-run after an unknown execution (``execution_unknown``) only when true.
    idempotent: bool | None = None
    #: The execution state after approval (claimed, executed, failed, unknown, ...), as the server
    #: sends it: not modelled in detail yet.
    execution: dict[str, Any] | None = None

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


class RequestInput(_Input):
    """What ``request()`` sends. ``timeout_ms`` is the gate's deadline (``request(timeout_s=...)``).
    The requester is not sent: the server takes it from the token."""

    title: str = Field(min_length=1, max_length=500)
    action: str | None = None
    key: str | None = Field(default=None, min_length=1, max_length=200)
    summary: str | None = None
    args: dict[str, Any] | None = None
    #: The JSON Schema of ``args`` (the tool's own): the server checks the args and every edit.
    args_schema: dict[str, Any] | None = None
    #: The JSON Schema of a reviewer's response (``allowed`` must include ``respond``).
    response_schema: dict[str, Any] | None = None
    preview: str | None = None
    items: list[str | dict[str, Any]] | None = None
    allowed: list[Allowed] | None = None
    risk: Risk | None = None
    confidence: float | None = Field(default=None, ge=0, le=100)
    level: Level | None = None
    approvers: list[str] | None = None
    quorum: int | None = Field(default=None, ge=1, le=100)
    timeout_ms: int | None = Field(default=None, gt=0)
    on_timeout: OnTimeout | None = None
    require_approval: bool | None = None
    revision_comment_required: bool | None = None
    revision_of: str | None = None
    correlation_id: str | None = None
    labels: Labels | None = None
    question: str | None = None
    command: str | None = None
    progress: dict[str, str | float | bool] | None = None
    critiques: list[Critique] | None = None
    estimate: Estimate | None = None
    hitl: HitlInfo | None = None
    metadata: dict[str, Any] | None = None
    idempotent: bool | None = None


class ExecutionClaim(_Input):
    """What ``claim_execution`` sends: nothing, the server's lease applies."""

    lease_ms: int | None = Field(default=None, ge=1, le=86_400_000)


class CancelInput(_Input):
    """What ``cancel()`` sends; who cancels is the token's principal."""

    reason: str | None = Field(default=None, max_length=20000)


# --- decisions -----------------------------------------------------------------------------------


class DecisionInput(_Input):
    """What ``decide()`` sends. The reviewer, their groups and the channel come from the token on
    the server."""

    outcome: DecisionOutcome
    method: Method | None = None
    selected: list[str] | None = None
    edited_args: dict[str, Any] | None = None
    #: With outcome ``responded`` (only): the answer, checked against ``response_schema``.
    response: Any = None
    comment: str | None = None
    key: str | None = None
    valid_for_ms: int | None = Field(default=None, gt=0)
    #: The digest of the review view shown (``view()``): the server refuses the decision with a
    #: conflict when the view changed since.
    view_digest: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


class DecisionItem(_Input):
    """One decision of ``decide_many``: a request id and what ``decide`` would send for it."""

    id: str = Field(min_length=1, max_length=200)
    outcome: DecisionOutcome
    method: Method | None = None
    selected: list[str] | None = None
    edited_args: dict[str, Any] | None = None
    response: Any = None
    comment: str | None = None
    key: str | None = None
    valid_for_ms: int | None = Field(default=None, gt=0)
    view_digest: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


class DecisionsInput(_Input):
    """``POST /v1/decisions``: a list of decisions, or one outcome shared by a list of ids."""

    decisions: list[DecisionItem] | None = None
    ids: list[str] | None = None
    outcome: DecisionOutcome | None = None
    comment: str | None = None


class DecisionDone(_Wire):
    """An item of ``decide_many`` that was recorded."""

    id: str
    ok: Literal[True]
    request: ApprovalRequest


class DecisionFailed(_Wire):
    """An item of ``decide_many`` that was not: the problem a single decision would have met
    (``conflict`` carries the ``decision`` that won)."""

    id: str
    ok: Literal[False]
    status: int
    code: str
    detail: str
    field: str | None = None
    decision: Decision | None = None


class DecisionResults(_Wire):
    #: One per item, in the order sent.
    results: list[DecisionDone | DecisionFailed]
    decided: int
    failed: int


# --- audit ---------------------------------------------------------------------------------------


class AuditEvent(_Wire):
    seq: int
    type: EventType
    request_id: str | None = None
    actor: str
    at: float
    data: dict[str, Any] = Field(default_factory=dict)
    prev_hash: str
    hash: str


class AuditPage(_Wire):
    items: list[AuditEvent]
    #: Pass as ``after`` for the next page; absent on the last one.
    next_after: int | None = None


class AuditInput(_Input):
    """What ``record()`` sends; the actor is the token's principal."""

    type: RecordType
    request_id: str | None = None
    data: dict[str, Any] | None = None


# --- outbox --------------------------------------------------------------------------------------


class OutboxMessage(_Wire):
    """One notification of the delivery log: its target, topic, attempts and result."""

    id: str
    target: str
    topic: OutboxTopic
    request_id: str | None = None
    payload: dict[str, Any]
    status: OutboxStatus
    attempts: int
    available_at: float
    created_at: float
    updated_at: float
    lease_owner: str | None = None
    lease_until: float | None = None
    last_error: str | None = None
    receipt: dict[str, Any] | None = None
    delivered_at: float | None = None


class OutboxPage(_Wire):
    items: list[OutboxMessage]
    #: Pass as ``after`` for the next page; absent on the last one.
    next_after: str | None = None


# --- embedded approval card ----------------------------------------------------------------------


class EmbedTokenInput(_Input):
    reviewer: str = Field(min_length=1, max_length=200)
    groups: list[str] | None = None
    ttl_seconds: int | None = Field(default=None, ge=1, le=3600)


class EmbedToken(_Wire):
    """A card token (``ale_...``), shown once, for one reviewer of one request."""

    token: str
    #: Epoch ms after which it is refused.
    expires_at: float


# --- learned trust -------------------------------------------------------------------------------


class ValueRange(_Wire):
    min: float
    max: float


class LengthRange(_Wire):
    min: int
    max: int


class ValueScope(_Wire):
    """What a rule approves of one field (``path``) of the args."""

    path: str
    one_of: list[str | bool | None] | None = None
    range: ValueRange | None = None
    length: LengthRange | None = None
    varies: str | None = None
    any: bool | None = None


class TrustScope(_Wire):
    """What a rule approves: the requesters, reviewers, risk, quorum, approvers and values that
    earned it."""

    requesters: list[str]
    any_requester: bool | None = None
    reviewers: list[str]
    max_risk: Risk | None = None
    max_quorum: int
    approver_sets: list[list[str]]
    values: list[ValueScope]


class TrustRule(_Wire):
    id: str
    action: str
    shape_hash: str
    shape: str
    approvals: int
    #: Absent on a rule accepted before scopes existed (it approves nothing).
    scope: TrustScope | None = None
    created_by: str
    created_at: float
    revoked_by: str | None = None
    revoked_at: float | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


class TrustRuleList(_Wire):
    items: list[TrustRule]


class TrustExample(_Wire):
    id: str
    title: str
    reviewer: str
    decided_at: float


class TrustSuggestion(_Wire):
    """A call people approved ``streak`` times in a row: a rule an admin may accept."""

    action: str
    shape: str
    shape_hash: str
    streak: int
    scope: TrustScope
    examples: list[TrustExample]


class TrustSuggestionList(_Wire):
    #: Approvals in a row a suggestion needs on this server (0: suggestions are off).
    threshold: int
    items: list[TrustSuggestion]


class TrustWidening(_Input):
    any_requester: bool | None = None
    any_value: list[str] | None = None


class TrustRuleInput(_Input):
    action: str = Field(min_length=1, max_length=200)
    shape_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    widen: TrustWidening | None = None


# --- pattern 1 (local, not on the wire) ----------------------------------------------------------


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


Escalation.model_rebuild()


# --- the review view -------------------------------------------------------------------------------


class ReviewViewItem(_Wire):
    id: str
    label: str
    detail: str | None = None


class ReviewViewBody(_Wire):
    """What a reviewer is shown of a request. ``agent_summary`` is the agent's own words."""

    id: str
    title: str
    action: str
    risk: str | None = None
    confidence: float | None = None
    level: str
    requester: str
    approvers: list[str]
    quorum: int
    agent_summary: str | None = None
    args: dict[str, Any]
    args_hash: str
    preview: str | None = None
    items: list[ReviewViewItem]
    allowed: list[str]
    response_schema: dict[str, Any] | None = None
    revision_of: str | None = None
    question: str | None = None
    command: str | None = None


class ReviewView(_Wire):
    """``GET /v1/requests/{id}/view``: the view and its digest, to send back with ``decide()``."""

    view: ReviewViewBody
    view_digest: str
