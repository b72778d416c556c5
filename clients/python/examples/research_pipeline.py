"""Pattern 1: a research pipeline whose reflection step proposes extra search queries, and a person
approves all, some or none of them before any search runs.

The pipeline is a static DAG (as in ZenML): the approval step always runs and always returns an
``ApprovalDecision``; the search step runs only the approved queries. The model and the search engine
are stand-ins so the example runs offline; the approval goes through a real Airlock server.

    export AIRLOCK_URL=http://127.0.0.1:7420 AIRLOCK_TOKEN=<an agent token>
    python examples/research_pipeline.py "How do heat pumps behave in frost?"

Then decide in the inbox (or `airlock decide ID approve --select 1,3` with a reviewer token).
"""

from __future__ import annotations

import sys
from typing import Any

from airlock_client import Airlock, ApprovalDecision, ask

ACTION = "research.search"
MAX_ADDITIONAL_SEARCHES = 3
TIMEOUT_S = 3600


def generate_reflection_step(question: str) -> dict[str, Any]:
    """Stand-in for the model's reflection: critiques and recommended queries, no searches yet."""
    return {
        "question": question,
        "critique": [
            {"issue": "No field data below -15 °C", "importance": "high"},
            {"issue": "Sources are mostly vendors", "importance": "medium"},
        ],
        "recommended_queries": [
            f"{question} field study",
            f"{question} defrost cycle efficiency",
            f"{question} independent measurements",
        ][:MAX_ADDITIONAL_SEARCHES],
    }


def format_approval_request(reflection: dict[str, Any]) -> str:
    queries = reflection["recommended_queries"]
    high = [c["issue"] for c in reflection["critique"] if c.get("importance") == "high"]
    lines = [
        "# Approve additional research?",
        "",
        f"**Main query:** {reflection['question']}",
        "",
        "**Key issues identified:**",
        *[f"- {issue}" for issue in high],
        "",
        f"**Proposed additional research** ({len(queries)} queries):",
        *[f"{i}. {q}" for i, q in enumerate(queries, 1)],
        "",
        f"**Estimated additional time:** ~{len(queries) * 2} minutes",
        "",
        "Reply `APPROVE ALL`, `SKIP`, or `SELECT 1,3` to choose queries by number.",
        f"**Timeout:** response required within {TIMEOUT_S // 60} minutes",
    ]
    return "\n".join(lines)


def get_research_approval_step(
    airlock: Airlock | None,
    reflection: dict[str, Any],
    key: str | None = None,
    require_approval: bool = True,
    timeout_s: float = TIMEOUT_S,
) -> ApprovalDecision:
    """The approval step: always answers, never raises (a failure is ``error``, not approved)."""
    return ask(
        format_approval_request(reflection),
        reflection["recommended_queries"],
        timeout_s,
        airlock=airlock,
        title="Approve additional research?",
        action=ACTION,
        key=key,
        required=require_approval,
        question=reflection["question"],
        critiques=reflection["critique"],
        estimate={"minutes": len(reflection["recommended_queries"]) * 2},
        labels={"items": "Proposed additional research", "itemNoun": "queries"},
    )


def execute_approved_searches_step(
    reflection: dict[str, Any], decision: ApprovalDecision
) -> dict[str, Any]:
    """Runs only what was approved (stand-in search), and records how it was decided."""
    performed = decision.selected_queries if decision.approved else []
    return {
        "question": reflection["question"],
        "searches_performed": performed,
        "results": {q: f"(results for {q!r})" for q in performed},
        "decision": decision.model_dump(),
    }


def run_pipeline(
    airlock: Airlock | None, question: str, key: str | None = None, timeout_s: float = TIMEOUT_S
) -> dict[str, Any]:
    reflection = generate_reflection_step(question)
    decision = get_research_approval_step(airlock, reflection, key=key, timeout_s=timeout_s)
    return execute_approved_searches_step(reflection, decision)


if __name__ == "__main__":
    question = " ".join(sys.argv[1:]) or "How do heat pumps behave in frost?"
    with Airlock() as client:  # AIRLOCK_URL and AIRLOCK_TOKEN
        state = run_pipeline(client, question, key=f"research/{question}"[:200])
    decision = state["decision"]
    print(f"decision: {decision['approval_method']} (approved: {decision['approved']})")
    for query in state["searches_performed"]:
        print(f"searched: {query}")
