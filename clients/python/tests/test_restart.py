"""``wait`` across a server restart: the server is killed while a caller waits, started again on
the same port and database, and the decision made after the restart reaches the waiting caller."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from conftest import Server

from airlock_client import Airlock, AsyncAirlock, UnavailableError


def test_wait_survives_a_server_restart(fresh_server: Server) -> None:
    tokens = fresh_server.tokens()
    agent = Airlock(fresh_server.url, tokens.agent, poll_s=5)
    try:
        req = agent.request("Survive a restart", items=["a", "b"], key="restart-1")
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(agent.wait, req.id, 90)
            fresh_server.kill()
            # While the server is down the client cannot reach it (what the waiter retries through).
            try:
                agent.get(req.id)
                raise AssertionError("the server should be down")
            except UnavailableError as err:
                assert err.code == "unreachable"
            fresh_server.start()
            with Airlock(fresh_server.url, tokens.alice) as alice:
                alice.decide(req.id, "approved", selected=[req.items[1].id])
            done = waiting.result(timeout=90)
        assert done.approved
        assert done.selected_items == ["b"]
        # The key still finds the same gate after the restart: a replaying caller gets it back.
        assert agent.request("Survive a restart", items=["a", "b"], key="restart-1").id == req.id
    finally:
        agent.close()


def test_async_wait_survives_a_server_restart(fresh_server: Server) -> None:
    tokens = fresh_server.tokens()

    async def scenario() -> None:
        async with AsyncAirlock(fresh_server.url, tokens.agent, poll_s=5) as agent:
            req = await agent.request("Async restart", key="restart-2")
            waiting = asyncio.ensure_future(agent.wait(req.id, 90))
            await asyncio.sleep(0.2)  # let the long-poll start (not asserted: it works either way)
            await asyncio.to_thread(fresh_server.kill)
            await asyncio.to_thread(fresh_server.start)
            async with AsyncAirlock(fresh_server.url, tokens.bob) as bob:
                await bob.decide(req.id, "rejected", comment="not today")
            done = await asyncio.wait_for(waiting, 90)
            assert done.status == "rejected"
            assert done.decision is not None and done.decision.comment == "not today"

    asyncio.run(scenario())
