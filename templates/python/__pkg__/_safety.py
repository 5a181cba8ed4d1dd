"""Local safety gates: they run before anything is sent to the gateway."""

import hashlib
import json
from typing import Any, Dict, Optional

from .errors import AnvilError


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys, the form idempotency keys are derived from."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def derive_idempotency_key(operation_id: str, arguments: Dict[str, Any]) -> str:
    """``anvil-`` + the first 32 hex characters of sha256(id + NUL + canonical JSON)."""
    digest = hashlib.sha256((operation_id + "\0" + canonical_json(arguments)).encode("utf-8")).hexdigest()
    return "anvil-" + digest[:32]


def check_confirmation(op: Dict[str, Any], confirm: bool) -> None:
    """Refuse a confirmation-gated operation called without confirm=True."""
    if op["confirm"] and not confirm:
        arg = op["confirm_arg"]
        raise AnvilError(
            "confirmation_required",
            "%s needs confirmation: pass %s=True only when the task really asks for this change."
            % (op["id"], arg),
            operation=op["id"],
            required_arguments=[arg],
            details={"code": "sdk/confirmation_required"},
        )


def resolve_idempotency_key(
    op: Dict[str, Any], key: Optional[str], arguments: Dict[str, Any]
) -> Optional[str]:
    """The key for this call: the caller's, a derived one, or None.

    Raises idempotency_required when the operation needs a caller key and
    none was given.
    """
    idem = op["idempotency"]
    if key is not None:
        if not isinstance(key, str) or not key:
            raise AnvilError(
                "validation_error",
                "%s must be a non-empty string." % op["idempotency_arg"],
                operation=op["id"],
                details={"code": "sdk/invalid_idempotency_key"},
            )
        return key
    if idem["key_required"]:
        arg = op["idempotency_arg"]
        raise AnvilError(
            "idempotency_required",
            "%s needs an idempotency key: pass %s=." % (op["id"], arg),
            operation=op["id"],
            required_arguments=[arg],
            details={"code": "sdk/idempotency_required"},
        )
    if idem["key_derived"]:
        return derive_idempotency_key(op["id"], arguments)
    return None
