"""Paths into results: dotted names and [n] indices."""

import re
from typing import Any, List, Optional, Tuple, Union

_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")
_INDEX = re.compile(r"\[([0-9]+)\]")

Segment = Union[str, int]


def parse_path(path: Optional[str]) -> List[Segment]:
    """Split ``items[0].id`` into ``["items", 0, "id"]``; ``""`` or None is the whole value.

    Raises ValueError for anything that does not parse.
    """
    if path is None or path == "":
        return []
    if not isinstance(path, str):
        raise ValueError("a path is a string")
    segments = []  # type: List[Segment]
    i = 0
    first = True
    while i < len(path):
        m = _INDEX.match(path, i)
        if m:
            segments.append(int(m.group(1)))
            i = m.end()
            first = False
            continue
        if not first:
            if path[i] != ".":
                raise ValueError("unexpected %r at %d in %r" % (path[i], i, path))
            i += 1
        m = _NAME.match(path, i)
        if not m:
            raise ValueError("expected a name at %d in %r" % (i, path))
        segments.append(m.group(0))
        i = m.end()
        first = False
    return segments


def valid_path(path: Any) -> bool:
    """Whether path parses (None and "" do)."""
    try:
        parse_path(path)
    except ValueError:
        return False
    return True


def lookup(value: Any, path: Optional[str]) -> Tuple[bool, Any]:
    """``(True, v)`` for the value at path, ``(False, None)`` when it names nothing."""
    for seg in parse_path(path):
        if isinstance(seg, int):
            if isinstance(value, list) and 0 <= seg < len(value):
                value = value[seg]
                continue
            return False, None
        if isinstance(value, dict) and seg in value:
            value = value[seg]
            continue
        return False, None
    return True, value


def join(base: str, path: Optional[str]) -> str:
    """``base`` followed by path: ``issues.number``, ``issues[0]``."""
    if not path:
        return base
    if path.startswith("["):
        return base + path
    return base + "." + path
