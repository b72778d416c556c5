"""The retry policy, against an in-process fake of the server (httpx.MockTransport): which calls are
tried again, after how long (Retry-After), and which are sent once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from airlock_client import Airlock, AsyncAirlock, ForbiddenError, UnavailableError

REQUEST: dict[str, Any] = {
    "id": "req_1",
    "action": "generic",
    "title": "T",
    "args": {},
    "argsHash": "h",
    "items": [],
    "allowed": ["approve"],
    "level": "full",
    "requester": "bot",
    "approvers": [],
    "quorum": 1,
    "onTimeout": "reject",
    "escalations": 0,
    "correlationId": "c",
    "metadata": {},
    "status": "pending",
    "decisions": [],
    "inputHash": "i",
    "createdAt": 1,
    "updatedAt": 1,
    "version": 1,
}


def problem(status: int, code: str, retry_after: str | None = None) -> httpx.Response:
    headers = {"content-type": "application/problem+json"}
    if retry_after is not None:
        headers["retry-after"] = retry_after
    body = {
        "type": f"urn:airlock:problem:{code}",
        "title": "x",
        "status": status,
        "detail": code,
        "code": code,
    }
    return httpx.Response(status, headers=headers, content=json.dumps(body))


class Script:
    """Answers each call with the next response of a list, and remembers the requests."""

    def __init__(self, *answers: httpx.Response) -> None:
        self.answers = list(answers)
        self.seen: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        return self.answers.pop(0) if self.answers else httpx.Response(200, json=REQUEST)


def client(script: Script, **options: Any) -> Airlock:
    return Airlock("https://airlock.test", "tok", transport=httpx.MockTransport(script), **options)


def test_safe_calls_retry_503_and_429_honouring_retry_after() -> None:
    script = Script(problem(503, "store_unavailable", "0"), problem(429, "rate_limited", "0"))
    with client(script) as al:
        assert al.get("req_1").id == "req_1"
    assert len(script.seen) == 3
    assert script.seen[0].headers["authorization"] == "Bearer tok"


def test_request_with_a_key_is_retried_with_its_idempotency_key() -> None:
    script = Script(problem(503, "store_unavailable", "0"))
    with client(script) as al:
        al.request("T", key="k-1")
    assert len(script.seen) == 2
    assert all(r.headers["idempotency-key"] == "k-1" for r in script.seen)
    assert json.loads(script.seen[1].content)["key"] == "k-1"


def test_calls_that_could_act_twice_are_sent_once() -> None:
    calls: list[Callable[[Airlock], object]] = [
        lambda al: al.request("T"),
        lambda al: al.decide("req_1", "approved"),
        lambda al: al.claim_execution("req_1"),
        lambda al: al.cancel("req_1"),
    ]
    for call in calls:
        script = Script(problem(503, "store_unavailable", "0"))
        with client(script) as al, pytest.raises(UnavailableError) as caught:
            call(al)
        assert caught.value.code == "store_unavailable" and caught.value.retry_after_s == 0
        assert len(script.seen) == 1


def test_no_retry_past_the_limits() -> None:
    script = Script(problem(503, "store_unavailable", "3600"))
    with client(script, max_retry_delay_s=1) as al, pytest.raises(UnavailableError):
        al.get("req_1")
    assert len(script.seen) == 1  # Retry-After longer than max_retry_delay_s: raised at once

    script = Script(*[problem(503, "store_unavailable", "0") for _ in range(5)])
    with client(script, retries=2) as al, pytest.raises(UnavailableError):
        al.get("req_1")
    assert len(script.seen) == 3

    script = Script(problem(429, "quota_exceeded"))
    with client(script) as al, pytest.raises(UnavailableError) as caught:
        al.get("req_1")
    assert caught.value.code == "quota_exceeded" and len(script.seen) == 1


def test_wait_polls_through_503_until_terminal_but_not_through_401() -> None:
    done = {**REQUEST, "status": "cancelled"}
    script = Script(
        problem(503, "unavailable", "0"),
        httpx.Response(200, json=REQUEST),
        httpx.Response(200, json=done),
    )
    with client(script, poll_s=1) as al:
        assert al.wait("req_1", timeout_s=30).status == "cancelled"
    assert len(script.seen) == 3
    assert script.seen[1].url.params["timeout"] == "1.000"

    script = Script(problem(401, "unauthorized"))
    with client(script) as al, pytest.raises(ForbiddenError) as caught:
        al.wait("req_1", timeout_s=30)
    assert caught.value.code == "unauthorized"


def test_async_client_retries_alike() -> None:
    script = Script(problem(503, "store_unavailable", "0"))

    async def run() -> None:
        async with AsyncAirlock(
            "https://airlock.test", "tok", transport=httpx.MockTransport(script)
        ) as al:
            assert (await al.get("req_1")).id == "req_1"

    asyncio.run(run())
    assert len(script.seen) == 2
