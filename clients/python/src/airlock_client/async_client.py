"""``AsyncAirlock``: the asyncio client, method for method the same as ``Airlock`` (client.py),
awaited. Keep the two in step: a change to one is a change to both."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import httpx

from . import _core
from ._core import Backoff, Call, Deadline, ItemInput
from .errors import UnavailableError, WaitTimeoutError
from .models import ApprovalRequest, AuditEvent, RequestPage


class AsyncAirlock:
    """A client of one Airlock server, for asyncio: the methods of ``Airlock``, awaited.

    ``url`` and ``token`` default to ``AIRLOCK_URL`` and ``AIRLOCK_TOKEN``. Safe calls (``get``,
    ``get_by_key``, ``list`` and ``request`` with a ``key``) are tried again, ``retries`` times with
    backoff, when the server is unreachable or answers 503 or 429 ``rate_limited`` (honouring
    Retry-After up to ``max_retry_delay_s``); ``wait`` keeps trying until its own timeout.

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
        transport: httpx.AsyncBaseTransport | None = None,
        allow_insecure_http: bool = False,
    ) -> None:
        self.options = _core.resolve_options(
            url, token, timeout_s, poll_s, retries, max_retry_delay_s, allow_insecure_http
        )
        self._http = httpx.AsyncClient(
            base_url=self.options.url,
            headers=_core.headers_for(self.options.token),
            timeout=self.options.timeout_s,
            transport=transport,
        )

    # --- plumbing -------------------------------------------------------------------------------

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncAirlock:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def _send(self, call: Call) -> Any:
        try:
            res = await self._http.request(
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

    async def _run(self, call: Call) -> Any:
        if not call.safe:
            return await self._send(call)
        backoff = Backoff(self.options.max_retry_delay_s)
        attempt = 0
        while True:
            try:
                return await self._send(call)
            except UnavailableError as err:
                pause = _core.retry_pause(err, attempt, self.options, backoff)
                if pause is None:
                    raise
                await asyncio.sleep(pause)
                attempt += 1

    # --- the API --------------------------------------------------------------------------------

    async def request(
        self,
        title: str,
        *,
        action: str | None = None,
        items: Sequence[ItemInput] | None = None,
        args: dict[str, Any] | None = None,
        key: str | None = None,
        timeout_s: float | None = None,
        **fields: Any,
    ) -> ApprovalRequest:
        """Opens a gate. With ``key``, a repeat (a crashed caller replaying) returns the first
        request. ``timeout_s`` is the gate's deadline; further fields (``summary``, ``approvers``,
        ``risk``, ``on_timeout``, ``metadata``, ``question``, ``critiques``, ...) go as they are."""
        call = _core.create_call(
            title,
            action=action,
            items=items,
            args=args,
            key=key,
            timeout_s=timeout_s,
            fields=fields,
        )
        return ApprovalRequest.model_validate(await self._run(call))

    async def get(self, request_id: str) -> ApprovalRequest:
        return ApprovalRequest.model_validate(
            await self._run(Call("GET", _core.request_path(request_id), safe=True))
        )

    async def get_by_key(self, key: str, *, requester: str | None = None) -> ApprovalRequest | None:
        """The request created with this idempotency key (by default by this token), or None."""
        query = {"key": key} if requester is None else {"key": key, "requester": requester}
        page = RequestPage.model_validate(
            await self._run(Call("GET", "/v1/requests", safe=True, query=query))
        )
        return page.items[0] if page.items else None

    async def list(
        self,
        *,
        status: str | Sequence[str] | None = None,
        action: str | None = None,
        approver: str | Sequence[str] | None = None,
        requester: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        order: str | None = None,
    ) -> RequestPage:
        query = _core.list_query(status, action, approver, requester, cursor, limit, order)
        return RequestPage.model_validate(
            await self._run(Call("GET", "/v1/requests", safe=True, query=query))
        )

    async def wait(self, request_id: str, timeout_s: float | None = None) -> ApprovalRequest:
        """Long-polls until the request is terminal and returns it. Reconnects through server
        restarts, 503 and 429 until ``timeout_s`` (None: no limit), then raises
        ``WaitTimeoutError``. A missing request or a refused token raises at once."""
        deadline = Deadline(timeout_s)
        backoff = Backoff()
        while True:
            remaining = deadline.remaining()
            if remaining <= 0:
                raise WaitTimeoutError(request_id, timeout_s or 0)
            seconds = min(self.options.poll_s, remaining)
            try:
                request = ApprovalRequest.model_validate(
                    await self._send(_core.wait_call(request_id, seconds))
                )
            except UnavailableError as err:
                pause = backoff.pause_for(err) or backoff.next_s
                await asyncio.sleep(max(0.0, min(pause, deadline.remaining())))
                continue
            backoff.reset()
            if request.terminal:
                return request

    async def decide(
        self,
        request_id: str,
        outcome: str,
        *,
        method: str | None = None,
        selected: Sequence[str] | None = None,
        edited_args: dict[str, Any] | None = None,
        comment: str | None = None,
        key: str | None = None,
        valid_for_s: float | None = None,
    ) -> ApprovalRequest:
        """Decides as the token's principal (a reviewer or admin token). ``outcome`` is
        ``approved``, ``rejected`` or ``revise``; ``selected`` are item ids. A request decided first
        by someone else raises ``ConflictError`` carrying the winning decision."""
        call = _core.decide_call(
            request_id,
            outcome,
            method=method,
            selected=selected,
            edited_args=edited_args,
            comment=comment,
            key=key,
            valid_for_s=valid_for_s,
        )
        return ApprovalRequest.model_validate(await self._run(call))

    async def cancel(self, request_id: str, *, reason: str | None = None) -> ApprovalRequest:
        return ApprovalRequest.model_validate(
            await self._run(_core.cancel_call(request_id, reason))
        )

    async def claim_execution(self, request_id: str) -> ApprovalRequest:
        """Claims an approved request for execution, once; a second claim raises ``ConflictError``."""
        call = Call("POST", _core.request_path(request_id, "/execution"), safe=False, body={})
        return ApprovalRequest.model_validate(await self._run(call))

    async def record(
        self,
        event_type: str,
        *,
        request_id: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> AuditEvent:
        """Appends an ``auto_executed`` or ``notified`` audit event (the actor is the token's)."""
        return AuditEvent.model_validate(
            await self._run(_core.record_call(event_type, request_id, data))
        )
