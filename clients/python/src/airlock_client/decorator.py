"""``@require_approval(client, ...)``: calling the function opens a gate with the call's arguments,
waits for a person, and runs the function only when approved (with the reviewer's edited arguments
when they edited), once. The gate's key is derived from the function and its arguments, so a caller
that crashed and calls again finds the same gate, and two callers racing on one call share it:
the execution is claimed on the server (``claim_execution``), so exactly one of them runs it."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

from . import _api
from ._core import Invoke, Steps
from .async_client import AsyncAirlock
from .binding import approved_args, claim_conflict, hash_args
from .client import Airlock
from .errors import ConflictError
from .models import ApprovalRequest

F = TypeVar("F", bound=Callable[..., Any])
KeyFn = Callable[[dict[str, Any]], str]


def require_approval(
    client: Airlock | AsyncAirlock,
    *,
    title: str | None = None,
    action: str | None = None,
    key: str | KeyFn | None = None,
    timeout_s: float | None = None,
    wait_timeout_s: float | None = None,
    **fields: Any,
) -> Callable[[F], F]:
    """Gates a function (sync with ``Airlock``, ``async def`` with ``AsyncAirlock``).

    - ``title``: what reviewers read, with ``{arg}`` filled from the call (default "Run <name>").
    - ``action``: the request's action (default the function's module and qualified name).
    - ``key``: the gate's idempotency key, or a function of the call's arguments returning one
      (default: the action plus a hash of the arguments).
    - ``timeout_s``: the gate's deadline; ``wait_timeout_s``: how long this call waits for it.
    - further ``fields`` (``approvers``, ``risk``, ``summary``, ...) go to ``request`` as they are.

    Not approved (rejected, revise, timed out, cancelled, arguments that do not match the approval)
    raises ``NotApprovedError``; a call whose approval another caller already ran raises
    ``AlreadyExecutedError``.
    """

    def decorate(fn: F) -> F:
        sig = inspect.signature(fn)
        name = f"{fn.__module__}.{fn.__qualname__}"
        gate_action = action or name[-200:]

        def open_args(
            args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> tuple[inspect.BoundArguments, dict[str, Any]]:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            return bound, {k: _jsonable(v) for k, v in bound.arguments.items()}

        def gate_input(call_args: dict[str, Any]) -> dict[str, Any]:
            if callable(key):
                gate_key = key(call_args)
            elif key is not None:
                gate_key = key
            else:
                gate_key = f"{gate_action[:120]}:{hash_args(call_args)[:40]}"
            text = title or f"Run {fn.__qualname__}"
            try:
                text = text.format_map(_Leave(call_args))
            except (ValueError, IndexError, AttributeError):
                pass  # a title with stray braces is shown as written
            return {
                "title": text[:500],
                "action": gate_action,
                "args": call_args,
                "key": gate_key,
                "timeout_s": timeout_s,
                **fields,
            }

        def run_with(
            bound: inspect.BoundArguments, request: ApprovalRequest
        ) -> tuple[tuple[Any, ...], dict[str, Any]]:
            edited = approved_args(request)
            for k, v in edited.items():
                if k in bound.arguments:
                    param = sig.parameters[k]
                    bound.arguments[k] = tuple(v) if param.kind is param.VAR_POSITIONAL else v
            return bound.args, bound.kwargs

        def flow(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Steps[Any]:
            """The whole gated call, written once: open (or find) the gate, wait, check the
            approval binds these arguments, claim the execution, run."""
            bound, call_args = open_args(args, kwargs)
            inp = gate_input(call_args)
            req = yield from _api.request(client.options, inp.pop("title"), **inp)
            if not req.terminal:
                req = yield from _api.wait(client.options, req.id, wait_timeout_s)
            a, kw = run_with(bound, req)
            try:
                yield from _api.claim_execution(client.options, req.id)
            except ConflictError as err:
                raise claim_conflict(err, req) from err
            return (yield Invoke(fn, a, kw))

        if inspect.iscoroutinefunction(fn):
            if not isinstance(client, AsyncAirlock):
                raise TypeError(
                    f"`{fn.__qualname__}` is async: gate it with an AsyncAirlock client"
                )
            aclient = client

            @functools.wraps(fn)
            async def async_gated(*args: Any, **kwargs: Any) -> Any:
                return await aclient._perform(flow(args, kwargs))

            return cast(F, async_gated)

        if not isinstance(client, Airlock):
            raise TypeError(f"`{fn.__qualname__}` is not async: gate it with an Airlock client")
        sclient = client

        @functools.wraps(fn)
        def gated(*args: Any, **kwargs: Any) -> Any:
            return sclient._perform(flow(args, kwargs))

        return cast(F, gated)

    return decorate


class _Leave(dict):  # type: ignore[type-arg]
    """Leaves unknown ``{placeholders}`` of a title as they are."""

    def __missing__(self, k: str) -> str:
        return "{" + k + "}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(
        f"require_approval: the call's arguments must be JSON values (they are shown to reviewers "
        f"and bound to the approval), got {type(value).__name__}"
    )
