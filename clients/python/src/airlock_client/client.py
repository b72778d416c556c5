"""``Airlock``: the synchronous client. Its verbs are ``_api.py``'s, run blocking: the same as
``AsyncAirlock``'s, awaited, and as the TypeScript ``createClient``'s (request / get / get_by_key /
list / wait / decide / cancel / claim_execution / record), plus the server's bulk decisions, audit
reading, outbox, embed-token minting and learned-trust rules."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import httpx

from . import _api, _core
from ._core import Call, Effect, Options, Sleep, Steps

P = ParamSpec("P")
R = TypeVar("R")


def _verb(
    steps: Callable[Concatenate[Options, P], Steps[R]], name: str
) -> Callable[Concatenate[Airlock, P], R]:
    """A method of ``Airlock`` running the verb ``steps`` with the client's options."""

    def method(self: Airlock, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._perform(steps(self.options, *args, **kwargs))

    return _core.as_method(method, steps, name, "Airlock", awaited=False)


class Airlock:
    """A client of one Airlock server.

    ``url`` and ``token`` default to ``AIRLOCK_URL`` and ``AIRLOCK_TOKEN``. Safe calls (reads, and
    ``request`` with a ``key``) are tried again, ``retries`` times with backoff, when the server is
    unreachable or answers 503 or 429 ``rate_limited`` (honouring Retry-After up to
    ``max_retry_delay_s``); ``wait`` keeps trying until its own timeout.

    The token never shows in ``repr(client.options)`` nor ``vars(client)`` (it is held as a
    ``Secret``). Plain ``http://`` is refused unless the host is this machine (localhost,
    127.0.0.0/8, ::1) or ``allow_insecure_http=True`` is given: anyone on the way could read the
    token.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout_s: float = 30.0,
        poll_s: float = 55.0,
        retries: int = 3,
        max_retry_delay_s: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        allow_insecure_http: bool = False,
    ) -> None:
        self.options = _core.resolve_options(
            url, token, timeout_s, poll_s, retries, max_retry_delay_s, allow_insecure_http
        )
        self._http = httpx.Client(
            base_url=self.options.url,
            headers=_core.headers_for(self.options.token),
            timeout=self.options.timeout_s,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Airlock:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- the verbs (_api.py) ----------------------------------------------------------------------

    request = _verb(_api.request, "request")
    get = _verb(_api.get, "get")
    view = _verb(_api.view, "view")
    get_by_key = _verb(_api.get_by_key, "get_by_key")
    list = _verb(_api.list_, "list")
    wait = _verb(_api.wait, "wait")
    decide = _verb(_api.decide, "decide")
    cancel = _verb(_api.cancel, "cancel")
    claim_execution = _verb(_api.claim_execution, "claim_execution")
    decide_many = _verb(_api.decide_many, "decide_many")
    record = _verb(_api.record, "record")
    audit = _verb(_api.audit, "audit")
    outbox = _verb(_api.outbox, "outbox")
    mint_embed_token = _verb(_api.mint_embed_token, "mint_embed_token")
    trust_suggestions = _verb(_api.trust_suggestions, "trust_suggestions")
    trust_rules = _verb(_api.trust_rules, "trust_rules")
    accept_trust_rule = _verb(_api.accept_trust_rule, "accept_trust_rule")
    revoke_trust_rule = _verb(_api.revoke_trust_rule, "revoke_trust_rule")

    # --- performing the effects -------------------------------------------------------------------

    def _perform(self, steps: Steps[R]) -> R:
        """Runs a verb (or a flow made of verbs) to its end: performs each effect it yields and
        sends back the result, or throws in the failure."""
        reply: Any = None
        failure: Exception | None = None
        try:
            while True:  # ends when the generator returns (or raises)
                try:
                    effect = steps.send(reply) if failure is None else steps.throw(failure)
                except StopIteration as done:
                    return cast(R, done.value)
                reply, failure = None, None
                try:
                    reply = self._effect(effect)
                except Exception as err:  # handed to the verb, which may retry or raise it
                    failure = err
        finally:
            steps.close()

    def _effect(self, effect: Effect) -> Any:
        if isinstance(effect, Call):
            return self._send(effect)
        if isinstance(effect, Sleep):
            time.sleep(effect.seconds)
            return None
        return effect.fn(*effect.args, **effect.kwargs)

    def _send(self, call: Call) -> Any:
        try:
            res = self._http.request(
                call.method,
                call.path,
                params=call.query or None,
                json=call.body,
                headers=call.headers or None,
                timeout=call.timeout_s if call.timeout_s is not None else self.options.timeout_s,
            )
        except httpx.TransportError as err:
            raise _core.network_error(err, self.options.url, call) from err
        return _core.read_answer(res, call)
