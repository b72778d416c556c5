"""Pattern 1 (``ask``) and pattern 3 (``hitl_tool``) against the server; the examples built on them
are run in test_examples.py."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from conftest import Server, Tokens, free_port, unique

from airlock_client import (
    HITL_PENDING_KEY,
    Airlock,
    ApprovalRequest,
    AsyncAirlock,
    HITLConfig,
    ask,
    calculate_confidence,
    determine_approval_level,
    get_hitl_config,
    hitl_tool,
    is_hitl_pending,
    is_hitl_tool,
)

MAX_POLLS = 600


def pending_for(reviewer: Airlock, action: str) -> ApprovalRequest:
    for _ in range(MAX_POLLS):
        items = reviewer.list(status="pending", action=action).items
        if items:
            return items[0]
        time.sleep(0.05)
    raise AssertionError(f"no pending request for {action}")


# --- pattern 1: ask -----------------------------------------------------------------------------


def test_ask_select_approve_all_and_skip(server: Server, tokens: Tokens) -> None:
    queries = ["q one", "q two", "q three"]
    with Airlock(server.url, tokens.agent) as agent, Airlock(server.url, tokens.alice) as alice:
        with ThreadPoolExecutor(1) as pool:
            action = unique("research.search")
            asking = pool.submit(
                ask, "# Extra research?\nDetails", queries, 60, airlock=agent, action=action
            )
            req = pending_for(alice, action)
            assert req.title == "Extra research?"
            alice.decide(
                req.id, "approved", method="select", selected=[req.items[0].id, req.items[2].id]
            )
            d = asking.result(timeout=60)
        assert d.approved and d.approval_method == "select"
        assert d.selected_queries == ["q one", "q three"]
        assert d.reviewer == "alice" and d.request_id == req.id

        with ThreadPoolExecutor(1) as pool:
            action = unique("research.search")
            asking = pool.submit(ask, "All?", queries, 60, airlock=agent, action=action)
            alice.decide(pending_for(alice, action).id, "approved")
            d = asking.result(timeout=60)
        assert d.approved and d.approval_method == "approve_all" and d.selected_items == queries

        with ThreadPoolExecutor(1) as pool:
            action = unique("research.search")
            asking = pool.submit(ask, "None?", queries, 60, airlock=agent, action=action)
            alice.decide(pending_for(alice, action).id, "rejected", method="skip", comment="enough")
            d = asking.result(timeout=60)
        assert not d.approved and d.approval_method == "skip" and d.reviewer_notes == "enough"


def test_ask_without_a_decision_in_time_and_on_failure(server: Server, tokens: Tokens) -> None:
    with Airlock(server.url, tokens.agent) as agent:
        d = ask("Anyone?", ["q"], 0.3, airlock=agent, action=unique("research.search"))
        assert not d.approved and d.approval_method == "timeout"
        assert ask("Nothing", [], 60, airlock=agent).approval_method == "no_items"
        auto = ask("Free", ["q"], 60, airlock=agent, required=False)
        assert auto.approved and auto.approval_method == "auto" and auto.selected_items == ["q"]
    with Airlock(f"http://127.0.0.1:{free_port()}", tokens.agent, retries=0) as down:
        d = ask("Down", ["q"], 60, airlock=down)
    assert not d.approved and d.approval_method == "error"
    assert d.reviewer_notes.startswith("Approval failed")


# --- pattern 3: hitl_tool -----------------------------------------------------------------------


def test_confidence_and_levels_match_pattern_3() -> None:
    assert calculate_confidence("sign_contract", {"amount": 5000}, {}) == 35
    assert (
        calculate_confidence(
            "sign_contract", {}, {"user_role": "admin", "workspace_verified": True}
        )
        == 65
    )
    assert calculate_confidence("send_bulk_notification", {}, {}) == 60
    assert calculate_confidence("update_task_status", {}, {"userRole": "admin"}) == 95
    cfg = HITLConfig()
    assert (cfg.auto_threshold, cfg.quick_threshold) == (85, 60)
    assert determine_approval_level(90, cfg).value == "auto"
    assert determine_approval_level(72, cfg).value == "quick"
    assert determine_approval_level(50, cfg).value == "full"
    with pytest.raises(ValueError, match="auto_threshold"):
        HITLConfig(auto_threshold=50, quick_threshold=70)
    with pytest.raises(ValueError):
        HITLConfig(auto_threshold=150)


def test_hitl_tool_marker_without_a_server() -> None:
    @hitl_tool(approval_type="contract", risk_level="high", auto_threshold=95, quick_threshold=70)
    def sign_contract(contract_id: str, amount: float, api_key: str = "") -> dict[str, Any]:
        return {"status": "signed"}

    assert is_hitl_tool(sign_contract)
    cfg = get_hitl_config(sign_contract)
    assert cfg is not None and cfg.approval_type == "contract"
    marker = sign_contract(contract_id="C-1", amount=5000, api_key="sk-secret")
    assert is_hitl_pending(marker) and marker[HITL_PENDING_KEY] is True
    result = marker["hitl_result"]
    assert result["approval_level"] == "full" and result["confidence_score"] == 35
    assert result["tool_name"] == "sign_contract" and "approval_id" not in result
    assert result["tool_args"]["api_key"] == "[REDACTED]"
    assert result["config"]["auto_threshold"] == 95


def test_hitl_tool_auto_quick_and_resume_once(server: Server, tokens: Tokens) -> None:
    calls: list[dict[str, Any]] = []
    with Airlock(server.url, tokens.agent) as agent, Airlock(server.url, tokens.alice) as alice:
        name = unique("approve_expense")

        @hitl_tool(
            name=name,
            airlock=agent,
            approval_type="expense",
            auto_threshold=75,
            requires_reason=True,
        )
        def approve_expense(expense_id: str, amount: float) -> dict[str, Any]:
            calls.append({"expense_id": expense_id, "amount": amount})
            return {"approved": expense_id, "amount": amount}

        # 70 (unknown tool) + 10 admin = 80 >= 75: runs at once, audited.
        assert approve_expense(
            expense_id="E-1", amount=10, _hitl_context={"user_role": "admin"}
        ) == {
            "approved": "E-1",
            "amount": 10,
        }
        # 70: quick review through Airlock.
        marker = approve_expense(expense_id="E-2", amount=20, _hitl_context={"key": unique("e2")})
        assert is_hitl_pending(marker)
        approval_id = marker["hitl_result"]["approval_id"]
        assert marker["hitl_result"]["approval_level"] == "quick"
        stored = alice.get(approval_id)
        assert stored.revision_comment_required is True
        assert stored.hitl is not None and stored.hitl.approval_type == "expense"
        assert approve_expense.resume(approval_id) == marker  # still pending: the marker again
        alice.decide(approval_id, "approved", edited_args={"expense_id": "E-2", "amount": 15})
        assert approve_expense.resume(approval_id) == {"approved": "E-2", "amount": 15}
        again = approve_expense.resume(approval_id)
        assert again["rejected"] is True and again["code"] == "already_executed"

        other = agent.request("Not a tool call", action=unique("other"))
        with pytest.raises(ValueError, match="not a call to the tool"):
            approve_expense.resume(other.id)

        marker = approve_expense(expense_id="E-3", amount=30)
        alice.decide(marker["hitl_result"]["approval_id"], "rejected", comment="too much")
        refused = approve_expense.resume(marker["hitl_result"]["approval_id"])
        assert refused["rejected"] is True and refused["retry"] is False
        assert refused["code"] == "rejected" and refused["comment"] == "too much"
    assert calls == [{"expense_id": "E-1", "amount": 10}, {"expense_id": "E-2", "amount": 15}]


async def test_async_hitl_tool_blocking(server: Server, tokens: Tokens) -> None:
    import asyncio

    async with (
        AsyncAirlock(server.url, tokens.agent) as agent,
        AsyncAirlock(server.url, tokens.alice) as alice,
    ):
        name = unique("delete_project")

        @hitl_tool(name=name, airlock=agent, blocking=True)
        async def delete_project(project_id: str) -> str:
            return f"deleted {project_id}"

        async def approve() -> None:
            for _ in range(MAX_POLLS):
                page = await alice.list(status="pending", action=name)
                if page.items:
                    await alice.decide(page.items[0].id, "approved")
                    return
                await asyncio.sleep(0.05)
            raise AssertionError("no pending request")

        result, _ = await asyncio.wait_for(
            asyncio.gather(delete_project(project_id="P-9"), approve()), timeout=60
        )
    assert result == "deleted P-9"
