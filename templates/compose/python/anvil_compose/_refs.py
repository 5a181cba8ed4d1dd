"""References inside a flow: ref(step, path), item(path) and when-conditions.

In a flow document they are JSON objects: ``{"$ref": step, "path": p}``,
``{"$item": p}`` and ``{"$ref": step, "path": p, "equals" | "exists" | "truthy": v}``.
"""

import copy
from typing import Any, Dict, Iterator, List, Optional

from ._errors import ComposeError, fmt
from ._paths import valid_path


class Cond:
    """A when-condition on an earlier step's result."""

    __slots__ = ("step", "path", "kind", "value")

    def __init__(self, step: str, path: Optional[str], kind: str, value: Any) -> None:
        self.step = step
        self.path = path
        self.kind = kind
        self.value = value

    def to_json(self) -> Dict[str, Any]:
        doc = {"$ref": self.step}  # type: Dict[str, Any]
        if self.path:
            doc["path"] = self.path
        doc[self.kind] = copy.deepcopy(self.value)
        return doc

    def __repr__(self) -> str:
        return "Cond(%r, %r, %s=%r)" % (self.step, self.path, self.kind, self.value)


class Ref:
    """A value read from an earlier step's result: ``ref(step, "items[0].id")``."""

    __slots__ = ("step", "path")

    def __init__(self, step: str, path: Optional[str] = None) -> None:
        self.step = step
        self.path = path or None

    def ref(self, path: Optional[str] = None) -> "Ref":
        """A reference into this one: ``handle.ref("number")``."""
        _check(path)
        if not path:
            return Ref(self.step, self.path)
        if not self.path:
            return Ref(self.step, path)
        return Ref(self.step, self.path + (path if path.startswith("[") else "." + path))

    def __getitem__(self, key: Any) -> "Ref":
        if isinstance(key, int):
            return self.ref("[%d]" % key)
        return self.ref(str(key))

    def equals(self, value: Any) -> Cond:
        """Holds when the value equals ``value``."""
        return Cond(self.step, self.path, "equals", value)

    def exists(self) -> Cond:
        """Holds when the path names a value that is not null."""
        return Cond(self.step, self.path, "exists", True)

    def truthy(self) -> Cond:
        """Holds when the value is truthy (not null, false, 0, "", [] or {})."""
        return Cond(self.step, self.path, "truthy", True)

    def to_json(self) -> Dict[str, Any]:
        doc = {"$ref": self.step}  # type: Dict[str, Any]
        if self.path:
            doc["path"] = self.path
        return doc

    def __repr__(self) -> str:
        return "ref(%r, %r)" % (self.step, self.path) if self.path else "ref(%r)" % self.step


class StepHandle(Ref):
    """What Flow.step and Flow.map return: a reference to the step's whole result."""

    __slots__ = ()

    @property
    def id(self) -> str:
        return self.step

    def __repr__(self) -> str:
        return "<step %r>" % self.step


class Item:
    """The current element of a map step: ``item("number")``."""

    __slots__ = ("path",)

    def __init__(self, path: Optional[str] = None) -> None:
        self.path = path or ""

    def to_json(self) -> Dict[str, Any]:
        return {"$item": self.path}

    def __repr__(self) -> str:
        return "item(%r)" % self.path


class Placeholder(str):
    """A value a dry run cannot know yet: ``"<step.path>"``."""


def stand_in(json_type: str, placeholder: "Placeholder") -> Any:
    """A dry run's value for an input of json_type: the placeholder text, or a value of that type."""
    return {"integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}.get(json_type, str(placeholder))


def _check(path: Any) -> None:
    if path is not None and not valid_path(path):
        raise ComposeError("invalid_path", fmt("%r is not a path (dotted names and [n] indices).", path), {"path": path})


def ref(step: Any, path: Optional[str] = None) -> Ref:
    """A reference to an earlier step's result (a step id or handle), at path."""
    _check(path)
    if isinstance(step, Ref):
        return step.ref(path)
    if not isinstance(step, str) or not step:
        raise ComposeError("invalid_flow", "ref() takes a step id or the handle step() returned.")
    return Ref(step, path)


def item(path: Optional[str] = None) -> Item:
    """The current element of a map step, at path (the whole element by default)."""
    if path is not None and not isinstance(path, str):
        raise ComposeError("invalid_flow", "item() takes a path string.")
    _check(path)
    return Item(path)


def encode(value: Any) -> Any:
    """The flow-document (JSON) form of a value that may hold refs, items and conditions."""
    if isinstance(value, (Ref, Item, Cond)):
        return value.to_json()
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    return copy.deepcopy(value)


def is_ref(value: Any) -> bool:
    return isinstance(value, dict) and "$ref" in value


def is_item(value: Any) -> bool:
    return isinstance(value, dict) and "$item" in value and "$ref" not in value


def walk(value: Any) -> Iterator[Dict[str, Any]]:
    """Every ``$ref`` and ``$item`` object inside value, in document order."""
    if is_ref(value) or is_item(value):
        yield value
        return
    if isinstance(value, dict):
        for v in value.values():
            for found in walk(v):
                yield found
    elif isinstance(value, list):
        for v in value:
            for found in walk(v):
                yield found


def refs_in(value: Any) -> List[Dict[str, Any]]:
    return [r for r in walk(value) if is_ref(r)]


def items_in(value: Any) -> List[Dict[str, Any]]:
    return [r for r in walk(value) if is_item(r)]
