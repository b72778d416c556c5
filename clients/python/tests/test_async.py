"""``AsyncAirlock`` has the verbs of ``Airlock`` and answers alike."""

from __future__ import annotations

import asyncio
import inspect

import pytest
from conftest import Server, Tokens, unique

from airlock_client import (
    Airlock,
    AsyncAirlock,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    WaitTimeoutError,
)

VERBS = [
    "request",
    "get",
    "get_by_key",
    "list",
    "wait",
    "decide",
    "cancel",
    "claim_execution",
    "record",
]


def test_same_verbs_and_parameters() -> None:
    for verb in VERBS:
        sync_sig = inspect.signature(getattr(Airlock, verb))
        async_fn = getattr(AsyncAirlock, verb)
        assert inspect.iscoroutinefunction(async_fn), verb
        assert inspect.signature(async_fn).parameters.keys() == sync_sig.parameters.keys(), verb


async def test_async_round_trip(server: Server, tokens: Tokens) -> None:
    async with (
        AsyncAirlock(server.url, tokens.agent) as agent,
        AsyncAirlock(server.url, tokens.alice) as alice,
        AsyncAirlock(server.url, tokens.bob) as bob,
    ):
        key = unique("async")
        req = await agent.request("Async gate", items=["x", "y"], key=key, args={"n": 1})
        assert (
            await agent.request("Async gate", items=["x", "y"], key=key, args={"n": 1})
        ).id == req.id
        found = await agent.get_by_key(key)
        assert found is not None and found.id == req.id
        assert (await agent.get(req.id)).status == "pending"

        with pytest.raises(WaitTimeoutError):
            await agent.wait(req.id, timeout_s=0.2)

        waiting = asyncio.ensure_future(agent.wait(req.id, 30))
        await alice.decide(req.id, "approved", selected=[req.items[0].id], comment="just x")
        done = await asyncio.wait_for(waiting, 60)
        assert done.approved and done.selected_items == ["x"]

        with pytest.raises(ConflictError) as conflict:
            await bob.decide(req.id, "rejected")
        assert conflict.value.decision is not None
        assert conflict.value.decision.reviewer == "alice"

        claimed = await agent.claim_execution(req.id)
        assert claimed.execution is not None and claimed.execution["state"] == "claimed"
        with pytest.raises(ConflictError):
            await agent.claim_execution(req.id)
        event = await agent.record("auto_executed", request_id=req.id, data={"ok": True})
        assert event.type == "auto_executed"

        other = await agent.request("To cancel", action=unique("async.cancel"))
        assert (await agent.cancel(other.id)).status == "cancelled"
        page = await agent.list(status="cancelled", action=other.action)
        assert [r.id for r in page.items] == [other.id]

        with pytest.raises(NotFoundError) as missing:
            await agent.get("req_nope")
        assert missing.value.code == "not_found"
        with pytest.raises(ForbiddenError) as role:
            await agent.decide(other.id, "approved")
        assert role.value.code == "forbidden"
