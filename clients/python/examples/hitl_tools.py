"""Pattern 3: agent tools wrapped with HITL markers and routed by confidence.

Each call is scored (base score per tool, admin +10, verified workspace +5, amount over 1000 -15,
bulk -10) and routed: ``auto`` runs at once and is audited (an ``auto_executed`` event with
sensitive keys redacted), ``quick`` and ``full`` open an Airlock request and return the pending
marker ``{"__hitl_pending__": True, "hitl_result": {...}}`` for the agent to hand over; once a person
decided, ``tool.resume(approval_id)`` runs the call with the approved (possibly edited) arguments,
once, or returns the rejection for the model to read.

    export AIRLOCK_URL=http://127.0.0.1:7420 AIRLOCK_TOKEN=<an agent token>
    python examples/hitl_tools.py

Then decide the pending calls in the inbox; the script waits for each and prints what ran.
"""

from __future__ import annotations

import json
from typing import Any

from airlock_client import Airlock, HitlTool, hitl_tool, is_hitl_pending

#: What actually ran, in order (a stand-in for the systems the tools act on).
EXECUTED: list[dict[str, Any]] = []
#: Actions are namespaced: a demo server (`npm start`) checks its own tools' args by action name.
PREFIX = "hitl-example."


def get_hitl_tools(airlock: Airlock) -> dict[str, HitlTool]:
    """The seed's example tools (and a routine one that runs at once), asking through ``airlock``."""

    @hitl_tool(airlock=airlock, action=PREFIX + "sign_contract", approval_type="contract",
               risk_level="high", auto_threshold=95, quick_threshold=70, requires_reason=True,
               description_template="Sign contract {contract_id} for ${amount}")  # fmt: skip
    def sign_contract(contract_id: str, amount: float) -> dict[str, Any]:
        EXECUTED.append({"tool": "sign_contract", "contract_id": contract_id, "amount": amount})
        return {"status": "signed", "contract_id": contract_id, "amount": amount}

    @hitl_tool(airlock=airlock, action=PREFIX + "delete_project", approval_type="deletion",
               risk_level="high", auto_threshold=90, quick_threshold=60, requires_reason=True,
               description_template="Delete project {project_id}")  # fmt: skip
    def delete_project(project_id: str) -> dict[str, Any]:
        EXECUTED.append({"tool": "delete_project", "project_id": project_id})
        return {"status": "deleted", "project_id": project_id}

    @hitl_tool(airlock=airlock, action=PREFIX + "approve_expense", approval_type="expense",
               risk_level="medium", auto_threshold=85, quick_threshold=65,
               description_template="Approve expense {expense_id}: ${amount}")  # fmt: skip
    def approve_expense(expense_id: str, amount: float) -> dict[str, Any]:
        EXECUTED.append({"tool": "approve_expense", "expense_id": expense_id, "amount": amount})
        return {"status": "approved", "expense_id": expense_id, "amount": amount}

    @hitl_tool(airlock=airlock, action=PREFIX + "send_bulk_notification",
               approval_type="communication", risk_level="low", auto_threshold=80,
               quick_threshold=50)  # fmt: skip
    def send_bulk_notification(recipients: list[str], message: str) -> dict[str, Any]:
        EXECUTED.append({"tool": "send_bulk_notification", "recipients": recipients})
        return {"status": "sent", "count": len(recipients)}

    @hitl_tool(airlock=airlock, action=PREFIX + "update_task_status", approval_type="task",
               risk_level="low")  # fmt: skip
    def update_task_status(task_id: str, status: str, api_key: str = "") -> dict[str, Any]:
        EXECUTED.append({"tool": "update_task_status", "task_id": task_id, "status": status})
        return {"task_id": task_id, "status": status}

    return {
        "sign_contract": sign_contract,
        "delete_project": delete_project,
        "approve_expense": approve_expense,
        "send_bulk_notification": send_bulk_notification,
        "update_task_status": update_task_status,
    }


ADMIN = {"user_role": "admin", "workspace_verified": True}

#: What the agent decided to call this turn: (tool, arguments, context).
CALLS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    # 85 + 10 + 5 = 100 >= 85: auto, runs at once, audited (the key is redacted in the audit).
    ("update_task_status", {"task_id": "T-7", "status": "done", "api_key": "sk-live-123"}, ADMIN),
    # 60 + 10 + 5 = 75: quick (65..84).
    ("approve_expense", {"expense_id": "E-12", "amount": 250}, ADMIN),
    # 50 - 15 (amount over 1000) = 35: full.
    ("sign_contract", {"contract_id": "C-1", "amount": 5000}, {}),
    # 40: full.
    ("delete_project", {"project_id": "P-9"}, {}),
]


def run_agent(airlock: Airlock, run_id: str) -> dict[str, Any]:
    """One agent turn: every call routed by confidence. Returns what ran at once and the pending
    markers (by tool) the agent hands to its UI."""
    tools = get_hitl_tools(airlock)
    ran: dict[str, Any] = {}
    pending: dict[str, dict[str, Any]] = {}
    for name, args, context in CALLS:
        # The key makes a re-run of this turn find the same gates instead of asking again.
        result = tools[name](**args, _hitl_context={**context, "key": f"{run_id}:{name}"})
        if is_hitl_pending(result):
            pending[name] = result["hitl_result"]
        else:
            ran[name] = result
    return {"ran": ran, "pending": pending}


def finish(airlock: Airlock, pending: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Once people decided: each pending call runs with what was approved, or is refused."""
    tools = get_hitl_tools(airlock)
    return {name: tools[name].resume(m["approval_id"], wait=True) for name, m in pending.items()}


if __name__ == "__main__":
    import uuid

    with Airlock() as client:  # AIRLOCK_URL and AIRLOCK_TOKEN
        turn = run_agent(client, f"turn-{uuid.uuid4()}")
        for name, marker in turn["pending"].items():
            print(f"{name}: {marker['approval_level']} review, request {marker['approval_id']}")
        outcomes = finish(client, turn["pending"])
    print(json.dumps({"ran_at_once": turn["ran"], "after_review": outcomes}, indent=2))
