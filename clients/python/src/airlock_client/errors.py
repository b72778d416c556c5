"""Exceptions carrying the server's stable problem ``code`` (RFC 9457 problem details).

Branch on ``err.code`` (``not_found``, ``conflict``, ``view_changed``, ``forbidden``,
``unauthorized``, ``invalid_input``, ``rate_limited``, ``store_unavailable``, ``timeout``, ...)
rather than on the message; the classes group the codes a caller usually handles alike
(``view_changed``, a decision on a view the request no longer has, is a ``ConflictError``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .models import ApprovalRequest, Decision


class AirlockError(Exception):
    """Any failure reported by Airlock or met while talking to it."""

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        status: int | None = None,
        field: str | None = None,
        problem: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.status = status
        self.field = field
        #: The problem document as the server sent it (empty when there was none).
        self.problem: dict[str, Any] = problem or {}

    def __str__(self) -> str:
        where = f" (field {self.field})" if self.field else ""
        return f"[{self.code}] {self.detail}{where}"


class NotFoundError(AirlockError):
    """404: no such request, or one the token may not see."""


class ForbiddenError(AirlockError):
    """401 (``unauthorized``: bad or revoked token) or 403 (``forbidden``: role or identity)."""


class InvalidInputError(AirlockError):
    """400/413/415/422: the server refused the input; ``field`` names the offending one."""


class ConflictError(AirlockError):
    """409: someone else decided first, the execution was already claimed, or a key clashes.

    ``request`` is the request as it is now and ``decision`` the decision that won, when the
    server disclosed them.
    """

    @property
    def request(self) -> ApprovalRequest | None:
        from .models import ApprovalRequest

        raw = self.problem.get("request")
        return ApprovalRequest.model_validate(raw) if isinstance(raw, dict) else None

    @property
    def decision(self) -> Decision | None:
        from .models import Decision

        raw = self.problem.get("decision")
        if isinstance(raw, dict):
            return Decision.model_validate(raw)
        request = self.request
        return request.decision if request else None


class UnavailableError(AirlockError):
    """The server cannot answer now: unreachable, restarting, storage fault (503) or rate limited
    (429). ``retry_after_s`` is how long it asked us to wait, when it said."""

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
        problem: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(code, detail, status=status, problem=problem)
        self.retry_after_s = retry_after_s

    @property
    def retryable(self) -> bool:
        """Worth the same call again after a pause (not a quota nor a cap on open streams)."""
        if self.status is None:
            return True
        if self.status == 503:
            return self.code != "too_many_streams"
        if self.status == 429:
            return self.code == "rate_limited"
        return self.status in (502, 504)


class WaitTimeoutError(AirlockError, TimeoutError):
    """``wait`` ran out of its own time while the request was still pending (code ``timeout``).
    The gate itself stays open: its deadline is the server's business."""

    def __init__(self, request_id: str, timeout_s: float) -> None:
        super().__init__("timeout", f"waited {timeout_s:g} s for {request_id}; it is still pending")
        self.request_id = request_id
        self.timeout_s = timeout_s


class NotApprovedError(AirlockError):
    """A gated function was not run. ``reason`` says why: ``rejected``, ``revise``, ``timed_out``,
    ``cancelled``, ``args_mismatch``, ``expired`` or ``already_executed`` (another caller ran it).
    ``request`` is the request as it was when the call gave up."""

    def __init__(self, reason: str, detail: str, request: ApprovalRequest) -> None:
        super().__init__(reason, detail)
        self.reason = reason
        self.request = request


class AlreadyExecutedError(NotApprovedError):
    """The approval was already claimed for execution, by another caller or an earlier run."""


def error_from_problem(status: int, body: Any, retry_after_header: str | None) -> AirlockError:
    """Maps an HTTP failure to the exception for its problem ``code`` (falling back on status)."""
    err = _from_problem(status, body, retry_after_header)
    if err.field is None and isinstance(err.problem.get("field"), str):
        err.field = err.problem["field"]
    return err


def _from_problem(status: int, body: Any, retry_after_header: str | None) -> AirlockError:
    problem: dict[str, Any] = body if isinstance(body, dict) else {}
    code = problem.get("code") if isinstance(problem.get("code"), str) else None
    detail = problem.get("detail")
    if not isinstance(detail, str):
        detail = f"the server answered HTTP {status}"
    field = problem.get("field") if isinstance(problem.get("field"), str) else None
    if code == "route_not_found":
        return NotFoundError(
            code,
            f"{detail} (is the client's url the Airlock server's base address?)",
            status=status,
            problem=problem,
        )
    if code == "not_found" or status == 404:
        return NotFoundError(code or "not_found", detail, status=status, problem=problem)
    if code == "conflict" or status == 409:
        return ConflictError(code or "conflict", detail, status=status, problem=problem)
    if status == 401:
        return ForbiddenError(code or "unauthorized", detail, status=status, problem=problem)
    if code == "forbidden" or status == 403:
        return ForbiddenError(code or "forbidden", detail, status=status, problem=problem)
    if code == "invalid_input" or status in (400, 413, 415, 422):
        return InvalidInputError(
            code or "invalid_input", detail, status=status, field=field, problem=problem
        )
    return UnavailableError(
        code or ("timeout" if status == 504 else "store_unavailable"),
        detail,
        status=status,
        retry_after_s=_retry_after(problem.get("retryAfterSeconds"), retry_after_header),
        problem=problem,
    )


def _retry_after(seconds: Any, header: str | None) -> float | None:
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds >= 0:
        return float(seconds)
    if header and header.strip().isdigit():
        return float(header.strip())
    return None
