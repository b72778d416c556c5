"""``@require_approval``: the function runs only when approved, with edited args when edited, and
once when two callers race on the same call (threads, and asyncio)."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from conftest import Server, Tokens, unique

from airlock_client import (
    Airlock,
    AlreadyExecutedError,
    ApprovalRequest,
    AsyncAirlock,
    NotApprovedError,
    require_approval,
)

#: Bounds every polling loop of these tests (count of tries; each sleeps 50 ms).
MAX_POLLS = 600


def pending_for(reviewer: Airlock, action: str) -> ApprovalRequest:
    """The one pending request of `action`, once a caller has opened it."""
    for _ in range(MAX_POLLS):
        items = reviewer.list(status="pending", action=action).items
        if items:
            assert len(items) == 1, "racing callers must share one gate"
            return items[0]
        time.sleep(0.05)
    raise AssertionError(f"no pending request for {action}")


def test_runs_once_when_two_threads_race(server: Server, tokens: Tokens) -> None:
    action = unique("deploy.race")
    runs: list[dict[str, Any]] = []
    lock = threading.Lock()
    with Airlock(server.url, tokens.agent) as agent, Airlock(server.url, tokens.alice) as alice:

        @require_approval(
            agent, action=action, title="Deploy {service} to {env}", wait_timeout_s=60
        )
        def deploy(service: str, env: str = "prod") -> str:
            with lock:
                runs.append({"service": service, "env": env})
            return f"deployed {service}"

        with ThreadPoolExecutor(2) as pool:
            calls = [pool.submit(deploy, "api") for _ in range(2)]
            req = pending_for(alice, action)
            assert req.title == "Deploy api to prod"
            assert req.args == {"service": "api", "env": "prod"}
            alice.decide(req.id, "approved")
            outcomes: list[Any] = []
            for call in calls:
                try:
                    outcomes.append(call.result(timeout=60))
                except AlreadyExecutedError as err:
                    outcomes.append(err)
    assert runs == [{"service": "api", "env": "prod"}]
    assert sorted(map(type, outcomes), key=str) == sorted([str, AlreadyExecutedError], key=str)
    assert "deployed api" in outcomes
    lost = next(o for o in outcomes if isinstance(o, AlreadyExecutedError))
    assert lost.code == "already_executed" and lost.request.id == req.id


def test_runs_with_edited_args_and_not_after_a_rejection(server: Server, tokens: Tokens) -> None:
    action = unique("pay")
    seen: list[tuple[str, int]] = []
    with Airlock(server.url, tokens.agent) as agent, Airlock(server.url, tokens.alice) as alice:

        @require_approval(agent, action=action, wait_timeout_s=60)
        def pay(to: str, amount: int) -> int:
            seen.append((to, amount))
            return amount

        with ThreadPoolExecutor(1) as pool:
            call = pool.submit(pay, "acme", 900)
            req = pending_for(alice, action)
            alice.decide(req.id, "approved", edited_args={"to": "acme", "amount": 700})
            assert call.result(timeout=60) == 700
        assert seen == [("acme", 700)]

        with ThreadPoolExecutor(1) as pool:
            call = pool.submit(pay, "evil", 5)
            req = pending_for(alice, action)
            alice.decide(req.id, "rejected", comment="no")
            with pytest.raises(NotApprovedError) as caught:
                call.result(timeout=60)
        assert caught.value.reason == "rejected" and "no" in caught.value.detail
        assert seen == [("acme", 700)]


async def test_runs_once_when_two_tasks_race(server: Server, tokens: Tokens) -> None:
    action = unique("async.race")
    runs: list[int] = []
    async with (
        AsyncAirlock(server.url, tokens.agent) as agent,
        AsyncAirlock(server.url, tokens.alice) as alice,
    ):

        @require_approval(agent, action=action, wait_timeout_s=60)
        async def reindex(shard: int) -> int:
            runs.append(shard)
            await asyncio.sleep(0)
            return shard

        async def approve_when_open() -> None:
            for _ in range(MAX_POLLS):
                page = await alice.list(status="pending", action=action)
                if page.items:
                    await alice.decide(page.items[0].id, "approved")
                    return
                await asyncio.sleep(0.05)
            raise AssertionError("no pending request")

        results = await asyncio.wait_for(
            asyncio.gather(reindex(7), reindex(7), approve_when_open(), return_exceptions=True),
            timeout=60,
        )
    assert runs == [7]
    ran = [r for r in results[:2] if r == 7]
    lost = [r for r in results[:2] if isinstance(r, AlreadyExecutedError)]
    assert len(ran) == 1 and len(lost) == 1


def test_gating_needs_the_matching_client(server: Server, tokens: Tokens) -> None:
    agent = AsyncAirlock(server.url, tokens.agent)
    try:
        with pytest.raises(TypeError, match="Airlock"):

            @require_approval(agent)
            def not_async() -> None: ...

    finally:
        asyncio.run(agent.aclose())
