"""Errors raised by this client.

Every failure is an :class:`AnvilError` whose ``code`` is one of
:data:`ERROR_CODES`.
"""

from typing import Any, Dict, List, Optional

ERROR_CODES = (
    "validation_error",
    "auth_required",
    "permission_denied",
    "not_found",
    "conflict",
    "rate_limited",
    "upstream_timeout",
    "upstream_unavailable",
    "unsafe_retry_blocked",
    "confirmation_required",
    "idempotency_required",
    "schema_mismatch",
    "unsupported_operation",
    "policy_denied",
    "unknown_upstream_error",
)

UNKNOWN_ERROR = "unknown_upstream_error"


class AnvilError(Exception):
    """A call that failed, locally or at the gateway.

    Attributes:
        code: one of ERROR_CODES.
        message: what went wrong, for a person.
        operation: the AIR operation id, when known.
        trace_id: the gateway's trace id, when it answered.
        retryable: whether retrying later can succeed.
        safe_to_retry: whether retrying cannot repeat a write.
        upstream: ``{"status", "request_id", "code"}`` of the upstream answer, or None.
        required_arguments: argument names the call is missing (``["confirm"]``).
        details: code-specific fields (``details["code"]`` such as ``policy/grant_denied``).
        retry_after_ms: how long to wait before retrying, or None.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        operation: Optional[str] = None,
        trace_id: Optional[str] = None,
        retryable: bool = False,
        safe_to_retry: bool = False,
        upstream: Optional[Dict[str, Any]] = None,
        required_arguments: Optional[List[str]] = None,
        details: Optional[Dict[str, Any]] = None,
        retry_after_ms: Optional[int] = None,
    ) -> None:
        if code not in ERROR_CODES:
            code = UNKNOWN_ERROR
        super().__init__(message)
        self.code = code
        self.message = message
        self.operation = operation
        self.trace_id = trace_id
        self.retryable = bool(retryable)
        self.safe_to_retry = bool(safe_to_retry)
        self.upstream = upstream
        self.required_arguments = list(required_arguments or [])
        self.details = details if details is not None else {}
        self.retry_after_ms = retry_after_ms

    def __str__(self) -> str:
        return "%s: %s" % (self.code, self.message)

    def __repr__(self) -> str:
        return "AnvilError(%r, %r)" % (self.code, self.message)

    def to_dict(self) -> Dict[str, Any]:
        """The error as an envelope body (``{"code", "message", ...}``)."""
        out = {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "safe_to_retry": self.safe_to_retry,
            "operation": self.operation,
            "trace_id": self.trace_id,
        }  # type: Dict[str, Any]
        if self.upstream is not None:
            out["upstream"] = self.upstream
        if self.required_arguments:
            out["required_arguments"] = list(self.required_arguments)
        if self.details:
            out["details"] = self.details
        if self.retry_after_ms is not None:
            out["retry_after_ms"] = self.retry_after_ms
        return out
