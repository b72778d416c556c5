"""Pattern 4: a ReAct agent's file write is held for approval, with its diff.

The ``file_operation`` tool does not write: it returns ``needs_approval`` with what a person sees
(operation, path, message, preview, unified diff) and the full pending operation. The router sends
such a result to ``check_file_approval``, a graph node written the way a LangGraph node uses Airlock
today: open the gate (or find it again by its idempotency key), ``interrupt``, and on resume read
the decision from Airlock, check it binds the arguments, claim the execution once, then write what
was approved (the reviewer's edited content, when they edited). A rejection adds a cancellation
message; small writes (under ``AUTO_APPROVE_MAX_BYTES``) are approved by rule and audited. What
follows (``assess``) sees only the result, approved or not.

``interrupt`` is a parameter: in a LangGraph graph it is ``langgraph.types.interrupt``; standing
alone (this script) the node simply waits for the decision.

    export AIRLOCK_URL=http://127.0.0.1:7420 AIRLOCK_TOKEN=<an agent token>
    python examples/file_approval.py ./sandbox src/PlayerController.cs

Then approve, edit or reject the write in the inbox.
"""

from __future__ import annotations

import difflib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airlock_client import Airlock, ConflictError, NotApprovedError, approved_args, hash_args

ACTION = "files.write"
AUTO_APPROVE_MAX_BYTES = 100
TIMEOUT_S = 3600

Message = dict[str, Any]
Interrupt = Callable[[dict[str, Any]], Any]


def no_interrupt(value: dict[str, Any]) -> Any:
    """Standing alone there is no graph to pause: the node goes on and waits for the decision."""
    return None


def file_operation(root: Path, file_path: str, content: str, message: str) -> Message:
    """The tool: a write is never done here; it comes back as ``needs_approval``."""
    target = inside(root, file_path)
    before = target.read_text("utf-8") if target.exists() else ""
    diff = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            content.splitlines(keepends=True),
            fromfile=f"a/{file_path}" if before else "/dev/null",
            tofile=f"b/{file_path}",
        )
    )
    result = {
        "needs_approval": True,
        "approval_data": {
            "operation": "write",
            "file_path": file_path,
            "message": message,
            "preview": content[:2000],
            "diff": diff,
        },
        "pending_operation": {"operation": "write", "file_path": file_path, "content": content},
    }
    return {"role": "tool", "name": "file_operation", "content": json.dumps(result)}


def route_after_tools(messages: list[Message]) -> str:
    """``check_file_approval`` when the last tool result asks for approval, else ``assess``."""
    last = next((m for m in reversed(messages) if m["role"] == "tool"), None)
    if last is None:
        return "assess"
    try:
        return (
            "check_file_approval" if json.loads(last["content"]).get("needs_approval") else "assess"
        )
    except (ValueError, AttributeError):
        return "assess"


def check_file_approval(
    state: dict[str, Any],
    *,
    airlock: Airlock,
    root: Path,
    interrupt: Interrupt = no_interrupt,
) -> dict[str, list[Message]]:
    """The approval node. Safe to run again from its first line (LangGraph does, on resume): the
    gate is found again by its key, and the write is claimed once."""
    last = next(m for m in reversed(state["messages"]) if m["role"] == "tool")
    result = json.loads(last["content"])
    shown, op = result["approval_data"], result["pending_operation"]
    if len(op["content"].encode("utf-8")) <= AUTO_APPROVE_MAX_BYTES:
        written = execute_file_operation(root, op)
        airlock.record("auto_executed", data={"action": ACTION, "rule": "small file",
                                              "file_path": op["file_path"], "argsHash": hash_args(op),
                                              "bytes": written["bytes"]})  # fmt: skip
        return done(written, f"approved by rule: at most {AUTO_APPROVE_MAX_BYTES} bytes")

    req = airlock.request(
        f"Write {op['file_path']}",
        action=ACTION,
        key=f"{state['thread_id']}:{state['tool_call_id']}",
        summary=shown["message"],
        preview=shown["diff"] or shown["preview"],
        args=op,
        allowed=["approve", "reject", "edit"],
        risk="medium",
        timeout_s=TIMEOUT_S,
    )
    if req.pending:
        interrupt(
            {"approval_id": req.id, **shown}
        )  # pauses the graph; it comes back here on resume
        req = airlock.wait(req.id)  # the decision is Airlock's, never the resume value's
    try:
        args = approved_args(req)  # the reviewer's edited content when they edited
        airlock.claim_execution(req.id)
    except NotApprovedError:
        return {
            "messages": [
                {"role": "ai", "content": f"❌ File operation cancelled: {shown['message']}"}
            ]
        }
    except ConflictError:
        return {"messages": [{"role": "ai", "content": f"File operation already done ({req.id})"}]}
    by = req.decision.reviewer if req.decision else "policy"
    return done(execute_file_operation(root, args), f"approved by {by}")


def done(written: dict[str, Any], how: str) -> dict[str, list[Message]]:
    return {
        "messages": [
            {"role": "tool", "name": "file_operation", "content": json.dumps(written)},
            {
                "role": "ai",
                "content": f"✅ File operation completed: wrote {written['bytes']} bytes "
                f"to {written['file_path']} ({how})",
            },  # fmt: skip
        ]
    }


def execute_file_operation(root: Path, op: dict[str, Any]) -> dict[str, Any]:
    target = inside(root, op["file_path"])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(op["content"], "utf-8")
    return {"ok": True, "file_path": op["file_path"], "bytes": len(op["content"].encode("utf-8"))}


def inside(root: Path, file_path: str) -> Path:
    """The path under ``root``; a path that leaves it is refused."""
    target = (root / file_path).resolve()
    if not target.is_relative_to(root.resolve()):
        raise ValueError(f"{file_path} is outside the sandbox {root}")
    return target


def act_and_tools(root: Path, file_path: str, content: str, *, thread_id: str) -> dict[str, Any]:
    """act → tools: the agent's state once the tool has answered (a graph checkpoints it, so a
    resume starts from this state, not from a new tool call)."""
    state: dict[str, Any] = {"thread_id": thread_id, "tool_call_id": "call-1", "messages": []}
    state["messages"].append(file_operation(root, file_path, content, f"Create {file_path}"))
    return state


def approval_step(
    airlock: Airlock, root: Path, state: dict[str, Any], interrupt: Interrupt = no_interrupt
) -> dict[str, Any]:
    """route_after_tools → check_file_approval (when needed) → what assess will read."""
    if route_after_tools(state["messages"]) == "check_file_approval":
        node = check_file_approval(state, airlock=airlock, root=root, interrupt=interrupt)
        return {**state, "messages": [*state["messages"], *node["messages"]]}
    return state


def run_agent(
    airlock: Airlock,
    root: Path,
    file_path: str,
    content: str,
    *,
    thread_id: str,
    interrupt: Interrupt = no_interrupt,
) -> dict[str, Any]:
    """One write, from the tool call to what assess sees."""
    state = act_and_tools(root, file_path, content, thread_id=thread_id)
    return approval_step(airlock, root, state, interrupt)


if __name__ == "__main__":
    import uuid

    sandbox = Path(sys.argv[1] if len(sys.argv) > 1 else "sandbox")
    path = sys.argv[2] if len(sys.argv) > 2 else "src/PlayerController.cs"
    body = (
        "public class PlayerController {\n    public float Speed = 5f;\n    void Update() { }\n}\n"
    )
    with Airlock() as client:  # AIRLOCK_URL and AIRLOCK_TOKEN
        final = run_agent(client, sandbox, path, body, thread_id=f"thread-{uuid.uuid4()}")
    print(final["messages"][-1]["content"])
