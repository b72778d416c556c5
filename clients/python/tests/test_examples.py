"""The five examples (examples/*.py) run against the session's server, while a reviewer decides
through the API as a person would; each test checks what ran: the approved queries only, the plan
as revised, the tool calls as approved or edited, the file as edited, the report events the
reviewer saw live."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from conftest import Server, Tokens, unique

from airlock_client import Airlock, ApprovalRequest, AuditEvent

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MAX_POLLS = 600
#: The examples' gates time out after this long in the tests: a test that fails before deciding
#: leaves no example waiting longer than that.
GATE_S = 30


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pending(
    reviewer: Airlock, action: str, where: Callable[[ApprovalRequest], bool]
) -> ApprovalRequest:
    """The pending request a reviewer would open in the inbox (polled: the agent is still asking)."""
    for _ in range(MAX_POLLS):
        for req in reviewer.list(status="pending", action=action, limit=100).items:
            if where(req):
                return req
        time.sleep(0.05)
    raise AssertionError(f"no pending {action} request")


@pytest.fixture
def agent(server: Server, tokens: Tokens) -> Iterator[Airlock]:
    with Airlock(server.url, tokens.agent) as client:
        yield client


@pytest.fixture
def alice(server: Server, tokens: Tokens) -> Iterator[Airlock]:
    with Airlock(server.url, tokens.alice) as client:
        yield client


# --- pattern 1 -----------------------------------------------------------------------------------


def test_research_pipeline_runs_only_the_approved_queries(agent: Airlock, alice: Airlock) -> None:
    example = load("research_pipeline")
    question = "How do heat pumps behave in frost?"
    replies: dict[str, Callable[[ApprovalRequest], object]] = {
        # APPROVE ALL, SKIP, SELECT 1,3 and a reply nobody could read, as the Slack and mail doors
        # record them (the server parses the reply grammar; the API takes the decision itself).
        "approve_all": lambda r: alice.decide(r.id, "approved", method="approve_all"),
        "skip": lambda r: alice.decide(r.id, "rejected", method="skip", comment="enough"),
        "select": lambda r: alice.decide(
            r.id, "approved", method="select", selected=[r.items[0].id, r.items[2].id]
        ),
        "parse_error": lambda r: alice.decide(
            r.id, "rejected", method="parse_error", comment="could not read: 'maybe later'"
        ),
    }
    keys = {reply: unique(f"pipeline-{reply}") for reply in replies}
    with ThreadPoolExecutor(len(replies)) as pool:
        runs = {
            reply: pool.submit(example.run_pipeline, agent, question, key, timeout_s=GATE_S)
            for reply, key in keys.items()
        }
        for reply, decide in replies.items():
            key = keys[reply]
            req = pending(alice, example.ACTION, lambda r: r.key == key)  # noqa: B023
            labels = [it.label for it in req.items]
            decide(req)
        states = {reply: run.result(timeout=60) for reply, run in runs.items()}
    assert states["approve_all"]["searches_performed"] == labels
    assert states["select"]["searches_performed"] == [labels[0], labels[2]]
    assert states["skip"]["searches_performed"] == []
    assert states["parse_error"]["searches_performed"] == []
    assert {r: s["decision"]["approval_method"] for r, s in states.items()} == {
        "approve_all": "approve_all",
        "skip": "skip",
        "select": "select",
        "parse_error": "parse_error",
    }
    assert states["skip"]["decision"]["reviewer_notes"] == "enough"


# --- pattern 2 -----------------------------------------------------------------------------------


def test_robot_plan_revised_then_approved_declined_and_timed_out(
    agent: Airlock, alice: Airlock
) -> None:
    example = load("robot_plan")
    logs: list[dict[str, Any]] = []
    cids = {case: unique(f"robot-{case}") for case in ("revise", "decline", "timeout")}
    with ThreadPoolExecutor(3) as pool:
        revised = pool.submit(
            example.run_workflow, agent, "weld at position 1 and 2",
            correlation_id=cids["revise"], timeout_s=GATE_S, log=logs.append,
        )  # fmt: skip
        declined = pool.submit(
            example.run_workflow, agent, "weld at position 3",
            correlation_id=cids["decline"], timeout_s=GATE_S, log=logs.append,
        )  # fmt: skip
        timed_out = pool.submit(
            example.run_workflow, agent, "weld at position 4",
            correlation_id=cids["timeout"], timeout_s=0.5, log=logs.append,
        )  # fmt: skip
        first = pending(alice, example.ACTION, lambda r: r.correlation_id == cids["revise"])
        assert first.command == "weld at position 1 and 2"
        assert first.preview is not None and "PLAN REVIEW REQUIRED" in first.preview
        assert "Tack Weld at Pos_2" in [it.label for it in first.items]
        alice.decide(first.id, "revise", comment="Skip position 2, too risky today")
        second = pending(
            alice, example.ACTION, lambda r: r.correlation_id == cids["revise"] and r.id != first.id
        )
        assert second.revision_of == first.id
        assert "Tack Weld at Pos_2" not in [it.label for it in second.items]
        alice.decide(second.id, "approved")
        decline = pending(alice, example.ACTION, lambda r: r.correlation_id == cids["decline"])
        alice.decide(decline.id, "rejected", comment="wrong tool")
        done = revised.result(timeout=60)
        no = declined.result(timeout=60)
        late = timed_out.result(timeout=60)
    assert done["outcome"] == "executed"
    assert "Tack Weld at Pos_1" in done["executed"] and "Tack Weld at Pos_2" not in done["executed"]
    assert [r["decision"] for r in done["reviews"]] == ["revision", "approved"]
    assert done["metrics"]["revision_rate"] == 0.5 and done["metrics"]["approval_rate"] == 1.0
    assert (no["outcome"], no["message"], no["executed"]) == (
        "fallback",
        "Task declined by operator",
        [],
    )
    assert late["outcome"] == "fallback" and late["message"].startswith("Human review timeout")
    assert late["metrics"]["timeout_frequency"] == 1.0
    said = {(line["message"], line["correlation_id"]) for line in logs}
    assert ("Presenting plan for human review", cids["revise"]) in said
    assert ("Human decision recorded", cids["decline"]) in said
    assert ("Human review timeout", cids["timeout"]) in said


# --- pattern 3 -----------------------------------------------------------------------------------


def test_hitl_tools_route_by_confidence_and_audit_what_ran_at_once(
    server: Server, tokens: Tokens, agent: Airlock, alice: Airlock
) -> None:
    example = load("hitl_tools")
    example.EXECUTED.clear()
    turn = example.run_agent(agent, unique("turn"))
    assert list(turn["ran"]) == ["update_task_status"]
    levels = {name: m["approval_level"] for name, m in turn["pending"].items()}
    assert levels == {"approve_expense": "quick", "sign_contract": "full", "delete_project": "full"}
    assert example.EXECUTED == [{"tool": "update_task_status", "task_id": "T-7", "status": "done"}]

    ids = {name: m["approval_id"] for name, m in turn["pending"].items()}
    alice.decide(
        ids["approve_expense"], "approved", edited_args={"expense_id": "E-12", "amount": 200}
    )
    alice.decide(ids["sign_contract"], "rejected", comment="legal has not read it")
    alice.decide(ids["delete_project"], "approved")
    after = example.finish(agent, turn["pending"])
    assert after["approve_expense"] == {"status": "approved", "expense_id": "E-12", "amount": 200}
    assert after["sign_contract"]["rejected"] is True
    assert after["sign_contract"]["comment"] == "legal has not read it"
    assert after["delete_project"]["status"] == "deleted"
    assert [e["tool"] for e in example.EXECUTED] == [
        "update_task_status",
        "approve_expense",
        "delete_project",
    ]
    assert example.EXECUTED[1]["amount"] == 200

    with Airlock(server.url, tokens.admin) as admin:
        audited = [
            e
            for e in all_events(admin)
            if e.type == "auto_executed" and e.data.get("tool") == "update_task_status"
        ]
    assert audited and audited[-1].actor == "bot"
    assert audited[-1].data["args"] == {"task_id": "T-7", "status": "done", "api_key": "[REDACTED]"}
    assert "sk-live-123" not in json.dumps([e.data for e in audited])


def all_events(admin: Airlock) -> list[AuditEvent]:
    events: list[AuditEvent] = []
    after: int | None = None
    for _ in range(100):  # bounded: 100 pages of 1000
        page = admin.audit(after=after, limit=1000)
        events += page.items
        if page.next_after is None:
            break
        after = page.next_after
    return events


# --- pattern 4 -----------------------------------------------------------------------------------


class Paused(Exception):
    """What LangGraph's ``interrupt`` does the first time: the graph stops here."""


def pause(value: dict[str, Any]) -> Any:
    raise Paused(value)


def never(value: dict[str, Any]) -> Any:
    raise AssertionError("a decided gate must not interrupt again")


def test_file_write_waits_for_approval_and_writes_the_edited_content(
    tmp_path: Path, agent: Airlock, alice: Airlock
) -> None:
    example = load("file_approval")
    body = "public class PlayerController {\n    public float Speed = 5f;\n}\n" * 3
    state = example.act_and_tools(tmp_path, "src/Player.cs", body, thread_id=unique("thread"))
    with pytest.raises(Paused) as paused:
        example.approval_step(agent, tmp_path, state, pause)
    shown = paused.value.args[0]
    assert shown["operation"] == "write" and shown["file_path"] == "src/Player.cs"
    assert "+public class PlayerController {" in shown["diff"]
    assert not (tmp_path / "src" / "Player.cs").exists()  # nothing is written before approval

    req = alice.get(shown["approval_id"])
    assert req.preview == shown["diff"] and req.args["content"] == body
    edited = {**req.args, "content": "public class PlayerController { }\n// reviewed\n" + "/" * 60}
    alice.decide(req.id, "approved", method="edit", edited_args=edited)

    # Resume: the node runs again from its first line, finds the same gate by its key, writes once.
    resumed = example.approval_step(agent, tmp_path, state, never)
    assert resumed["messages"][-1]["content"].startswith("✅ File operation completed")
    assert (tmp_path / "src" / "Player.cs").read_text("utf-8") == edited["content"]
    again = example.approval_step(agent, tmp_path, state, never)
    assert again["messages"][-1]["content"].startswith("File operation already done")
    assert (tmp_path / "src" / "Player.cs").read_text("utf-8") == edited["content"]


def test_file_write_rejected_or_small(tmp_path: Path, agent: Airlock, alice: Airlock) -> None:
    example = load("file_approval")
    state = example.act_and_tools(tmp_path, "big.py", "x = 1\n" * 40, thread_id=unique("thread"))
    with pytest.raises(Paused) as paused:
        example.approval_step(agent, tmp_path, state, pause)
    alice.decide(paused.value.args[0]["approval_id"], "rejected", comment="not now")
    out = example.approval_step(agent, tmp_path, state, never)
    assert out["messages"][-1]["content"] == "❌ File operation cancelled: Create big.py"
    assert not (tmp_path / "big.py").exists()

    small = example.run_agent(agent, tmp_path, "NOTES.md", "# Notes\n", thread_id=unique("t"))
    assert "approved by rule" in small["messages"][-1]["content"]
    assert (tmp_path / "NOTES.md").read_text("utf-8") == "# Notes\n"
    with pytest.raises(ValueError, match="outside the sandbox"):
        example.run_agent(agent, tmp_path, "../escape.txt", "no", thread_id=unique("t"))


# --- pattern 5 -----------------------------------------------------------------------------------


def watch(server: Server, token: str, request_id: str, seen: list[dict[str, Any]]) -> None:
    """The reviewer's live view: the request's audit events as Server-Sent Events, until the
    research run's ``stop`` event."""
    url = f"{server.url}/v1/events"
    headers = {"authorization": f"Bearer {token}"}
    deadline = time.monotonic() + 60
    with httpx.stream("GET", url, params={"requestId": request_id, "after": 0}, headers=headers,
                      timeout=30) as res:  # fmt: skip
        res.raise_for_status()
        for line in res.iter_lines():
            if time.monotonic() > deadline:
                return
            if not line.startswith("data:"):
                continue
            event = json.loads(line[len("data:") :])
            if "type" not in event:
                continue  # the stream's `ready` message
            seen.append(event)
            if event["type"] == "notified" and event["data"].get("event") == "stop":
                return


def test_two_phase_research_waits_for_the_plan_and_reports_live(
    server: Server, tokens: Tokens, agent: Airlock, alice: Airlock
) -> None:
    example = load("research_two_phase")
    research_id = unique("research")
    sessions = example.SessionStore()
    ui: list[dict[str, Any]] = []
    seen: list[dict[str, Any]] = []
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(
            example.run_research, agent, "Should a small team use SQLite or PostgreSQL?",
            research_id=research_id, sessions=sessions, on_event=ui.append, max_update_size=120,
            timeout_s=GATE_S,
        )  # fmt: skip
        req = pending(
            alice, example.PLAN_ACTION, lambda r: r.args.get("research_id") == research_id
        )
        watcher = threading.Thread(target=watch, args=(server, tokens.alice, req.id, seen))
        watcher.start()
        assert [e["type"] for e in ui] == ["tool_call", "tool_result"]  # phase A only
        answers = {q: "" for q in req.args["answers"]}
        answers["Which region should the research focus on?"] = "Europe"
        alice.decide(
            req.id,
            "approved",
            method="select",
            selected=[req.items[0].id, req.items[1].id],
            edited_args={**req.args, "answers": answers},
        )
        session = run.result(timeout=60)
        watcher.join(timeout=60)

    assert session["status"] == "completed"
    searched = [
        e["args"]["query"] for e in ui if e["type"] == "tool_call" and e["tool"] == "web_search"
    ]
    assert searched == [req.items[0].label, req.items[1].label]  # only the approved queries
    assert "Europe" in session["report_markdown"]  # the reviewer's answer shaped the research
    assert "offline://europe" in session["sources"]
    assert sessions.get(research_id) == json.loads(json.dumps(session))
    assert sessions.writes == 2 and len(sessions.records) == 1  # plan ready, completion; one record

    # What the reviewer saw live: every report update, in order, bounded, after their decision.
    notes = [e for e in seen if e["type"] == "notified"]
    updates = [e["data"] for e in notes if e["data"]["event"] == "report_updated"]
    ran = [e for e in ui if e["type"] == "report_updated"]
    assert [u["chunk"] for u in updates] == [e["chunk"] for e in ran] and len(ran) > 3
    assert all(len(u["chunk"]) <= 120 for u in updates)
    assert all(u["chunk"] in session["report_markdown"] for u in updates)
    assert notes[-1]["data"]["event"] == "stop" and notes[-1]["data"]["status"] == "completed"
    decided = next(e["seq"] for e in seen if e["type"] == "decided")
    first_search = next(
        e["seq"]
        for e in notes
        if e["data"]["event"] == "tool_call" and e["data"]["tool"] == "web_search"
    )
    assert decided < first_search  # nothing of phase B before the approval


def test_two_phase_research_declined_searches_nothing(agent: Airlock, alice: Airlock) -> None:
    example = load("research_two_phase")
    research_id = unique("research")
    ui: list[dict[str, Any]] = []
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(
            example.run_research, agent, "Is SQLite enough?", research_id=research_id,
            on_event=ui.append, timeout_s=GATE_S,
        )  # fmt: skip
        req = pending(
            alice, example.PLAN_ACTION, lambda r: r.args.get("research_id") == research_id
        )
        alice.decide(req.id, "rejected", comment="too broad")
        session = run.result(timeout=60)
    assert session["status"] == "declined"
    assert [e["type"] for e in ui] == ["tool_call", "tool_result", "stop"]


# --- the README's LangGraph node -----------------------------------------------------------------


def readme_langgraph_snippet() -> str:
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    section = text.split("## LangGraph (Python)", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_langgraph_node_pauses_resumes_once_and_writes_the_edit(
    server: Server, tokens: Tokens, alice: Airlock, monkeypatch: pytest.MonkeyPatch
) -> None:
    interrupts: list[dict[str, Any]] = []

    def interrupt(value: dict[str, Any]) -> Any:
        """A stand-in for ``langgraph.types.interrupt``: the first call stops the run."""
        interrupts.append(value)
        raise Paused(value)

    graph = ModuleType("langgraph")
    graph_types = ModuleType("langgraph.types")
    graph_types.interrupt = interrupt  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "langgraph", graph)
    monkeypatch.setitem(sys.modules, "langgraph.types", graph_types)
    monkeypatch.setenv("AIRLOCK_URL", server.url)
    monkeypatch.setenv("AIRLOCK_TOKEN", tokens.agent)
    written: list[dict[str, Any]] = []

    def write_file(args: dict[str, Any]) -> str:
        written.append(args)
        return "written"

    namespace: dict[str, Any] = {"write_file": write_file}
    exec(compile(readme_langgraph_snippet(), "README.md", "exec"), namespace)
    node = namespace["approval_node"]
    state = {
        "thread_id": unique("thread"),
        "tool_call_id": "call-7",
        "pending_operation": {"operation": "write", "file_path": "a.txt", "content": "draft"},
        "diff": "+draft",
    }
    with pytest.raises(Paused):
        node(state)
    assert written == [] and len(interrupts) == 1
    req = alice.get(interrupts[0]["approval_id"])
    assert req.preview == "+draft"
    alice.decide(req.id, "approved", edited_args={**req.args, "content": "final"})
    assert node(state) == {"result": "written"}  # resumed: the same request, no second interrupt
    assert written == [{"operation": "write", "file_path": "a.txt", "content": "final"}]
    assert node(state) == {"result": "already done"} and len(written) == 1
    assert len(interrupts) == 1
    namespace["al"].close()
