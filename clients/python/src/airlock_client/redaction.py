"""Redaction, with the server's own rules: ``redaction_rules.json`` is a byte-identical copy of the
server's ``src/audit/redaction-rules.json`` (a test in the server's suite fails when they differ).

``redact(value)`` returns a deep copy where the values of sensitive keys (password, token, api_key,
mfa_code, otp, pin, session, cookie, private_key, client_secret, ...) are ``"[REDACTED]"`` and the
credentials found inside any string (PEM private keys, AWS/GitHub/Slack/Stripe tokens, JWTs,
``Bearer``/``Basic`` credentials, ``user:pass@`` in URLs, ``--password X``, ``token=X``, ...) are
``"***"``. The same input gives the same output as the server's ``redact``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any, NamedTuple
from urllib.parse import unquote

REDACTED = "[REDACTED]"
REDACTED_INLINE = "***"


def _load_rules() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("redaction_rules.json").read_text("utf-8")
    rules: dict[str, Any] = json.loads(text)
    replacement = rules.get("replacement", {})
    if replacement.get("key") != REDACTED or replacement.get("inline") != REDACTED_INLINE:
        raise RuntimeError("redaction_rules.json is not in the expected shape")
    return rules


#: The shared rules as read from ``redaction_rules.json``.
RULES: dict[str, Any] = _load_rules()


class _ValueRule(NamedTuple):
    id: str
    regex: re.Pattern[str]
    secret: tuple[int, ...]
    name: int | None


# The patterns avoid \w, \s, ^ and $, and with re.ASCII \b and case folding are JavaScript's.
_VALUE_RULES = tuple(
    _ValueRule(
        r["id"],
        re.compile(r["pattern"], re.ASCII | (re.IGNORECASE if "i" in r["flags"] else 0)),
        tuple(r["secret"]),
        r.get("name"),
    )
    for r in RULES["values"]
)
_KEYS = RULES["keys"]
_ANYWHERE: tuple[str, ...] = tuple(_KEYS["anywhere"])
_WORDS = frozenset(_KEYS["words"])
_AFTER_SESSION = frozenset(_KEYS["afterSession"])
_TOKEN_COUNT_BEFORE = frozenset(_KEYS["tokenCountBefore"])
_TOKEN_COUNT_AFTER = frozenset(_KEYS["tokenCountAfter"])

_configured: tuple[str, ...] = ()


def key_words(key: str) -> list[str]:
    """The words of a key: camelCase split, case folded, anything not a letter or digit a
    separator. ``X-Auth-Token`` -> ``["x", "auth", "token"]``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def _squeeze(key: str) -> str:
    return "".join(key_words(key))


def set_redaction_keys(names: Iterable[str]) -> None:
    """Extra key names redacted everywhere in this process, besides the shared list (replaces the
    previous set)."""
    global _configured
    _configured = tuple(n for n in (_squeeze(x) for x in names) if n)
    _judge_cached.cache_clear()


def is_sensitive_key(key: str, extra_keys: Sequence[str] | None = None) -> bool:
    """True when a key names a secret (the shared list, configured names, ``extra_keys``)."""
    if extra_keys:
        return _judge(key, tuple(_squeeze(x) for x in extra_keys))
    return _judge_cached(key)


@lru_cache(maxsize=4096)
def _judge_cached(key: str) -> bool:
    return _judge(key, ())


def _judge(key: str, extra: tuple[str, ...]) -> bool:
    words = key_words(key)
    if not words:
        return False
    squeezed = "".join(words)
    if any(w in squeezed for w in _ANYWHERE):
        return True
    for i, w in enumerate(words):
        if w in _WORDS:
            return True
        if "token" in w and w != "tokens" and not w.startswith("tokeniz"):
            # ``max_token``, ``token_count``: a count of a language model's tokens, not a secret.
            before = words[i - 1] if i > 0 else ""
            after = words[i + 1] if i + 1 < len(words) else ""
            counting = w == "token" and (
                before in _TOKEN_COUNT_BEFORE or after in _TOKEN_COUNT_AFTER
            )
            if not counting:
                return True
        if w == "session":
            nxt = words[i + 1] if i + 1 < len(words) else None
            if nxt is None or nxt in _AFTER_SESSION:
                return True
    return any(n and n in squeezed for n in (*_configured, *extra))


def _safe_decode(s: str) -> str:
    # As JavaScript's decodeURIComponent, which refuses a malformed escape or invalid UTF-8.
    if re.search(r"%(?![0-9A-Fa-f]{2})", s):
        return s
    try:
        return unquote(s, errors="strict")
    except UnicodeDecodeError:
        return s


def redact_string(text: str, extra_keys: Sequence[str] | None = None) -> str:
    """``text`` with the credentials found in it replaced by ``***``."""
    for rule in _VALUE_RULES:
        text = _apply(rule, text, extra_keys)
    return text


def _apply(rule: _ValueRule, text: str, extra_keys: Sequence[str] | None) -> str:
    out: list[str] = []
    copied = 0
    pos = 0
    changed = False
    while pos <= len(text):
        m = rule.regex.search(text, pos)
        if m is None:
            break
        if m.end() == m.start():
            pos = m.end() + 1
            continue
        pos = m.end()
        group = next((g for g in rule.secret if m.group(g) is not None), None)
        if group is None:
            continue
        if rule.name is not None and not is_sensitive_key(
            _safe_decode(m.group(rule.name) or ""), extra_keys
        ):
            # Not a secret's name: look again right after it (``note: token=X``).
            pos = m.end(rule.name)
            continue
        out.append(text[copied : m.start(group)])
        out.append(REDACTED_INLINE)
        copied = m.end(group)
        changed = True
    if not changed:
        return text
    out.append(text[copied:])
    return "".join(out)


def redact(value: Any, extra_keys: Sequence[str] | None = None) -> Any:
    """A deep copy of ``value`` (dicts, lists, tuples, strings) with the values of sensitive keys
    replaced by ``[REDACTED]``, and the credentials inside strings (key names included) by
    ``***``."""
    return _redact(value, extra_keys, set())


def _redact(value: Any, extra_keys: Sequence[str] | None, ancestors: set[int]) -> Any:
    if isinstance(value, str):
        return redact_string(value, extra_keys)
    if not isinstance(value, (dict, list, tuple)):
        return value
    if id(value) in ancestors:
        return "[Circular]"
    ancestors.add(id(value))
    try:
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for k, v in value.items():
                name = redact_string(k, extra_keys) if isinstance(k, str) else k
                sensitive = isinstance(k, str) and is_sensitive_key(k, extra_keys)
                out[name] = REDACTED if sensitive else _redact(v, extra_keys, ancestors)
            return out
        return [_redact(v, extra_keys, ancestors) for v in value]
    finally:
        ancestors.discard(id(value))
