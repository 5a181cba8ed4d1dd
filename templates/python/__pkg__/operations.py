"""The operation table, keyed by Python method name."""

from typing import Any, Dict, List, Optional

from .spec import SPEC

#: Every served operation, keyed by its Python method name.
OPERATIONS = {op["method"]: op for op in SPEC["operations"]}  # type: Dict[str, Dict[str, Any]]

#: Python method name for each AIR operation id.
BY_ID = {op["id"]: op["method"] for op in SPEC["operations"]}  # type: Dict[str, str]


#: Python method name for each tool name (without the connector prefix).
BY_TOOL = {op["tool"]: op["method"] for op in SPEC["operations"]}  # type: Dict[str, str]


def method_for(name: str, connector: Optional[str]) -> Optional[str]:
    """The Python method an operation name means, or None.

    The name is a Python method name, an AIR id, or a tool name: bare, or as
    the gateway and its effect reports name it, ``<connector>__<tool>`` (only
    under this client's connector: another connector's tool is not this
    client's to call).
    """
    if name in OPERATIONS:
        return name
    if name in BY_ID:
        return BY_ID[name]
    if connector and name.startswith(connector + "__"):
        name = name[len(connector) + 2 :]
    elif "__" in name:
        return None
    return BY_TOOL.get(name)


def operation_names() -> List[str]:
    """The Python method names, in the order the service declares them."""
    return [op["method"] for op in SPEC["operations"]]
