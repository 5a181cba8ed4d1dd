"""Errors raised by this client.

Every failure is an :class:`AnvilError` whose ``code`` is one of
:data:`ERROR_CODES`.
"""

from typing import Any, Dict, List, Optional, Type

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

    Every AnvilError is an instance of the subclass of its code
    (``AnvilError("policy_denied", ...)`` is a :class:`PolicyDenied`), so a
    caller can catch one code (``except RateLimited``) or all of them
    (``except AnvilError``); ``code`` is always there too.

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

    def __new__(cls, code: str, *args: Any, **kwargs: Any) -> "AnvilError":
        if cls is AnvilError:
            cls = ERROR_CLASSES.get(code if code in ERROR_CODES else UNKNOWN_ERROR, AnvilError)
        return super().__new__(cls)

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


class ValidationError(AnvilError):
    """validation_error: the arguments do not fit the operation's schema."""


class AuthRequired(AnvilError):
    """auth_required: the turn's token is missing or expired, or the account is not connected."""


class PermissionDenied(AnvilError):
    """permission_denied: the gateway or upstream refused this caller."""


class NotFound(AnvilError):
    """not_found: the resource does not exist."""


class Conflict(AnvilError):
    """conflict: the resource changed or already exists."""


class RateLimited(AnvilError):
    """rate_limited: wait (retry_after_ms when given) and retry."""


class UpstreamTimeout(AnvilError):
    """upstream_timeout: the upstream (or the gateway) did not answer in time."""


class UpstreamUnavailable(AnvilError):
    """upstream_unavailable: the gateway or upstream could not be reached."""


class UnsafeRetryBlocked(AnvilError):
    """unsafe_retry_blocked: retrying could repeat a write."""


class ConfirmationRequired(AnvilError):
    """confirmation_required: the write needs confirm=True."""


class IdempotencyRequired(AnvilError):
    """idempotency_required: the write needs an idempotency key."""


class SchemaMismatch(AnvilError):
    """schema_mismatch: the upstream answered something its schema does not describe."""


class UnsupportedOperation(AnvilError):
    """unsupported_operation: the gateway does not offer this call (or this form of it)."""


class PolicyDenied(AnvilError):
    """policy_denied: the branch's grant does not allow this operation."""


class UnknownUpstreamError(AnvilError):
    """unknown_upstream_error: something unexpected failed; report the trace_id."""


#: The AnvilError subclass of each code.
ERROR_CLASSES = {
    "validation_error": ValidationError,
    "auth_required": AuthRequired,
    "permission_denied": PermissionDenied,
    "not_found": NotFound,
    "conflict": Conflict,
    "rate_limited": RateLimited,
    "upstream_timeout": UpstreamTimeout,
    "upstream_unavailable": UpstreamUnavailable,
    "unsafe_retry_blocked": UnsafeRetryBlocked,
    "confirmation_required": ConfirmationRequired,
    "idempotency_required": IdempotencyRequired,
    "schema_mismatch": SchemaMismatch,
    "unsupported_operation": UnsupportedOperation,
    "policy_denied": PolicyDenied,
    "unknown_upstream_error": UnknownUpstreamError,
}  # type: Dict[str, Type[AnvilError]]
