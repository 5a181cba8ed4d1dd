"""The operation table, keyed by Python method name."""

from typing import Any, Dict, List

from .spec import SPEC

#: Every served operation, keyed by its Python method name.
OPERATIONS = {op["method"]: op for op in SPEC["operations"]}  # type: Dict[str, Dict[str, Any]]

#: Python method name for each AIR operation id.
BY_ID = {op["id"]: op["method"] for op in SPEC["operations"]}  # type: Dict[str, str]


def operation_names() -> List[str]:
    """The Python method names, in the order the service declares them."""
    return [op["method"] for op in SPEC["operations"]]
