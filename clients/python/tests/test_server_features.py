"""The verbs the server grew after the first client: bulk decisions, reading the audit log, the
outbox's delivery log, minting an approval card's token, and learned trust rules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import TRUST_THRESHOLD, Server, Tokens, unique

from airlock_client import (
    Airlock,
    ConflictError,
    DecisionDone,
    DecisionFailed,
    DecisionItem,
    ForbiddenError,
    InvalidInputError,
)


@pytest.fixture
def agent(server: Server, tokens: Tokens) -> Iterator[Airlock]:
    with Airlock(server.url, tokens.agent) as client:
        yield client


@pytest.fixture
def alice(server: Server, tokens: Tokens) -> Iterator[Airlock]:
    with Airlock(server.url, tokens.alice) as client:
        yield client


@pytest.fixture
def admin(server: Server, tokens: Tokens) -> Iterator[Airlock]:
    with Airlock(server.url, tokens.admin) as client:
        yield client


def test_decide_many_decides_each_on_its_own(agent: Airlock, alice: Airlock) -> None:
    action = unique("bulk")
    a, b, c = (agent.request(f"Bulk {n}", action=action, items=["x", "y"]) for n in "abc")
    alice.decide(c.id, "rejected", comment="first")
    out = alice.decide_many(
        [
            DecisionItem(id=a.id, outcome="approved", method="select", selected=[a.items[1].id]),
            {"id": b.id, "outcome": "rejected", "comment": "no", "valid_for_s": 60},
            {"id": c.id, "outcome": "approved"},
        ]
    )
    assert (out.decided, out.failed) == (2, 1)
    done_a, done_b, lost = out.results
    assert isinstance(done_a, DecisionDone) and done_a.request.selected_items == ["y"]
    assert isinstance(done_b, DecisionDone) and done_b.request.status == "rejected"
    assert isinstance(lost, DecisionFailed) and lost.code == "conflict" and lost.status == 409
    assert lost.decision is not None and lost.decision.comment == "first"

    d, e = (agent.request(f"Same {n}", action=action) for n in "de")
    shared = alice.decide_many(ids=[d.id, e.id], outcome="approved", comment="all fine")
    assert shared.decided == 2
    assert [agent.get(r.id).decision.comment for r in (d, e)] == ["all fine", "all fine"]  # type: ignore[union-attr]
    with pytest.raises(InvalidInputError) as bad:
        alice.decide_many([{"id": d.id, "outcome": "maybe"}])
    assert bad.value.field == "outcome"
    with pytest.raises(ForbiddenError):
        agent.decide_many(ids=[d.id], outcome="approved")


def test_audit_of_a_request_and_of_the_whole_log(
    agent: Airlock, alice: Airlock, admin: Airlock
) -> None:
    req = agent.request("Audited", action=unique("audit"))
    agent.record("notified", request_id=req.id, data={"progress": "half", "api_key": "sk-1"})
    alice.decide(req.id, "approved")
    page = alice.audit(request_id=req.id)
    kinds = [e.type for e in page.items]
    assert kinds[0] == "created" and "notified" in kinds and "decided" in kinds
    noted = next(e for e in page.items if e.type == "notified")
    assert noted.data["progress"] == "half" and noted.data["api_key"] == "[REDACTED]"
    later = alice.audit(request_id=req.id, after=noted.seq)
    assert all(e.seq > noted.seq for e in later.items)
    whole = admin.audit(limit=2)
    assert len(whole.items) == 2 and whole.next_after == whole.items[-1].seq
    with pytest.raises(ForbiddenError):
        alice.audit()  # only admins read the whole log


def test_outbox_is_for_admins(agent: Airlock, admin: Airlock) -> None:
    page = admin.outbox(limit=10, status="pending")
    assert all(m.status == "pending" for m in page.items)
    with pytest.raises(ForbiddenError):
        agent.outbox()


def test_an_app_mints_a_card_token_for_a_reviewer(
    server: Server, tokens: Tokens, agent: Airlock
) -> None:
    req = agent.request("Card", action=unique("card"))
    with Airlock(server.url, tokens.app) as app:
        minted = app.mint_embed_token(req.id, "alice", ttl_s=120)
        assert minted.token.startswith("ale_") and minted.expires_at > req.created_at
        with pytest.raises(ForbiddenError):
            app.mint_embed_token(req.id, "bot")  # the requester never decides its own request
    with pytest.raises(ForbiddenError):
        agent.mint_embed_token(req.id, "alice")  # an agent never mints
    # The card token opens this request's card routes (and nothing else).
    with Airlock(server.url, minted.token) as card:
        with pytest.raises(ForbiddenError):
            card.get(req.id)


def test_learned_trust_suggest_accept_and_revoke(
    agent: Airlock, alice: Airlock, admin: Airlock
) -> None:
    action = unique("trust")
    for n in range(TRUST_THRESHOLD):
        req = agent.request(f"Rotate logs {n}", action=action, args={"days": 7})
        alice.decide(req.id, "approved")
    suggestions = admin.trust_suggestions()
    assert suggestions.threshold == TRUST_THRESHOLD
    mine = next(s for s in suggestions.items if s.action == action)
    assert mine.streak == TRUST_THRESHOLD and mine.scope.reviewers == ["alice"]
    rule = admin.accept_trust_rule(action, mine.shape_hash)
    assert rule.action == action and rule.approvals == TRUST_THRESHOLD and not rule.revoked
    with pytest.raises(ConflictError):
        admin.accept_trust_rule(action, mine.shape_hash)
    assert any(r.id == rule.id for r in alice.trust_rules().items)

    auto = agent.request("Rotate logs again", action=action, args={"days": 7})
    assert auto.status == "approved" and auto.decision is not None
    assert auto.decision.method == "auto"

    revoked = admin.revoke_trust_rule(rule.id)
    assert revoked.revoked and revoked.revoked_by == "admin"
    assert all(r.id != rule.id for r in alice.trust_rules().items)
    assert any(r.id == rule.id for r in alice.trust_rules(include_revoked=True).items)
    asked = agent.request("Rotate logs once more", action=action, args={"days": 7})
    assert asked.status == "pending"
    with pytest.raises(ForbiddenError):
        alice.accept_trust_rule(action, "0" * 64)
