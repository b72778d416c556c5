"""Pattern 2: an operator reviews a generated robot plan before it runs.

A LangGraph-style workflow (written here as plain functions): the intent parser reads the operator's
command, the sequence builder makes numbered steps, and ``human_review`` is a blocking gate with a
timeout (``HUMAN_REVIEW_TIMEOUT`` seconds, default 120). The operator approves, asks for a revision
with comments (the plan is made again with them, as a new request linked to the old one by
``revision_of``), or declines; a decline or a timeout routes to the fallback. JSON log lines
``Presenting plan for human review``, ``Human decision recorded`` and ``Human review timeout`` carry
the correlation id; the run ends with the review metrics.

    export AIRLOCK_URL=http://127.0.0.1:7420 AIRLOCK_TOKEN=<an agent token>
    python examples/robot_plan.py "weld at position 1 and 2"

Then decide in the inbox (approve, revise with a comment such as "Skip position 2", or reject).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from airlock_client import Airlock, NotApprovedError, WaitTimeoutError, approved_args

ACTION = "robot.execute_plan"
HUMAN_REVIEW_TIMEOUT = int(os.getenv("HUMAN_REVIEW_TIMEOUT", "120"))
MAX_REVISIONS = 3
#: The server records the timeout at the deadline; the waiting side allows it this long to do so.
WAIT_MARGIN_S = 30.0

Log = Callable[[dict[str, Any]], None]


def json_log(record: dict[str, Any]) -> None:
    print(json.dumps({"ts": time.time(), "service": "human_review", **record}), file=sys.stderr)


def intent_parser(command: str, feedback: str | None = None) -> dict[str, Any]:
    """Stand-in for the model: the positions named in the command, less those the operator's
    revision feedback says to skip."""
    positions = [int(n) for n in re.findall(r"\d+", command)] or [1]
    if feedback:
        skipped = {int(n) for n in re.findall(r"skip (?:position |pos_?)?(\d+)", feedback, re.I)}
        positions = [p for p in positions if p not in skipped]
    return {"task": "tack_weld", "positions": positions, "feedback": feedback}


def sequence_builder(intent: dict[str, Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [
        {"action": "move", "target": "Tool_Weld_Safe_Position"},
        {"action": "move", "target": "Tool_Weld_Position"},
        {"action": "attach", "target": "Welder"},
        {"action": "move", "target": "Tool_Weld_Safe_Position"},
    ]
    for p in intent["positions"]:
        steps += [
            {"action": "move", "target": f"Safe_Pos_{p}"},
            {"action": "move", "target": f"Pos_{p}"},
            {"action": "routine", "target": "tack_weld", "position": f"Pos_{p}"},
            {"action": "move", "target": f"Safe_Pos_{p}"},
        ]
    steps.append({"action": "move", "target": "Home"})
    for i, step in enumerate(steps, 1):
        step["id"] = i
        if step["action"] == "routine":
            step["name"] = f"Tack Weld at {step['position']}"
        elif step["action"] == "attach":
            step["name"] = f"Attach {step['target']}"
        else:
            step["name"] = f"Move to {step['target']}"
    return steps


def format_plan(
    correlation_id: str, command: str, plan: list[dict[str, Any]], timeout_s: float
) -> str:
    """The seed's terminal presentation, shown to the reviewer as the request's preview."""
    rule = "=" * 80
    lines = [
        rule,
        "PLAN REVIEW REQUIRED",
        rule,
        f"Correlation ID: {correlation_id}",
        f"Your command: {command}",
        "",
        "Generated Plan:",
        *[f"  [{s['id']}]{' ' * (3 - len(str(s['id'])))}{s['name']}" for s in plan],
        "",
        rule,
        "Options:",
        "  [a] Approve - Execute this plan",
        "  [r] Revise - Request changes (provide comments)",
        "  [d] Decline - Cancel this task",
        rule,
        f"Timeout: {timeout_s:g} seconds",
        rule,
    ]
    return "\n".join(lines)


def human_review(
    airlock: Airlock, state: dict[str, Any], timeout_s: float, log: Log
) -> dict[str, Any]:
    """The blocking gate: returns ``human_decision`` (approved, revision, declined, timeout) and
    ``human_comments``; the request itself stays in ``state["request"]`` for the verifier."""
    cid = state["correlation_id"]
    log({"level": "INFO", "message": "Presenting plan for human review", "correlation_id": cid,
         "timeout_seconds": timeout_s})  # fmt: skip
    req = airlock.request(
        f"Robot plan: {state['operator_input']}"
        + (f" (revision {state['revision']})" if state["revision"] else ""),
        action=ACTION,
        key=f"{cid}:plan:{state['revision']}",
        command=state["operator_input"],
        items=[{"id": f"step-{s['id']}", "label": s["name"]} for s in state["plan"]],
        args={"command": state["operator_input"], "plan": state["plan"]},
        preview=format_plan(cid, state["operator_input"], state["plan"], timeout_s),
        allowed=["approve", "revise", "reject"],
        risk="high",
        timeout_s=timeout_s,
        correlation_id=cid,
        revision_of=state.get("previous_request"),
        metadata={"revision": state["revision"], "feedback": state.get("human_comments")},
    )
    try:
        req = airlock.wait(req.id, timeout_s + WAIT_MARGIN_S) if req.pending else req
    except WaitTimeoutError:
        req = airlock.get(req.id)  # still pending: nobody answered, whatever the server says
    state["request"] = req
    if req.status == "approved":
        decision, comments = "approved", None
    elif req.status == "revise":
        decision, comments = "revision", (req.decision.comment if req.decision else None) or ""
    elif req.status in ("timed_out", "pending"):
        decision, comments = "timeout", None
        log({"level": "WARNING", "message": "Human review timeout", "correlation_id": cid})
    else:
        decision, comments = "declined", None
    log({"level": "INFO", "message": "Human decision recorded", "correlation_id": cid,
         "decision": decision, "request_id": req.id})  # fmt: skip
    return {"human_decision": decision, "human_comments": comments}


def human_review_condition(state: dict[str, Any]) -> str:
    decision = state.get("human_decision")
    if decision == "approved":
        return "verify"
    if decision == "revision":
        return "sequence_planning"
    return "fallback"  # declined or timeout


def verify_and_execute(airlock: Airlock, state: dict[str, Any]) -> list[str]:
    """Runs exactly the approved plan, once: the approval must bind these arguments, and the
    execution is claimed on the server before the first move."""
    args = approved_args(state["request"])
    for step in args["plan"]:
        if step["action"] not in ("move", "attach", "routine"):
            raise NotApprovedError("args_mismatch", f"unknown step {step}", state["request"])
    airlock.claim_execution(state["request"].id)
    return [step["name"] for step in args["plan"]]


def review_metrics(reviews: list[dict[str, Any]]) -> dict[str, float]:
    decided = [r for r in reviews if r["decision"] in ("approved", "declined")]
    approved = sum(r["decision"] == "approved" for r in reviews)
    return {
        "reviews": len(reviews),
        "review_duration_s": sum(r["duration_s"] for r in reviews),
        "approval_rate": approved / len(decided) if decided else 0.0,
        "revision_rate": sum(r["decision"] == "revision" for r in reviews) / len(reviews),
        "timeout_frequency": sum(r["decision"] == "timeout" for r in reviews) / len(reviews),
    }


def run_workflow(
    airlock: Airlock,
    command: str,
    *,
    correlation_id: str | None = None,
    timeout_s: float = HUMAN_REVIEW_TIMEOUT,
    log: Log = json_log,
) -> dict[str, Any]:
    """intent → plan → human review → verify (approved) / re-plan (revise) / fallback."""
    state: dict[str, Any] = {
        "correlation_id": correlation_id or f"robot-{uuid.uuid4()}",
        "operator_input": command,
        "revision": 0,
        "human_comments": None,
    }
    reviews: list[dict[str, Any]] = []
    for revision in range(MAX_REVISIONS + 1):
        state["revision"] = revision
        state["plan"] = sequence_builder(intent_parser(command, state["human_comments"]))
        started = time.monotonic()
        state.update(human_review(airlock, state, timeout_s, log))
        reviews.append({"request_id": state["request"].id, "decision": state["human_decision"],
                        "duration_s": time.monotonic() - started})  # fmt: skip
        route = human_review_condition(state)
        if route == "verify":
            executed = verify_and_execute(airlock, state)
            return {"outcome": "executed", "executed": executed, "reviews": reviews,
                    "metrics": review_metrics(reviews)}  # fmt: skip
        if route == "fallback":
            message = (
                "Human review timeout exceeded. Routing to fallback."
                if state["human_decision"] == "timeout"
                else "Task declined by operator"
            )
            return {"outcome": "fallback", "message": message, "executed": [],
                    "reviews": reviews, "metrics": review_metrics(reviews)}  # fmt: skip
        state["previous_request"] = state["request"].id
    return {"outcome": "fallback", "message": f"still revised after {MAX_REVISIONS} revisions",
            "executed": [], "reviews": reviews, "metrics": review_metrics(reviews)}  # fmt: skip


if __name__ == "__main__":
    with Airlock() as client:  # AIRLOCK_URL and AIRLOCK_TOKEN
        result = run_workflow(client, " ".join(sys.argv[1:]) or "weld at position 1 and 2")
    print(json.dumps(result, indent=2))
