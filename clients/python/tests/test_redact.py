"""The client's redaction uses the server's rules (the same file) and gives the server's output on
the shared canary secrets (test/audit/redaction-canaries.json in the repository): each secret is
hidden under its key, nested, in arrays, in markdown and in key names; ordinary text is left."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airlock_client import REDACTED, is_sensitive_key, redact, redact_string
from airlock_client.hitl import hitl_tool
from airlock_client.redaction import RULES

REPO = Path(__file__).resolve().parents[3]
CANARIES: dict[str, Any] = json.loads(
    (REPO / "test" / "audit" / "redaction-canaries.json").read_text("utf-8")
)
SECRETS = [c["secret"] for c in CANARIES["keyed"]] + [c["secret"] for c in CANARIES["values"]]


def leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def test_the_rules_are_the_servers_file() -> None:
    server_copy = REPO / "src" / "audit" / "redaction-rules.json"
    here = Path(__file__).resolve().parents[1] / "src" / "airlock_client" / "redaction_rules.json"
    assert here.read_bytes() == server_copy.read_bytes()
    assert len(RULES["keys"]["anywhere"]) + len(RULES["keys"]["words"]) > 40


def test_there_are_40_plus_distinct_canaries() -> None:
    assert len(SECRETS) >= 40
    assert len(set(SECRETS)) == len(SECRETS)


@pytest.mark.parametrize("canary", CANARIES["keyed"], ids=lambda c: c["key"])
def test_a_secret_under_its_key_is_redacted_at_any_depth(canary: dict[str, str]) -> None:
    key, secret = canary["key"], canary["secret"]
    assert is_sensitive_key(key)
    out = redact({key: secret, "a": {"b": [{key: secret}, {"c": {key: [secret]}}]}})
    assert out == {key: REDACTED, "a": {"b": [{key: REDACTED}, {"c": {key: REDACTED}}]}}
    for text in (
        f"{key}: {secret}",
        f"{key}={secret}",
        json.dumps({key: secret, "other": 1}),
        f"**{key}:** {secret}",
        f"`{key}`: {secret}",
        f"## Config\n\nhost: db\n{key} = {secret}\nport: 5432",
    ):
        redacted = redact_string(text)
        assert secret not in redacted, text
        assert key in redacted


@pytest.mark.parametrize("canary", CANARIES["values"], ids=lambda c: c["id"])
def test_a_secret_in_a_value_gives_the_servers_output(canary: dict[str, str]) -> None:
    text, secret = canary["text"], canary["secret"]
    assert redact_string(text) == canary["redacted"]
    data = {"note": text, "nested": {"list": [{"detail": text}, [text, "kept"]]}, text: "kept"}
    out = redact(data)
    assert leaked(json.dumps(out)) == []
    assert "kept" in json.dumps(out)
    assert data["note"] == text
    md = f"## Summary\n\nThe agent will run {text} and then report.\n- {text}\nUse `{text}`.\nDone."
    assert secret not in redact_string(md)


@pytest.mark.parametrize("text", CANARIES["ordinary"])
def test_ordinary_text_is_left(text: str) -> None:
    assert redact_string(text) == text
    assert redact({"note": text, "list": [text]}) == {"note": text, "list": [text]}


def test_ordinary_keys_are_left() -> None:
    for key in CANARIES["ordinaryKeys"]:
        assert not is_sensitive_key(key), key


def test_a_hitl_marker_shows_no_canary() -> None:
    args = {c["key"]: c["secret"] for c in CANARIES["keyed"]}
    args["notes"] = [c["text"] for c in CANARIES["values"]]

    @hitl_tool(auto_threshold=100, quick_threshold=100)
    def rotate(**kwargs: Any) -> str:
        return "ran"

    marker = rotate(**args)
    assert marker["__hitl_pending__"] is True
    assert leaked(json.dumps(marker)) == []
