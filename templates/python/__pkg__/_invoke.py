"""One call: local gates, then the gateway, then the result."""

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
