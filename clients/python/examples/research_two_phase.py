"""Pattern 5: a two-phase research workflow with a live report.

Phase A plans without touching the web: clarifying questions, expanded queries and an outline. The
plan waits at an Airlock gate; the reviewer may pick queries and answer the clarifying questions by
editing the plan's ``answers``. Nothing of phase B runs before the approval. Phase B then searches
(an offline corpus stands in for the web), and writes the report section by section in bounded
updates. Every step is an event (``tool_call``, ``tool_result``, ``report_updated``, ``stop``,
``cancelled``) handed to the UI callback and recorded on the plan's request as a ``notified`` audit
event, so the reviewer watches the run live (the request's page, or ``GET /v1/events?requestId=``).
The session is persisted idempotently by its id (delete, then insert) when the plan is ready and at
the end.

    export AIRLOCK_URL=http://127.0.0.1:7420 AIRLOCK_TOKEN=<an agent token>
    python examples/research_two_phase.py "Should a small team use SQLite or PostgreSQL?"
"""

from __future__ import annotations

import json
import re
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from airlock_client import Airlock, approved_args

PLAN_ACTION = "research.execute_plan"
MAX_UPDATE_SIZE = 400
TIMEOUT_S = 3600

#: The offline "web": what a search for a word finds.
CORPUS: dict[str, str] = {
    "sqlite": "SQLite keeps the whole database in one file and needs no server; writes are "
    "serialised, which suits one machine and a modest write rate.",
    "postgresql": "PostgreSQL runs as a server, takes many concurrent writers, and offers "
    "LISTEN/NOTIFY, replication and managed hosting.",
    "backup": "A SQLite file is backed up by copying it safely (the backup API); PostgreSQL has "
    "pg_dump and point-in-time recovery.",
    "team": "Small teams value fewer moving parts: no database server to patch or monitor.",
    "europe": "Within the EU, managed PostgreSQL is offered in several regions; a SQLite file "
    "stays wherever the application runs.",
}

Event = dict[str, Any]


class SessionStore:
    """Agent Data stand-in: sessions kept by ``research_id``, written delete-then-insert."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.writes = 0

    def put(self, session: dict[str, Any]) -> None:
        self.records = [r for r in self.records if r["research_id"] != session["research_id"]]
        self.records.append(json.loads(json.dumps(session)))
        self.writes += 1

    def get(self, research_id: str) -> dict[str, Any] | None:
        return next((r for r in self.records if r["research_id"] == research_id), None)


class EventStream:
    """Numbers each event, keeps it, hands it to the UI and records it on the plan's request (once
    the request exists; the plan's own events are recorded when it does)."""

    def __init__(self, airlock: Airlock, research_id: str, on_event: Callable[[Event], None]):
        self.airlock = airlock
        self.research_id = research_id
        self.on_event = on_event
        self.events: list[Event] = []
        self.request_id: str | None = None

    def emit(self, kind: str, **fields: Any) -> Event:
        event = {"type": kind, "research_id": self.research_id, "seq": len(self.events) + 1,
                 "at": time.time(), **fields}  # fmt: skip
        self.events.append(event)
        self.on_event(event)
        if self.request_id is not None:
            self._record(event)
        return event

    def attach(self, request_id: str) -> None:
        self.request_id = request_id
        for event in self.events:
            self._record(event)

    def _record(self, e: Event) -> None:
        data = {"channel": "research-events", "event": e["type"], "research_id": e["research_id"],
                "seq": e["seq"]}  # fmt: skip
        for name in ("tool", "args", "section", "chunk", "status", "message", "reason"):
            if name in e:
                data[name] = e[name]
        if "report_markdown" in e:
            data["report_chars"] = len(e["report_markdown"])
        self.airlock.record("notified", request_id=self.request_id, data=data)


def decompose_query(query: str) -> dict[str, list[str]]:
    """Phase A's only tool: no web access."""
    topic = query.rstrip("?")
    return {
        "clarifying_questions": [
            "Which region should the research focus on?",
            "How many people will write to the database at once?",
        ],
        "expanded_queries": [
            f"{topic}: operations for a small team",
            f"{topic}: backup and recovery",
            f"{topic}: concurrency limits",
        ],
        "outline": ["Summary", "Findings", "Recommendation"],
    }


def web_search(query: str, answers: dict[str, str]) -> list[dict[str, str]]:
    words = set(re.findall(r"[a-z]+", f"{query} {' '.join(answers.values())}".lower()))
    return [{"url": f"offline://{w}", "snippet": text} for w, text in CORPUS.items() if w in words]


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def run_research(
    airlock: Airlock,
    query: str,
    *,
    research_id: str | None = None,
    sessions: SessionStore | None = None,
    on_event: Callable[[Event], None] = lambda e: None,
    max_update_size: int = MAX_UPDATE_SIZE,
    timeout_s: float = TIMEOUT_S,
) -> dict[str, Any]:
    research_id = research_id or str(uuid.uuid4())
    sessions = sessions or SessionStore()
    stream = EventStream(airlock, research_id, on_event)
    session: dict[str, Any] = {"research_id": research_id, "status": "planning",
                               "initial_query": query, "plan": None, "sources": [],
                               "report_markdown": ""}  # fmt: skip

    def end(status: str, message: str) -> dict[str, Any]:
        stream.emit(
            "stop", status=status, message=message, report_markdown=session["report_markdown"]
        )
        session["status"] = status
        session["events"] = [{"seq": e["seq"], "type": e["type"]} for e in stream.events]
        sessions.put(session)
        return session

    # ---- Phase A: plan, no search ----
    stream.emit("tool_call", tool="decompose_query", args={"initial_query": query})
    plan = decompose_query(query)
    session["plan"] = plan
    stream.emit("tool_result", tool="decompose_query")
    questions = plan["clarifying_questions"]
    req = airlock.request(
        f"Approve the research plan: {query}"[:500],
        action=PLAN_ACTION,
        key=f"research-two-phase:{research_id}:plan",
        question=query,
        summary="\n".join(
            [
                "**Clarifying questions** (answer them by editing `answers`):",
                *[f"- {q}" for q in questions],
                "",
                "**Outline:** " + " / ".join(plan["outline"]),
                "",
                "Nothing is searched before this plan is approved.",
            ]
        ),  # fmt: skip
        items=[{"id": f"q{i}", "label": q} for i, q in enumerate(plan["expanded_queries"], 1)],
        args={
            "research_id": research_id,
            "query": query,
            "plan": plan,
            "answers": {q: "" for q in questions},
        },  # fmt: skip
        allowed=["approve", "reject", "select", "edit"],
        timeout_s=timeout_s,
        metadata={"research_id": research_id},
    )
    stream.attach(req.id)
    session["status"] = "awaiting_approval"
    sessions.put(session)
    settled = airlock.wait(req.id) if req.pending else req
    if not settled.approved:
        return end(
            "declined", f"the plan was not approved ({settled.status}); nothing was searched"
        )

    # ---- Phase B: only what was approved, once ----
    args = approved_args(settled)
    answers = {q: a for q, a in args.get("answers", {}).items() if isinstance(a, str) and a}
    queries = settled.selected_items
    airlock.claim_execution(settled.id)
    session["status"] = "running"
    findings: list[str] = []
    for q in queries:
        stream.emit("tool_call", tool="web_search", args={"query": q, "answers": answers})
        found = web_search(q, answers)
        session["sources"] += [s["url"] for s in found if s["url"] not in session["sources"]]
        findings += [s["snippet"] for s in found if s["snippet"] not in findings]
        stream.emit("tool_result", tool="web_search", count=len(found))
    sections = {
        "Summary": f"Question: {query}. Scope: "
        + ("; ".join(f"{q} {a}" for q, a in answers.items()) or "as planned")
        + ".",
        "Findings": " ".join(findings) or "Nothing was found.",
        "Recommendation": "For one machine and a modest write rate, SQLite; for several writers "
        "or machines, PostgreSQL.",
    }
    report = f"# {query}\n"
    for title in plan["outline"]:
        report += f"\n## {title}\n\n"
        for part in chunks(sections[title], max_update_size):
            report += part
            session["report_markdown"] = report
            stream.emit("report_updated", section=title, chunk=part, report_markdown=report)
    return end("completed", f"{len(queries)} queries, {len(session['sources'])} sources")


if __name__ == "__main__":
    question = " ".join(sys.argv[1:]) or "Should a small team use SQLite or PostgreSQL?"
    with Airlock() as client:  # AIRLOCK_URL and AIRLOCK_TOKEN
        done = run_research(client, question, on_event=lambda e: print(f"[{e['seq']}] {e['type']}"))
    print(done["report_markdown"])
