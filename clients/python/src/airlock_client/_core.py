"""What the sync and async clients share: each API call described as data (``Call``), the other
effects a verb may ask for (``Sleep``, ``Invoke``), answers and failures mapped to models and
exceptions, and the retry policy. The verbs themselves are written once, in ``_api.py``; the two
clients only perform the effects (``client.py`` blocking, ``async_client.py`` awaited)."""

from __future__ import annotations

import hmac
import inspect
import ipaddress
import os
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from .errors import AirlockError, InvalidInputError, UnavailableError, error_from_problem
from .models import RequestInput

BACKOFF_MIN_S = 0.1
BACKOFF_MAX_S = 5.0
#: Extra time the client gives a long-poll beyond what it asked the server to wait.
POLL_MARGIN_S = 10.0

ItemInput = str | dict[str, Any]


class Secret:
    """A credential that does not show itself: ``repr``, ``str`` and formatting give ``'***'``, and
    it has no ``__dict__`` for ``vars`` to list; ``reveal()`` returns the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    def __str__(self) -> str:
        return "***"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> Any:
        # Pickling would carry the token in the clear to wherever the pickle goes.
        raise TypeError("a Secret cannot be pickled")


@dataclass(frozen=True)
class Options:
    url: str
    #: The API token, masked: ``options.token.reveal()`` gives it.
    token: Secret
    timeout_s: float = 30.0
    poll_s: float = 55.0
    retries: int = 3
    max_retry_delay_s: float = 10.0
    allow_insecure_http: bool = False


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_options(
    url: str | None,
    token: str | None,
    timeout_s: float,
    poll_s: float,
    retries: int,
    max_retry_delay_s: float,
    allow_insecure_http: bool = False,
) -> Options:
    url = url or os.environ.get("AIRLOCK_URL")
    token = token or os.environ.get("AIRLOCK_TOKEN")
    host = urlsplit(url).hostname if url else None
    if not url or not url.startswith(("http://", "https://")) or not host:
        raise ValueError(
            f"Expected `url` to be the server's address, like http://127.0.0.1:7420 "
            f"(or AIRLOCK_URL), got {url!r}"
        )
    if url.startswith("http://") and not is_loopback(host) and not allow_insecure_http:
        # The token goes in every request's Authorization header: over plain HTTP anyone on the
        # way can read it and act as this caller.
        raise ValueError(
            f"Refusing to send the API token over plain HTTP to {host}, which is not this "
            f"machine: use https:// (or pass allow_insecure_http=True if the network in between "
            f"is trusted), got {url!r}"
        )
    if not token:
        raise ValueError("Expected `token` to be an API token (or AIRLOCK_TOKEN), got nothing")
    for name, value in (("timeout_s", timeout_s), ("poll_s", poll_s)):
        if not value > 0:
            raise ValueError(f"Expected `{name}` to be a number above 0, got {value!r}")
    if not (isinstance(retries, int) and retries >= 0):
        raise ValueError(f"Expected `retries` to be an integer from 0 and up, got {retries!r}")
    if not max_retry_delay_s >= 0:
        raise ValueError(
            f"Expected `max_retry_delay_s` to be a number from 0 and up, got {max_retry_delay_s!r}"
        )
    return Options(
        url.rstrip("/"),
        Secret(token),
        timeout_s,
        poll_s,
        retries,
        max_retry_delay_s,
        allow_insecure_http,
    )


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    #: Safe to send again: a repeat cannot act twice (reads, creates with a key).
    safe: bool
    body: dict[str, Any] | None = None
    query: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    timeout_s: float | None = None


@dataclass(frozen=True)
class Sleep:
    """Pause before going on (a retry's backoff)."""

    seconds: float


@dataclass(frozen=True)
class Invoke:
    """Run the caller's own function (a gated function, a tool): called as it is by the sync
    client, and awaited by the async one when it returns an awaitable."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


Effect = Call | Sleep | Invoke
R = TypeVar("R")
#: A verb written once: a generator that yields effects, is sent each effect's result (a ``Call``'s
#: JSON answer, an ``Invoke``'s return value) or has its failure thrown in, and returns the verb's
#: result.
Steps = Generator[Effect, Any, R]


M = TypeVar("M", bound=Callable[..., Any])


def as_method(method: M, steps: Callable[..., Any], name: str, owner: str, *, awaited: bool) -> M:
    """Gives a client's method made from a verb the verb's name, documentation and signature
    (``self`` in place of the options; the verb's result as the return annotation)."""
    sig = inspect.signature(steps)
    result = sig.return_annotation
    if isinstance(result, str) and result.startswith("Steps[") and result.endswith("]"):
        result = result[len("Steps[") : -1]
        if awaited:
            result = f"Coroutine[Any, Any, {result}]"
    params = [*sig.parameters.values()][1:]
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    attrs = vars(method)
    attrs["__signature__"] = sig.replace(parameters=[this, *params], return_annotation=result)
    attrs["route"] = vars(steps).get("route")
    method.__name__ = name
    method.__qualname__ = f"{owner}.{name}"
    method.__doc__ = steps.__doc__
    return method


In = TypeVar("In", bound=BaseModel)


def validated(model: type[In], data: dict[str, Any]) -> In:
    """``data`` as the input model, or the ``InvalidInputError`` the server would answer (naming
    the field as on the wire), before anything is sent."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"] if not isinstance(part, int))
        # A union names each branch tried (``onTimeout.literal[...]``): keep the field's own name.
        field_name = where.split(".")[0] if where else None
        raise InvalidInputError(
            "invalid_input",
            f"{first['msg']}, got {first.get('input')!r}",
            field=field_name,
        ) from err


def create_call(
    title: str,
    *,
    action: str | None,
    items: Sequence[ItemInput] | None,
    args: dict[str, Any] | None,
    key: str | None,
    timeout_s: float | None,
    fields: dict[str, Any],
) -> Call:
    """``POST /v1/requests``. ``fields`` are further request fields, snake_case or camelCase."""
    # Further fields may be given snake_case (``revision_of``) or as on the wire (``revisionOf``).
    data: dict[str, Any] = {"title": title, **{to_camel(k): v for k, v in fields.items()}}
    if action is not None:
        data["action"] = action
    if items is not None:
        data["items"] = [*items]
    if args is not None:
        data["args"] = args
    if key is not None:
        data["key"] = key
    if timeout_s is not None:
        data["timeout_ms"] = max(1, round(timeout_s * 1000))
    body = validated(RequestInput, data).to_wire()
    # Without a key a repeat could open a second gate: such a create is sent once.
    return Call(
        "POST",
        "/v1/requests",
        safe=key is not None,
        body=body,
        headers={} if key is None else {"idempotency-key": key},
    )


def list_query(params: dict[str, Any]) -> dict[str, Any]:
    """Query parameters without the unset ones; a list or tuple repeats its parameter."""
    return {
        k: ([*v] if isinstance(v, (list, tuple)) else v) for k, v in params.items() if v is not None
    }


def decision_fields(
    outcome: str,
    method: str | None,
    selected: Sequence[str] | None,
    edited_args: dict[str, Any] | None,
    comment: str | None,
    key: str | None,
    valid_for_s: float | None,
    view_digest: str | None = None,
    response: Any = None,
) -> dict[str, Any]:
    return {
        "view_digest": view_digest,
        "response": response,
        "outcome": outcome,
        "method": method,
        "selected": None if selected is None else [*selected],
        "edited_args": edited_args,
        "comment": comment,
        "key": key,
        "valid_for_ms": None if valid_for_s is None else max(1, round(valid_for_s * 1000)),
    }


def wait_call(path: str, seconds: float) -> Call:
    """One long-poll of ``seconds`` (the client waits ``POLL_MARGIN_S`` longer for the answer)."""
    return Call(
        "GET",
        path,
        safe=True,
        query={"timeout": f"{seconds:.3f}"},
        timeout_s=seconds + POLL_MARGIN_S,
    )


def headers_for(token: Secret) -> dict[str, str]:
    return {
        "authorization": f"Bearer {token.reveal()}",
        "accept": "application/json, application/problem+json",
        "user-agent": "airlock-client-python",
    }


def read_answer(res: httpx.Response, call: Call) -> Any:
    """The JSON of a successful answer; the matching exception for anything else."""
    try:
        value = res.json() if res.content else None
    except ValueError:
        value = None
    if res.is_success:
        if value is None:
            raise UnavailableError(
                "store_unavailable",
                f"the server answered {call.method} {call.path} with something other than JSON",
                status=res.status_code,
            )
        return value
    raise error_from_problem(res.status_code, value, res.headers.get("retry-after"))


def network_error(err: Exception, base_url: str, call: Call) -> UnavailableError:
    if isinstance(err, httpx.TimeoutException):
        detail = (
            f"the Airlock server at {base_url} did not answer {call.method} {call.path} in time"
        )
    else:
        detail = f"cannot reach the Airlock server at {base_url}: {err}"
    unavailable = UnavailableError("unreachable", detail)
    unavailable.__cause__ = err
    return unavailable


class Backoff:
    """Pauses between tries: the server's Retry-After when it names one, else doubling from 0.1 s
    to 5 s. ``limit_s`` bounds one pause (a longer Retry-After is not waited for)."""

    def __init__(self, limit_s: float = float("inf")) -> None:
        self.next_s = BACKOFF_MIN_S
        self.limit_s = limit_s

    def pause_for(self, err: UnavailableError) -> float | None:
        pause = err.retry_after_s if err.retry_after_s is not None else self.next_s
        self.next_s = min(self.next_s * 2, BACKOFF_MAX_S)
        return None if pause > self.limit_s else pause

    def reset(self) -> None:
        self.next_s = BACKOFF_MIN_S


def retry_pause(
    err: AirlockError, attempt: int, options: Options, backoff: Backoff
) -> float | None:
    """How long to sleep before trying a safe call again, or None to give up and raise."""
    if attempt >= options.retries or not isinstance(err, UnavailableError) or not err.retryable:
        return None
    return backoff.pause_for(err)


class Deadline:
    def __init__(self, timeout_s: float | None) -> None:
        self.timeout_s = timeout_s
        self.at = None if timeout_s is None else time.monotonic() + timeout_s

    def remaining(self) -> float:
        return float("inf") if self.at is None else self.at - time.monotonic()
