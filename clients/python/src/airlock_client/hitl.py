"""Pattern 3 in Python: ``@hitl_tool(...)`` wraps an agent tool so each call is scored (0-100) and
routed by confidence: ``auto`` runs at once (audited through Airlock when a client is given),
``quick`` and ``full`` open an Airlock request and return the pending marker
``{"__hitl_pending__": True, "hitl_result": {...}}`` (or, with ``blocking=True``, wait for the person
and then run with the approved arguments, once). ``tool.resume(approval_id)`` finishes a call that
returned a marker. Scores and defaults match the TypeScript ``hitlTool``."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import Any, Protocol, TypeVar, cast, overload

from pydantic import BaseModel, ConfigDict, Field, model_validator

from . import _api
from ._core import Invoke, Steps
from .async_client import AsyncAirlock
from .binding import approved_args, hash_args
from .client import Airlock
from .errors import ConflictError, NotApprovedError
from .models import ApprovalRequest
from .redaction import redact

HITL_PENDING_KEY = "__hitl_pending__"
_CONFIG_ATTR = "_hitl_config"

#: Base score per tool name; tools not listed start at ``DEFAULT_BASE_SCORE``.
BASE_SCORES: dict[str, int] = {
    "sign_contract": 50,
    "delete_project": 40,
    "approve_expense": 60,
    "send_notification": 80,
    "update_task_status": 85,
}
DEFAULT_BASE_SCORE = 70
LARGE_AMOUNT = 1000


class ApprovalLevel(str, Enum):
    AUTO = "auto"
    QUICK = "quick"
    FULL = "full"


class HITLConfig(BaseModel):
    """How a wrapped tool is routed and shown. ``auto_threshold >= quick_threshold`` is enforced."""

    model_config = ConfigDict(frozen=True)

    auto_threshold: int = Field(default=85, ge=0, le=100)
    quick_threshold: int = Field(default=60, ge=0, le=100)
    approval_type: str = "general"
    risk_level: str = "medium"
    requires_reason: bool = False
    approve_label: str = "Approve"
    reject_label: str = "Reject"
    description_template: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> HITLConfig:
        if self.auto_threshold < self.quick_threshold:
            raise ValueError(
                f"Expected `auto_threshold` to be at least `quick_threshold` "
                f"({self.quick_threshold}), got {self.auto_threshold}"
            )
        if self.risk_level not in ("low", "medium", "high", "critical"):
            raise ValueError(
                f"Expected `risk_level` to be low, medium, high or critical, got {self.risk_level!r}"
            )
        return self


def calculate_confidence(
    tool_name: str, args: dict[str, Any] | None = None, context: dict[str, Any] | None = None
) -> int:
    """Base score per tool (else 70); admin +10, verified workspace +5, ``amount`` > 1000 -15,
    bulk operation -10; clamped to 0..100."""
    args = args or {}
    context = context or {}
    score = BASE_SCORES.get(tool_name, DEFAULT_BASE_SCORE)
    if (context.get("userRole") or context.get("user_role")) == "admin":
        score += 10
    if (context.get("workspaceVerified") or context.get("workspace_verified")) is True:
        score += 5
    amount = args.get("amount")
    if isinstance(amount, (int, float)) and not isinstance(amount, bool) and amount > LARGE_AMOUNT:
        score -= 15
    if args.get("bulk") is True or context.get("bulk") is True or "bulk" in tool_name.lower():
        score -= 10
    return max(0, min(100, score))


def determine_approval_level(confidence: float, config: HITLConfig | None = None) -> ApprovalLevel:
    config = config or HITLConfig()
    if confidence >= config.auto_threshold:
        return ApprovalLevel.AUTO
    if confidence >= config.quick_threshold:
        return ApprovalLevel.QUICK
    return ApprovalLevel.FULL


def is_hitl_pending(result: Any) -> bool:
    return isinstance(result, dict) and result.get(HITL_PENDING_KEY) is True


def is_hitl_tool(fn: Any) -> bool:
    return callable(fn) and isinstance(getattr(fn, _CONFIG_ATTR, None), HITLConfig)


def get_hitl_config(fn: Any) -> HITLConfig | None:
    return getattr(fn, _CONFIG_ATTR, None) if is_hitl_tool(fn) else None


F = TypeVar("F", bound=Callable[..., Any])


class HitlTool(Protocol):
    """A tool wrapped by ``hitl_tool``: called with the tool's keyword arguments (and
    ``_hitl_context``), it returns the tool's result, a pending marker or a rejection."""

    def __call__(self, **kwargs: Any) -> Any: ...

    def resume(self, approval_id: str, *, wait: bool | None = None) -> Any: ...


class AsyncHitlTool(Protocol):
    """An ``async def`` tool wrapped by ``hitl_tool``: ``HitlTool``, awaited."""

    def __call__(self, **kwargs: Any) -> Awaitable[Any]: ...

    def resume(self, approval_id: str, *, wait: bool | None = None) -> Awaitable[Any]: ...


class HitlDecorator(Protocol):
    @overload
    def __call__(self, fn: Callable[..., Awaitable[Any]], /) -> AsyncHitlTool: ...
    @overload
    def __call__(self, fn: Callable[..., Any], /) -> HitlTool: ...


@overload
def hitl_tool(fn: Callable[..., Awaitable[Any]], /, **options: Any) -> AsyncHitlTool: ...
@overload
def hitl_tool(fn: Callable[..., Any], /, **options: Any) -> HitlTool: ...
@overload
def hitl_tool(fn: None = None, /, **options: Any) -> HitlDecorator: ...


def hitl_tool(
    fn: F | None = None,
    /,
    *,
    name: str | None = None,
    airlock: Airlock | AsyncAirlock | None = None,
    blocking: bool = False,
    timeout_s: float | None = None,
    approvers: list[str] | None = None,
    action: str | None = None,
    confidence: Callable[[str, dict[str, Any], dict[str, Any]], float] | None = None,
    **config: Any,
) -> Any:
    """Wraps a tool (``def`` or ``async def``; the wrapper has the same kind). Keyword arguments of
    ``HITLConfig`` configure routing and labels; ``airlock`` is where quick/full calls are asked
    (without it they return a marker with no ``approval_id``); ``blocking`` waits and runs instead of
    returning the marker. Callers may pass ``_hitl_context={...}`` (``user_role``,
    ``workspace_verified``, ``bulk``, ``key`` for the gate's idempotency key, ...).

    A call that was not approved returns ``{"rejected": True, "retry": False, "reason": ..., "code":
    ...}`` for the model to read, rather than raising."""
    cfg = HITLConfig(**config)
    if blocking and airlock is None:
        raise ValueError("Expected `airlock` (a client) when `blocking` is True, got None")

    def wrap(tool: F) -> F:
        tool_name = name or tool.__name__
        gate_action = action or tool_name
        is_async = inspect.iscoroutinefunction(tool)
        if airlock is not None and is_async != isinstance(airlock, AsyncAirlock):
            raise TypeError(
                f"`{tool_name}` is {'async' if is_async else 'not async'}: give it "
                f"{'an AsyncAirlock' if is_async else 'an Airlock'} client"
            )

        def score(args: dict[str, Any], context: dict[str, Any]) -> tuple[int, ApprovalLevel]:
            raw = (confidence or calculate_confidence)(tool_name, args, context)
            value = int(max(0, min(100, raw)))
            return value, determine_approval_level(value, cfg)

        def describe(shown: dict[str, Any]) -> str:
            if not cfg.description_template:
                return f"Approve {tool_name}"
            return re.sub(
                r"\{(\w+)\}",
                lambda m: str(shown[m.group(1)]) if m.group(1) in shown else m.group(0),
                cfg.description_template,
            )[:500]

        def marker(
            args: dict[str, Any], level: ApprovalLevel, conf: float, approval_id: str | None
        ) -> dict[str, Any]:
            shown = redact(args)
            result: dict[str, Any] = {
                "requires_approval": True,
                "approval_level": level.value,
                "confidence_score": conf,
                "tool_name": tool_name,
                "tool_args": shown,
                "config": cfg.model_dump(exclude_none=True),
                "description": describe(shown),
            }
            if approval_id is not None:
                result["approval_id"] = approval_id
            return {HITL_PENDING_KEY: True, "hitl_result": result}

        def request_fields(
            args: dict[str, Any], context: dict[str, Any], level: ApprovalLevel, conf: int
        ) -> dict[str, Any]:
            shown = redact(args)
            fields: dict[str, Any] = {
                "action": gate_action,
                "args": args,
                "summary": f"**Tool:** `{tool_name}` ({cfg.approval_type}, risk {cfg.risk_level})\n"
                f"**Confidence:** {conf} → {level.value} review",
                "risk": cfg.risk_level,
                "confidence": conf,
                "level": level.value,
                "allowed": ["approve", "reject", "revise", "edit"],
                "labels": {"approve": cfg.approve_label, "reject": cfg.reject_label},
                "hitl": {
                    "tool": tool_name,
                    "approvalType": cfg.approval_type,
                    "autoThreshold": cfg.auto_threshold,
                    "quickThreshold": cfg.quick_threshold,
                    "requiresReason": cfg.requires_reason,
                    "context": redact(context),
                },
                "timeout_s": timeout_s,
                "approvers": approvers,
                "key": context.get("key"),
                "correlation_id": context.get("correlationId") or context.get("correlation_id"),
            }
            if cfg.requires_reason:
                fields["revision_comment_required"] = True
            return {"title": describe(shown), **{k: v for k, v in fields.items() if v is not None}}

        def audit_data(args: dict[str, Any], conf: int) -> dict[str, Any]:
            return {
                "tool": tool_name,
                "args": redact(args),
                "argsHash": hash_args(args),
                "confidence": conf,
                "autoThreshold": cfg.auto_threshold,
            }

        def rejection(request: ApprovalRequest, err: NotApprovedError) -> dict[str, Any]:
            out: dict[str, Any] = {
                "rejected": True,
                "retry": False,
                "reason": f"{err.detail}. The {tool_name} call was not executed; do not retry the same call.",
                "code": err.reason,
                "tool_name": tool_name,
                "approval_id": request.id,
            }
            d = request.decision
            if d is not None and d.comment:
                out["comment"] = d.comment
            if d is not None:
                out["reviewer"] = d.reviewer
            return out

        def check_tool(request: ApprovalRequest) -> ApprovalRequest:
            """Refuses to resume a request opened for another tool (its arguments are not ours)."""
            tool_of = request.hitl.tool if request.hitl is not None else None
            if request.action != gate_action or tool_of != tool_name:
                raise ValueError(
                    f"request {request.id} is not a call to the tool `{tool_name}` "
                    f"(its action is `{request.action}`)"
                )
            return request

        def split(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
            context = kwargs.pop("_hitl_context", None) or {}
            if not isinstance(context, dict):
                raise TypeError(
                    f"Expected `_hitl_context` to be a dict, got {type(context).__name__}"
                )
            return kwargs, context

        client = airlock
        options = airlock.options if airlock is not None else None

        def settle(request: ApprovalRequest) -> Steps[Any]:
            """Runs an approved call with the approved arguments, once; anything else is the
            rejection the model reads."""
            assert options is not None
            try:
                args = approved_args(request)
                try:
                    yield from _api.claim_execution(options, request.id)
                except ConflictError as err:
                    raise NotApprovedError("already_executed", err.detail, request) from err
            except NotApprovedError as err:
                return rejection(request, err)
            return (yield Invoke(tool, (), args))

        def pending_marker(request: ApprovalRequest, args: dict[str, Any], conf: float) -> Any:
            level = ApprovalLevel(request.level if request.level != "auto" else "quick")
            return marker(args, level, conf, request.id)

        def call_flow(
            args: dict[str, Any], context: dict[str, Any], conf: int, level: ApprovalLevel
        ) -> Steps[Any]:
            assert options is not None
            if level is ApprovalLevel.AUTO:
                yield from _api.record(options, "auto_executed", data=audit_data(args, conf))
                return (yield Invoke(tool, (), args))
            fields = request_fields(args, context, level, conf)
            req = yield from _api.request(options, fields.pop("title"), **fields)
            if req.pending and not blocking:
                return pending_marker(req, args, conf)
            if req.pending:
                req = yield from _api.wait(options, req.id)
            return (yield from settle(req))

        def resume_flow(approval_id: str, wait: bool | None) -> Steps[Any]:
            assert options is not None
            req = check_tool((yield from _api.get(options, approval_id)))
            if req.pending:
                if not (blocking if wait is None else wait):
                    return pending_marker(req, req.args, req.confidence or 0)
                req = yield from _api.wait(options, approval_id)
            return (yield from settle(req))

        def prepare(
            kwargs: dict[str, Any],
        ) -> tuple[dict[str, Any], dict[str, Any], int, ApprovalLevel]:
            args, context = split(kwargs)
            return (args, context, *score(args, context))

        def no_client() -> ValueError:
            return ValueError(f"the tool `{tool_name}` has no `airlock` client to resume with")

        # The flows above are the tool's whole behaviour; the wrappers below only run them, blocking
        # or awaited (``Airlock._perform`` / ``AsyncAirlock._perform``).
        if is_async:
            aclient = client if isinstance(client, AsyncAirlock) else None

            @functools.wraps(tool)
            async def acall(**kwargs: Any) -> Any:
                args, context, conf, level = prepare(kwargs)
                if aclient is not None:
                    return await aclient._perform(call_flow(args, context, conf, level))
                if level is ApprovalLevel.AUTO:
                    return await tool(**args)
                return marker(args, level, conf, None)

            async def aresume(approval_id: str, *, wait: bool | None = None) -> Any:
                if aclient is None:
                    raise no_client()
                return await aclient._perform(resume_flow(approval_id, wait))

            acall.__dict__["resume"] = aresume
            acall.__dict__[_CONFIG_ATTR] = cfg
            return cast(F, acall)

        sclient = client if isinstance(client, Airlock) else None

        @functools.wraps(tool)
        def call(**kwargs: Any) -> Any:
            args, context, conf, level = prepare(kwargs)
            if sclient is not None:
                return sclient._perform(call_flow(args, context, conf, level))
            if level is ApprovalLevel.AUTO:
                return tool(**args)
            return marker(args, level, conf, None)

        def resume(approval_id: str, *, wait: bool | None = None) -> Any:
            if sclient is None:
                raise no_client()
            return sclient._perform(resume_flow(approval_id, wait))

        call.__dict__["resume"] = resume
        call.__dict__[_CONFIG_ATTR] = cfg
        return cast(F, call)

    return wrap(fn) if fn is not None else wrap
