"""The client's verbs, each written once as a generator of effects (``_core.Steps``): it yields the
HTTP calls and pauses it needs and gets their answers back. ``Airlock`` runs them blocking and
``AsyncAirlock`` awaits them (``verb`` makes each a method of both), so the two clients cannot
differ. Each verb names its route, body and answer (``route``): ``tests/test_openapi_drift.py``
checks them against the server's ``/openapi.json``.

The first parameter of every verb is the client's ``Options``; the methods pass it themselves."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel

from . import _core
from ._core import Backoff, Call, Deadline, ItemInput, Options, Sleep, Steps, validated
from .errors import UnavailableError, WaitTimeoutError
from .models import (
    ApprovalRequest,
    AuditEvent,
    AuditInput,
    AuditPage,
    CancelInput,
    DecisionInput,
    DecisionItem,
    DecisionOutcome,
    DecisionResults,
    DecisionsInput,
    EmbedToken,
    EmbedTokenInput,
    ExecutionClaim,
    Method,
    OutboxPage,
    OutboxStatus,
    OutboxTopic,
    RecordType,
    RequestInput,
    RequestPage,
    ReviewView,
    TrustRule,
    TrustRuleInput,
    TrustRuleList,
    TrustSuggestionList,
)

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Route:
    """What a verb sends and reads: the route as the OpenAPI document names it, the model of its
    body and of its answer, the query parameters it offers, and those of the route it does not
    offer (with the reason)."""

    method: str
    path: str
    answer: type[BaseModel]
    body: type[BaseModel] | None = None
    query: tuple[str, ...] = ()
    not_offered: dict[str, str] = field(default_factory=dict)


def route(
    method: str,
    path: str,
    answer: type[BaseModel],
    *,
    body: type[BaseModel] | None = None,
    query: tuple[str, ...] = (),
    not_offered: dict[str, str] | None = None,
) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        fn.__dict__["route"] = Route(method, path, answer, body, query, not_offered or {})
        return fn

    return mark


def route_of(fn: Callable[..., Any]) -> Route:
    found = fn.__dict__.get("route")
    if not isinstance(found, Route):
        raise TypeError(f"{fn.__name__} is not a verb of the client")
    return found


def send(o: Options, /, call: Call) -> Steps[Any]:
    """One call. A safe one (a read, a create with a key) is tried again, ``o.retries`` times with
    backoff, while the server is unreachable or answers 503 or 429 ``rate_limited``."""
    if not call.safe:
        return (yield call)
    backoff = Backoff(o.max_retry_delay_s)
    for attempt in range(o.retries + 1):
        try:
            return (yield call)
        except UnavailableError as err:
            pause = _core.retry_pause(err, attempt, o, backoff)
            if pause is None:
                raise
            yield Sleep(pause)
    raise AssertionError("unreachable: the last attempt raises")  # pragma: no cover


def _path(template: str, **ids: str) -> str:
    return template.format(**{k: quote(v, safe="") for k, v in ids.items()})


# --- requests ------------------------------------------------------------------------------------

EXECUTION_LATER = "execution states are not in the client yet (they landed during issue 36)"
LIST_QUERY = ("status", "action", "approver", "requester", "q", "cursor", "limit", "order")


@route("POST", "/v1/requests", ApprovalRequest, body=RequestInput)
def request(
    o: Options,
    /,
    title: str,
    *,
    action: str | None = None,
    items: Sequence[ItemInput] | None = None,
    args: dict[str, Any] | None = None,
    key: str | None = None,
    timeout_s: float | None = None,
    **fields: Any,
) -> Steps[ApprovalRequest]:
    """Opens a gate. With ``key``, a repeat (a crashed caller replaying) returns the first
    request. ``timeout_s`` is the gate's deadline; further fields (``summary``, ``preview``,
    ``approvers``, ``risk``, ``on_timeout``, ``revision_of``, ``correlation_id``, ``command``,
    ``question``, ``critiques``, ``metadata``, ...) go as they are, snake_case or camelCase."""
    call = _core.create_call(
        title, action=action, items=items, args=args, key=key, timeout_s=timeout_s, fields=fields
    )
    return ApprovalRequest.model_validate((yield from send(o, call)))


@route("GET", "/v1/requests/{id}", ApprovalRequest)
def get(o: Options, /, request_id: str) -> Steps[ApprovalRequest]:
    call = Call("GET", _path("/v1/requests/{id}", id=request_id), safe=True)
    return ApprovalRequest.model_validate((yield from send(o, call)))


@route("GET", "/v1/requests/{id}/view", ReviewView)
def view(o: Options, /, request_id: str) -> Steps[ReviewView]:
    """The review view of a request and its digest: show ``view``, then decide with
    ``view_digest=`` so the decision proves what was shown."""
    call = Call("GET", _path("/v1/requests/{id}/view", id=request_id), safe=True)
    return ReviewView.model_validate((yield from send(o, call)))


@route(
    "GET",
    "/v1/requests",
    RequestPage,
    query=("key", "requester"),
    not_offered={
        **{n: "`list` offers it" for n in (*LIST_QUERY, "view") if n != "requester"},
        "execution": EXECUTION_LATER,
    },
)
def get_by_key(
    o: Options, /, key: str, *, requester: str | None = None
) -> Steps[ApprovalRequest | None]:
    """The request created with this idempotency key (by default by this token), or None."""
    query = {"key": key} if requester is None else {"key": key, "requester": requester}
    page = RequestPage.model_validate(
        (yield from send(o, Call("GET", "/v1/requests", safe=True, query=query)))
    )
    return page.items[0] if page.items else None


@route(
    "GET",
    "/v1/requests",
    RequestPage,
    query=LIST_QUERY,
    not_offered={
        "key": "`get_by_key` offers it",
        "view": "the review view is not in the client yet (issue 36: built by others now)",
        "execution": EXECUTION_LATER,
    },
)
def list_(
    o: Options,
    /,
    *,
    status: str | Sequence[str] | None = None,
    action: str | None = None,
    approver: str | Sequence[str] | None = None,
    requester: str | None = None,
    q: str | None = None,
    cursor: str | None = None,
    limit: int | None = None,
    order: str | None = None,
) -> Steps[RequestPage]:
    """A page of requests (``items``, ``next_cursor``), newest first unless ``order="asc"``;
    ``q`` searches titles, summaries and args."""
    query = _core.list_query(
        {
            "status": status,
            "action": action,
            "approver": approver,
            "requester": requester,
            "q": q,
            "cursor": cursor,
            "limit": limit,
            "order": order,
        }
    )
    call = Call("GET", "/v1/requests", safe=True, query=query)
    return RequestPage.model_validate((yield from send(o, call)))


@route("GET", "/v1/requests/{id}/wait", ApprovalRequest, query=("timeout",))
def wait(o: Options, /, request_id: str, timeout_s: float | None = None) -> Steps[ApprovalRequest]:
    """Long-polls until the request is terminal and returns it. Reconnects through server
    restarts, 503 and 429 until ``timeout_s`` (None: no limit), then raises
    ``WaitTimeoutError``. A missing request or a refused token raises at once."""
    deadline = Deadline(timeout_s)
    backoff = Backoff()
    path = _path("/v1/requests/{id}/wait", id=request_id)
    while True:  # bounded by `timeout_s` when given; None waits as long as the gate is open
        remaining = deadline.remaining()
        if remaining <= 0:
            raise WaitTimeoutError(request_id, timeout_s or 0)
        seconds = min(o.poll_s, remaining)
        try:
            answer = yield _core.wait_call(path, seconds)
        except UnavailableError as err:
            pause = backoff.pause_for(err) or backoff.next_s
            yield Sleep(max(0.0, min(pause, deadline.remaining())))
            continue
        backoff.reset()
        found = ApprovalRequest.model_validate(answer)
        if found.terminal:
            return found


@route("POST", "/v1/requests/{id}/decisions", ApprovalRequest, body=DecisionInput)
def decide(
    o: Options,
    /,
    request_id: str,
    outcome: DecisionOutcome,
    *,
    method: Method | None = None,
    selected: Sequence[str] | None = None,
    edited_args: dict[str, Any] | None = None,
    comment: str | None = None,
    key: str | None = None,
    valid_for_s: float | None = None,
    view_digest: str | None = None,
    response: Any = None,
) -> Steps[ApprovalRequest]:
    """Decides as the token's principal (a reviewer or admin token). ``outcome`` is
    ``approved``, ``rejected``, ``revise`` or ``responded`` (with ``response``, the answer the
    waiting agent gets, on a request that allows ``respond``); ``selected`` are item ids. A
    request decided first by someone else raises ``ConflictError`` carrying the winning decision.
    ``view_digest`` (from ``view()``) binds the decision to what was shown: a changed view raises
    ``ConflictError``."""
    fields = _core.decision_fields(
        outcome, method, selected, edited_args, comment, key, valid_for_s, view_digest, response
    )
    body = validated(DecisionInput, fields).to_wire()
    call = Call("POST", _path("/v1/requests/{id}/decisions", id=request_id), safe=False, body=body)
    return ApprovalRequest.model_validate((yield from send(o, call)))


@route("POST", "/v1/requests/{id}/cancel", ApprovalRequest, body=CancelInput)
def cancel(o: Options, /, request_id: str, *, reason: str | None = None) -> Steps[ApprovalRequest]:
    """Withdraws a pending request (its requester, or an admin)."""
    body = validated(CancelInput, {"reason": reason}).to_wire()
    call = Call("POST", _path("/v1/requests/{id}/cancel", id=request_id), safe=False, body=body)
    return ApprovalRequest.model_validate((yield from send(o, call)))


@route("POST", "/v1/requests/{id}/execution", ApprovalRequest, body=ExecutionClaim)
def claim_execution(o: Options, /, request_id: str) -> Steps[ApprovalRequest]:
    """Claims an approved request for execution, once; a second claim raises ``ConflictError``."""
    body = validated(ExecutionClaim, {}).to_wire()
    call = Call("POST", _path("/v1/requests/{id}/execution", id=request_id), safe=False, body=body)
    return ApprovalRequest.model_validate((yield from send(o, call)))


# --- bulk decisions ------------------------------------------------------------------------------


@route("POST", "/v1/decisions", DecisionResults, body=DecisionsInput)
def decide_many(
    o: Options,
    /,
    decisions: Sequence[DecisionItem | Mapping[str, Any]] | None = None,
    *,
    ids: Sequence[str] | None = None,
    outcome: DecisionOutcome | None = None,
    comment: str | None = None,
) -> Steps[DecisionResults]:
    """Decides many requests in one call (at most 200): either ``decisions`` (each a
    ``DecisionItem`` or a dict with ``id``, ``outcome`` and what ``decide`` takes, ``valid_for_s``
    included), or ``ids`` with one ``outcome`` (and ``comment``) for all. Each is decided on its
    own and answers on its own: ``results[i].ok``; one that someone else decided first fails with
    ``code == "conflict"`` and the winning ``decision``, without stopping the others."""
    items = None
    if decisions is not None:
        items = [_decision_item(d) for d in decisions]
    body = validated(
        DecisionsInput,
        {
            "decisions": items,
            "ids": None if ids is None else [*ids],
            "outcome": outcome,
            "comment": comment,
        },
    ).to_wire()
    call = Call("POST", "/v1/decisions", safe=False, body=body)
    return DecisionResults.model_validate((yield from send(o, call)))


def _decision_item(d: DecisionItem | Mapping[str, Any]) -> DecisionItem:
    if isinstance(d, DecisionItem):
        return d
    fields = dict(d)
    valid_for_s = fields.pop("valid_for_s", None)
    if valid_for_s is not None:
        fields["valid_for_ms"] = max(1, round(valid_for_s * 1000))
    return validated(DecisionItem, fields)


# --- audit ---------------------------------------------------------------------------------------


@route("POST", "/v1/audit", AuditEvent, body=AuditInput)
def record(
    o: Options,
    /,
    event_type: RecordType,
    *,
    request_id: str | None = None,
    data: dict[str, Any] | None = None,
) -> Steps[AuditEvent]:
    """Appends an ``auto_executed`` or ``notified`` audit event (the actor is the token's):
    what an agent ran without asking, or its progress on a request (shown to reviewers live)."""
    body = validated(
        AuditInput, {"type": event_type, "request_id": request_id, "data": data or {}}
    ).to_wire()
    call = Call("POST", "/v1/audit", safe=False, body=body)
    return AuditEvent.model_validate((yield from send(o, call)))


@route("GET", "/v1/audit", AuditPage, query=("requestId", "after", "limit"))
def audit(
    o: Options,
    /,
    *,
    request_id: str | None = None,
    after: int | None = None,
    limit: int | None = None,
) -> Steps[AuditPage]:
    """Audit events, oldest first: of one request (any token that may see it), or of the whole log
    (admins). ``after`` is the last ``seq`` seen (``next_after`` of the previous page)."""
    query = _core.list_query({"requestId": request_id, "after": after, "limit": limit})
    call = Call("GET", "/v1/audit", safe=True, query=query)
    return AuditPage.model_validate((yield from send(o, call)))


# --- outbox --------------------------------------------------------------------------------------


@route(
    "GET",
    "/v1/outbox",
    OutboxPage,
    query=("requestId", "target", "status", "topic", "after", "limit"),
)
def outbox(
    o: Options,
    /,
    *,
    request_id: str | None = None,
    target: str | None = None,
    status: OutboxStatus | None = None,
    topic: OutboxTopic | None = None,
    after: str | None = None,
    limit: int | None = None,
) -> Steps[OutboxPage]:
    """The delivery log (admin): each notification, its target, attempts, last error and when it
    was delivered, oldest first. ``after`` is ``next_after`` of the previous page."""
    query = _core.list_query(
        {
            "requestId": request_id,
            "target": target,
            "status": status,
            "topic": topic,
            "after": after,
            "limit": limit,
        }
    )
    call = Call("GET", "/v1/outbox", safe=True, query=query)
    return OutboxPage.model_validate((yield from send(o, call)))


# --- embedded approval card ----------------------------------------------------------------------


@route("POST", "/v1/requests/{id}/embed-token", EmbedToken, body=EmbedTokenInput)
def mint_embed_token(
    o: Options,
    /,
    request_id: str,
    reviewer: str,
    *,
    groups: Sequence[str] | None = None,
    ttl_s: int | None = None,
) -> Steps[EmbedToken]:
    """Mints a short-lived token for an approval card (an app backend's ``app`` token, or an
    admin's; never an agent's): it opens only this request's ``/v1/embed`` routes, for
    ``reviewer``, who must hold a live reviewer token, may decide the request and is not its
    requester. ``ttl_s`` defaults to 600 on the server (at most 3600). Hand ``token`` to the page
    showing the card, never to the agent."""
    body = validated(
        EmbedTokenInput,
        {
            "reviewer": reviewer,
            "groups": None if groups is None else [*groups],
            "ttl_seconds": ttl_s,
        },
    ).to_wire()
    call = Call(
        "POST", _path("/v1/requests/{id}/embed-token", id=request_id), safe=False, body=body
    )
    return EmbedToken.model_validate((yield from send(o, call)))


# --- learned trust -------------------------------------------------------------------------------


@route("GET", "/v1/trust/suggestions", TrustSuggestionList)
def trust_suggestions(o: Options) -> Steps[TrustSuggestionList]:
    """Calls (action and args shape) people approved many times in a row, each a rule an admin
    may accept (admin)."""
    call = Call("GET", "/v1/trust/suggestions", safe=True)
    return TrustSuggestionList.model_validate((yield from send(o, call)))


@route("GET", "/v1/trust/rules", TrustRuleList, query=("includeRevoked",))
def trust_rules(o: Options, /, *, include_revoked: bool = False) -> Steps[TrustRuleList]:
    """The learned trust rules, oldest first (reviewer or admin); revoked ones when asked."""
    query = {"includeRevoked": "true"} if include_revoked else {}
    call = Call("GET", "/v1/trust/rules", safe=True, query=query)
    return TrustRuleList.model_validate((yield from send(o, call)))


@route("POST", "/v1/trust/rules", TrustRule, body=TrustRuleInput)
def accept_trust_rule(
    o: Options,
    /,
    action: str,
    shape_hash: str,
    *,
    any_requester: bool | None = None,
    any_value: Sequence[str] | None = None,
) -> Steps[TrustRule]:
    """Accepts a current suggestion as a rule (admin): later calls of that action with that args
    shape, within what the approvals earned (or as widened by ``any_requester`` / ``any_value``),
    are approved without asking, each naming the rule. Not a current suggestion: ``ConflictError``."""
    widen = None
    if any_requester is not None or any_value is not None:
        widen = {
            "any_requester": any_requester,
            "any_value": None if any_value is None else [*any_value],
        }
    body = validated(
        TrustRuleInput, {"action": action, "shape_hash": shape_hash, "widen": widen}
    ).to_wire()
    call = Call("POST", "/v1/trust/rules", safe=False, body=body)
    return TrustRule.model_validate((yield from send(o, call)))


@route("DELETE", "/v1/trust/rules/{id}", TrustRule)
def revoke_trust_rule(o: Options, /, rule_id: str) -> Steps[TrustRule]:
    """Revokes a rule (admin): its calls wait for a person again."""
    call = Call("DELETE", _path("/v1/trust/rules/{id}", id=rule_id), safe=False)
    return TrustRule.model_validate((yield from send(o, call)))


#: Every verb, by the name both clients give it.
VERBS: dict[str, Callable[..., Steps[Any]]] = {
    "request": request,
    "get": get,
    "view": view,
    "get_by_key": get_by_key,
    "list": list_,
    "wait": wait,
    "decide": decide,
    "cancel": cancel,
    "claim_execution": claim_execution,
    "decide_many": decide_many,
    "record": record,
    "audit": audit,
    "outbox": outbox,
    "mint_embed_token": mint_embed_token,
    "trust_suggestions": trust_suggestions,
    "trust_rules": trust_rules,
    "accept_trust_rule": accept_trust_rule,
    "revoke_trust_rule": revoke_trust_rule,
}
