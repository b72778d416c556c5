"""The synchronous client against a real server: requests decided by another token, waiting,
timeouts, revise, select, conflicts, execution claims, and errors with their stable codes."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import Server, Tokens, unique

from airlock_client import (
    Airlock,
    ConflictError,
    ForbiddenError,
    InvalidInputError,
    NotFoundError,
    WaitTimeoutError,
)


@pytest.fixture
def agent(server: Server, tokens: Tokens) -> Iterator[Airlock]:
    with Airlock(url=server.url, token=tokens.agent) as client:
        yield client


@pytest.fixture
def alice(server: Server, tokens: Tokens) -> Iterator[Airlock]:
    with Airlock(url=server.url, token=tokens.alice) as client:
        yield client


@pytest.fixture
def bob(server: Server, tokens: Tokens) -> Iterator[Airlock]:
    with Airlock(url=server.url, token=tokens.bob) as client:
        yield client


def test_request_decided_by_another_token_and_wait_returns_it(
    agent: Airlock, alice: Airlock
) -> None:
    req = agent.request(
        title="Run 3 extra searches",
        action="research.search",
        items=["q1", "q2", "q3"],
        timeout_s=3600,
        key=unique("run-42/reflection"),
    )
    assert req.status == "pending"
    assert [it.label for it in req.items] == ["q1", "q2", "q3"]
    assert req.requester == "bot"
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(agent.wait, req.id, 30)
        decided = alice.decide(req.id, "approved", comment="go")
        decision = waiting.result(timeout=60)
    assert decided.status == "approved"
    assert decision.id == req.id
    assert decision.approved
    assert decision.decision is not None
    assert decision.decision.reviewer == "alice"
    assert decision.decision.channel == "api"
    assert decision.selected_items == ["q1", "q2", "q3"]


def test_request_with_the_same_key_returns_the_first(agent: Airlock) -> None:
    key = unique("replay")
    first = agent.request("Deploy", key=key, args={"env": "prod"})
    again = agent.request("Deploy", key=key, args={"env": "prod"})
    assert again.id == first.id
    found = agent.get_by_key(key)
    assert found is not None and found.id == first.id
    assert agent.get_by_key(unique("missing")) is None


def test_wait_raises_its_own_timeout_while_pending(agent: Airlock) -> None:
    req = agent.request("Nobody answers", key=unique("t"))
    with pytest.raises(WaitTimeoutError) as caught:
        agent.wait(req.id, timeout_s=0.3)
    assert caught.value.code == "timeout"
    assert isinstance(caught.value, TimeoutError)
    assert agent.get(req.id).status == "pending"


def test_gate_deadline_times_out_and_wait_returns_timed_out(agent: Airlock) -> None:
    req = agent.request("Short gate", timeout_s=0.2, key=unique("deadline"))
    done = agent.wait(req.id, timeout_s=30)
    assert done.status == "timed_out"
    assert not done.approved
    assert done.decision is not None and done.decision.method == "timeout"


def test_revise_carries_the_comment(agent: Airlock, alice: Airlock) -> None:
    req = agent.request("Plan v1", args={"steps": ["a", "b"]})
    alice.decide(req.id, "revise", comment="add a rollback step")
    done = agent.wait(req.id, timeout_s=30)
    assert done.status == "revise"
    assert not done.approved
    assert done.decision is not None and done.decision.comment == "add a rollback step"
    v2 = agent.request("Plan v2", args={"steps": ["a", "b", "rollback"]}, revision_of=req.id)
    assert v2.revision_of == req.id


def test_select_approves_only_the_chosen_items(agent: Airlock, alice: Airlock) -> None:
    req = agent.request("Searches", items=["q1", "q2", "q3", "q4"])
    ids = [it.id for it in req.items]
    alice.decide(req.id, "approved", method="select", selected=[ids[0], ids[2]])
    done = agent.wait(req.id, timeout_s=30)
    assert done.approved
    assert done.selected_ids == [ids[0], ids[2]]
    assert done.selected_items == ["q1", "q3"]


def test_second_decision_is_a_conflict_carrying_the_winner(
    agent: Airlock, alice: Airlock, bob: Airlock
) -> None:
    req = agent.request("Two reviewers", key=unique("race"))
    alice.decide(req.id, "approved")
    with pytest.raises(ConflictError) as caught:
        bob.decide(req.id, "rejected")
    err = caught.value
    assert err.code == "conflict" and err.status == 409
    assert err.decision is not None
    assert err.decision.reviewer == "alice" and err.decision.outcome == "approved"
    assert err.request is not None and err.request.status == "approved"


def test_edited_args_and_a_single_execution_claim(agent: Airlock, alice: Airlock) -> None:
    req = agent.request("Transfer", args={"amount": 500, "to": "acme"})
    alice.decide(req.id, "approved", method="edit", edited_args={"amount": 400, "to": "acme"})
    done = agent.wait(req.id, timeout_s=30)
    assert done.approved_args == {"amount": 400, "to": "acme"}
    claimed = agent.claim_execution(req.id)
    assert claimed.execution is not None and claimed.execution["claimedBy"] == "bot"
    with pytest.raises(ConflictError) as caught:
        agent.claim_execution(req.id)
    assert caught.value.code == "conflict"


def test_cancel_list_and_record(agent: Airlock) -> None:
    action = unique("ops.cancel")
    req = agent.request("To cancel", action=action)
    page = agent.list(status="pending", action=action)
    assert [r.id for r in page.items] == [req.id]
    cancelled = agent.cancel(req.id, reason="not needed")
    assert cancelled.status == "cancelled"
    assert agent.list(status="pending", action=action).items == []
    event = agent.record("notified", request_id=req.id, data={"progress": "half"})
    assert event.type == "notified" and event.actor == "bot"
    assert event.request_id == req.id


def test_errors_carry_the_problem_codes(server: Server, agent: Airlock, alice: Airlock) -> None:
    with pytest.raises(NotFoundError) as missing:
        agent.get("req_does_not_exist")
    assert missing.value.code == "not_found" and missing.value.status == 404

    with Airlock(url=server.url, token="alk_not-a-real-token-at-all") as stranger:
        with pytest.raises(ForbiddenError) as refused:
            stranger.get("anything")
    assert refused.value.code == "unauthorized" and refused.value.status == 401

    req = agent.request("Mine", items=["one"])
    with pytest.raises(ForbiddenError) as role:
        agent.decide(req.id, "approved")
    assert role.value.code == "forbidden"

    with pytest.raises(InvalidInputError) as bad:
        alice.decide(req.id, "approved", method="select", selected=["item-99"])
    assert bad.value.code == "invalid_input"
    assert bad.value.status in (400, 422)

    with pytest.raises(InvalidInputError) as invalid:
        agent.request("Bad", on_timeout="explode")
    assert invalid.value.code == "invalid_input" and invalid.value.field

    with pytest.raises(ForbiddenError) as skip:
        agent.request("Skip the human", require_approval=False)
    assert skip.value.code == "forbidden" and skip.value.field == "requireApproval"


def test_bad_options_are_refused_with_the_option_named() -> None:
    with pytest.raises(ValueError, match="url"):
        Airlock(url="ftp://x", token="t")
    with pytest.raises(ValueError, match="retries"):
        Airlock(url="http://127.0.0.1:1", token="t", retries=-1)


def test_unreachable_server_is_retried_then_raised() -> None:
    from conftest import free_port

    from airlock_client import UnavailableError

    with Airlock(url=f"http://127.0.0.1:{free_port()}", token="t", retries=2) as client:
        with pytest.raises(UnavailableError) as caught:
            client.get("x")
    assert caught.value.code == "unreachable"
    assert caught.value.retryable


def test_view_and_a_decision_bound_to_its_digest(agent: Airlock, alice: Airlock) -> None:
    """The review view labels the agent's words and shows the exact args; its digest binds the
    decision, and a stale digest is a conflict."""
    r = agent.request(
        title=unique("Pay the coffee invoice"),
        summary="Pay the $5 coffee invoice",
        args={"amount": 50000, "to": "IBAN-ATTACKER-777"},
    )
    shown = alice.view(r.id)
    assert shown.view.agent_summary == "Pay the $5 coffee invoice"
    assert shown.view.args == {"amount": 50000, "to": "IBAN-ATTACKER-777"}
    with pytest.raises(ConflictError):
        alice.decide(r.id, "approved", view_digest="0" * 64)
    decided = alice.decide(r.id, "approved", view_digest=shown.view_digest)
    assert decided.decision is not None
    assert decided.decision.view_digest == shown.view_digest


def test_a_reviewer_answers_instead_of_deciding(agent: Airlock, alice: Airlock) -> None:
    """``respond``: the answer is checked against the request's ``response_schema`` and reaches the
    waiting agent as ``decision.response``; nothing is approved."""
    r = agent.request(
        title=unique("Which region for the cluster?"),
        allowed=["approve", "reject", "respond"],
        response_schema={"type": "object", "properties": {"region": {"enum": ["eu", "us"]}}},
    )
    assert "respond" in alice.view(r.id).view.allowed
    with pytest.raises(InvalidInputError) as misfit:
        alice.decide(r.id, "responded", response={"region": "mars"})
    assert misfit.value.field == "response.region"
    alice.decide(r.id, "responded", response={"region": "eu"}, comment="closer to users")
    done = agent.wait(r.id, timeout_s=10)
    assert done.status == "responded"
    assert done.decision is not None
    assert done.decision.outcome == "responded"
    assert done.decision.method == "respond"
    assert done.decision.response == {"region": "eu"}
    assert done.response_schema == {
        "type": "object",
        "properties": {"region": {"enum": ["eu", "us"]}},
    }
