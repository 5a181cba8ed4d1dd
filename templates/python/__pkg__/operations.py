"""The operation table, keyed by Python method name.

The table is built from spec.py the first time it is used, not when the
package is imported: a large API's table takes longer to load than the rest
of the package together. OPERATIONS, BY_ID and BY_TOOL are attributes of
this module that load it (PEP 562).
"""

from typing import Any, Dict, List, Optional

_TABLES = {}  # type: Dict[str, Dict[str, Any]]


def _load() -> Dict[str, Dict[str, Any]]:
    if not _TABLES:
        from .spec import SPEC

        operations = SPEC["operations"]
        # Every served operation, keyed by its Python method name.
        _TABLES["OPERATIONS"] = {op["method"]: op for op in operations}
        # Python method name for each AIR operation id.
        _TABLES["BY_ID"] = {op["id"]: op["method"] for op in operations}
        # Python method name for each tool name (without the connector prefix).
        _TABLES["BY_TOOL"] = {op["tool"]: op["method"] for op in operations}
        globals().update(_TABLES)
    return _TABLES


def __getattr__(name: str) -> Any:
    if name in ("OPERATIONS", "BY_ID", "BY_TOOL"):
        return _load()[name]
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def operation(method: str) -> Dict[str, Any]:
    """The table entry of a Python method name (KeyError when there is none)."""
    return _load()["OPERATIONS"][method]


def method_for(name: str, connector: Optional[str]) -> Optional[str]:
    """The Python method an operation name means, or None.

    The name is a Python method name, an AIR id, or a tool name: bare, or as
    the gateway and its effect reports name it, ``<connector>__<tool>`` (only
    under this client's connector: another connector's tool is not this
    client's to call).
    """
    tables = _load()
    if name in tables["OPERATIONS"]:
        return name
    if name in tables["BY_ID"]:
        return tables["BY_ID"][name]
    if connector and name.startswith(connector + "__"):
        name = name[len(connector) + 2 :]
    elif "__" in name:
        return None
    return tables["BY_TOOL"].get(name)


def operation_names() -> List[str]:
    """The Python method names, in the order the service declares them."""
    return list(_load()["OPERATIONS"])
