"""The composite's own error."""

import json
import re
from typing import Any, Dict, Optional

#: Every ComposeError code.
COMPOSE_ERROR_CODES = (
    "duplicate_step",
    "cycle",
    "unknown_operation",
    "ambiguous_operation",
    "unknown_connector",
    "connector_missing",
    "unknown_input",
    "invalid_path",
    "unresolved_ref",
    "not_a_list",
    "invalid_flow",
)


class ComposeError(Exception):
    """A flow or a composite call that is wrong in itself (not a refused call).

    Attributes:
        code: one of COMPOSE_ERROR_CODES.
        message: what went wrong, for a person.
        details: code-specific fields (the step, the connector, the findings).
    """

    def __init__(self, code: str, message: str, details: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = dict(details or {})

    def to_json(self) -> Dict[str, Any]:
        """``{"code", "message", "details"}``."""
        return {"code": self.code, "message": self.message, "details": self.details}

    def __str__(self) -> str:
        return "%s: %s" % (self.code, self.message)

    def __repr__(self) -> str:
        return "ComposeError(%r, %r)" % (self.code, self.message)


def error_json(exc: BaseException) -> Dict[str, Any]:
    """The ``{code, message, details}`` of a failed call.

    An AnvilError from any connector's SDK (each loaded as its own module, so
    matched by shape) keeps its code, message and details; anything else is
    an ``internal_error``.
    """
    if isinstance(exc, ComposeError):
        return exc.to_json()
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    if isinstance(code, str) and isinstance(message, str):
        details = getattr(exc, "details", None)
        return {"code": code, "message": message, "details": details if isinstance(details, dict) else {}}
    return {"code": "internal_error", "message": "%s: %s" % (type(exc).__name__, exc), "details": {}}


def fmt(template: str, *args: Any) -> str:
    """template % args, but %r quotes as JSON does (the TypeScript runtime's messages match)."""
    values = iter(args)

    def one(m: Any) -> str:
        spec = m.group(0)
        if spec == "%%":
            return "%"
        v = next(values)
        if spec == "%r":
            return json.dumps(v)
        return str(v)

    return re.sub(r"%[rsd%]", one, template)
