"""One call: local gates, then the gateway, then the result."""

import time
from typing import Any, Dict, Iterator, Optional

from ._dry_run import DRY_RUN_ARG
from ._transport import decode_tool_result
from ._safety import check_confirmation, resolve_idempotency_key
from .errors import AnvilError
from .operations import operation


def invoke(
    client: Any,
    method: str,
    arguments: Dict[str, Any],
    *,
    confirm: bool = False,
    idempotency_key: Optional[str] = None,
    dry_run: bool = False,
    stage: bool = False,
    headers: Optional[Dict[str, str]] = None,
    timeout: Optional[float] = None,
) -> Any:
    """Call the operation behind a Python method with tool-input arguments.

    stage=True asks the gateway for the operation's draft form (``_meta.stage``).
    """
    op = operation(method)
    args = {key: value for key, value in arguments.items() if value is not None}
    check_confirmation(op, confirm)
    key = resolve_idempotency_key(op, idempotency_key, args)
    transport = client._gateway
    if transport is None:
        raise AnvilError(
            "validation_error",
            "ANVIL_GATEWAY_URL is not set; this client calls operations only through the Anvil gateway.",
            operation=op["id"],
            details={"code": "sdk/gateway_url_unset"},
        )
    call_args = dict(args)
    if op["confirm_key"] and confirm:
        call_args[op["confirm_key"]] = True
    carrier = op["idempotency"]["input"]
    if key is not None and carrier:
        call_args[carrier] = key
    if dry_run:
        call_args[DRY_RUN_ARG] = True
    client.last_effect = None
    retries = getattr(client, "max_retries", 0) if retry_allowed(op, key) else 0
    attempt = 0
    while True:
        try:
            result = transport.call_tool(
                transport.connector + "__" + op["tool"],
                call_args,
                meta={"stage": True} if stage else None,
                operation=op["id"],
                headers=headers,
                timeout=timeout,
            )
            meta = result.get("_meta")
            if isinstance(meta, dict) and isinstance(meta.get("effect"), dict):
                client.last_effect = meta["effect"]
            return decode_tool_result(result, op["id"])
        except AnvilError as err:
            if attempt >= retries or not err.retryable or err.code not in RETRIED_CODES:
                raise
            time.sleep(retry_delay(attempt, err.retry_after_ms))
            attempt += 1


#: The codes a call is retried on: the gateway or upstream was busy or did
#: not answer, so the same call may succeed later.
RETRIED_CODES = ("rate_limited", "upstream_unavailable", "upstream_timeout")

#: The first backoff and its cap, in seconds (doubling: 0.5, 1, 2, 4, 8, 8, ...).
RETRY_BASE_DELAY = 0.5
RETRY_MAX_DELAY = 8.0
#: The longest Retry-After (retry_after_ms) the client waits for before a retry.
RETRY_AFTER_CAP = 60.0


def retry_allowed(op: Dict[str, Any], key: Optional[str]) -> bool:
    """Whether a failed call of op may be sent again: a read, or a write
    whose idempotency key goes upstream (so a repeat is deduplicated there)."""
    if op["kind"] == "read":
        return True
    return key is not None and bool(op["idempotency"]["input"])


def retry_delay(attempt: int, retry_after_ms: Optional[int]) -> float:
    """Seconds to wait before retry number attempt+1: the gateway's
    retry_after_ms when it gave one (capped at RETRY_AFTER_CAP), else
    exponential backoff from RETRY_BASE_DELAY up to RETRY_MAX_DELAY."""
    if retry_after_ms is not None and retry_after_ms >= 0:
        return min(retry_after_ms / 1000.0, RETRY_AFTER_CAP)
    return min(RETRY_BASE_DELAY * (2 ** attempt), RETRY_MAX_DELAY)


def paginate_keywords(
    client: Any, method: str, style: str, param: str, next_field: str, items_field: str, kwargs: Dict[str, Any]
) -> Iterator[Any]:
    """Yield every page of a ``<method>_paginated(**kwargs)`` call.

    kwargs are the paginated method's keyword arguments: the operation's
    Python input names and its safety controls, as its plain method takes them.
    """
    op = operation(method[: -len("_paginated")])
    controls = {}  # type: Dict[str, Any]
    for name, arg in op["controls"].items():
        if arg in kwargs:
            controls[name] = kwargs.pop(arg)
    names = {item["name"]: item["key"] for item in op["inputs"]}
    unknown = [name for name in kwargs if name not in names]
    if unknown:
        raise AnvilError("validation_error", "Unknown argument(s): %s." % ", ".join(sorted(unknown)), operation=op["id"])
    arguments = {names[name]: value for name, value in kwargs.items()}
    return paginate(client, op["method"], arguments, style, param, next_field, items_field, **controls)


def _path(value: Any, path: str) -> Any:
    for part in path.split(".") if path else []:
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def paginate(
    client: Any,
    method: str,
    arguments: Dict[str, Any],
    style: str,
    param: str,
    next_field: str,
    items_field: str,
    **controls: Any
) -> Iterator[Any]:
    """Yield every page of a paginated operation."""
    args = dict(arguments)
    page = args.get(param) if style != "cursor" else None
    while True:
        result = invoke(client, method, args, **controls)
        yield result
        if style == "cursor":
            cursor = _path(result, next_field)
            if not cursor:
                return
            args[param] = cursor
        else:
            items = _path(result, items_field) if items_field else result
            if not items:
                return
            if style == "offset":
                page = (page or 0) + (len(items) if isinstance(items, list) else 1)
            else:
                page = (page or 1) + 1
            args[param] = page
