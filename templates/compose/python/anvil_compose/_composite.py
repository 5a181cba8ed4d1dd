"""Composite: one client over every composed connector's own SDK."""

import copy
import importlib.util
import inspect
import json
import os
import re
import sys
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from ._errors import ComposeError, error_json, fmt
from ._flow import Flow, Run
from ._refs import Placeholder, stand_in

CATALOG_SCHEMA = "anvil.compose-catalog/v1"

_HERE = os.path.dirname(os.path.abspath(__file__))
# The catalog's python paths are relative to the composite's directory (<out>/python/anvil_compose/..).
_ROOT = os.path.dirname(os.path.dirname(_HERE))

_KEYWORDS = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
    "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "self", "match",
    "case", "type", "print",
}


def load_catalog() -> Dict[str, Any]:
    """The composite's catalog (``anvil.compose-catalog/v1``)."""
    with open(os.path.join(_HERE, "catalog.json"), "r", encoding="utf-8") as f:
        catalog = json.load(f)
    if catalog.get("schema") != CATALOG_SCHEMA:
        raise ComposeError("invalid_flow", "catalog.json is not %s." % CATALOG_SCHEMA)
    return catalog


def _env_name(cid: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", cid.upper())


def _snake(name: str) -> str:
    words = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", name)
    out = "_".join(w.lower() for w in words) or "value"
    if out[0].isdigit():
        out = "_" + out
    if out in _KEYWORDS:
        out += "_"
    return out


def _accepts(fn: Any, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())


class Composite:
    """One client over every composed connector.

    Each connector's SDK package is loaded under the module name
    ``_anvil_compose__<connector>``, so two connectors built from one service
    (two accounts, two ids) stay apart, and its client is built with
    ``gateway_connector=<connector>`` plus ``options`` (and that connector's
    own options from ``connectors={id: {...}}``). Outside gateway mode
    ``ANVIL_<CONNECTOR>_BASE_URL`` sets ``base_url`` where the client takes one.

    Every call is that SDK's own method: confirmation, idempotency, dry run,
    gateway mode and the branch's grant apply unchanged.
    """

    def __init__(self, connectors: Union[None, Dict[str, Any], Iterable[str]] = None, **options: Any) -> None:
        self._catalog = load_catalog()
        by_id = {c["id"]: c for c in self._catalog["connectors"]}
        per = {}  # type: Dict[str, Dict[str, Any]]
        if connectors is None:
            per = {cid: {} for cid in by_id}
        else:
            if isinstance(connectors, str):
                connectors = [connectors]
            items = connectors.items() if isinstance(connectors, dict) else ((c, None) for c in connectors)
            for cid, opts in items:
                if cid not in by_id:
                    raise ComposeError("unknown_connector", fmt("No connector %r in this composite (it has: %s).",
                        cid, ", ".join(by_id)), {"connector": cid})
                if opts is not None and not isinstance(opts, dict):
                    raise ComposeError("invalid_flow", fmt("The options of connector %r must be a dict.", cid))
                per[cid] = dict(opts or {})
        self._conns = {cid: by_id[cid] for cid in by_id if cid in per}
        self._per = per
        self._options = options
        self._ops = {cid: {op["id"]: op for op in c["operations"]} for cid, c in self._conns.items()}
        self._modules = {}  # type: Dict[str, Any]
        self._clients = {}  # type: Dict[str, Any]
        self._types = None  # type: Optional[Dict[str, Any]]

    def __repr__(self) -> str:
        return "Composite(%s)" % ", ".join(self._conns)

    # The catalog -------------------------------------------------------------

    def connectors(self) -> List[Dict[str, Any]]:
        """``[{id, title, service, operations}]`` for every connector of this composite."""
        return [
            {"id": c["id"], "title": c["title"], "service": dict(c["service"]), "operations": len(c["operations"])}
            for c in self._conns.values()
        ]

    def operations(self, connector: Optional[str] = None) -> List[Dict[str, Any]]:
        """Every callable operation (of one connector, when given) as the catalog describes it."""
        if connector is not None and connector not in self._conns:
            raise self._unknown_connector(connector)
        out = []
        for cid, c in self._conns.items():
            if connector is not None and cid != connector:
                continue
            for op in c["operations"]:
                entry = {"connector": cid, "qualified": "%s:%s" % (cid, op["id"])}
                entry.update(copy.deepcopy(op))
                out.append(entry)
        return out

    def describe(self) -> str:
        """A plain-text summary of the connectors and their operations."""
        lines = ["Composite over %d connector(s)." % len(self._conns)]
        for cid, c in self._conns.items():
            lines.append("")
            lines.append("%s: %s (%d operation(s))" % (cid, c["title"], len(c["operations"])))
            for op in c["operations"]:
                inputs = ", ".join(i["key"] + ("" if i["required"] else "?") for i in op["inputs"])
                effect = "read" if op["effect"] == "read" else "write, " + op["effectClass"]
                notes = []
                if op["confirm"]:
                    notes.append("needs confirm")
                if op.get("undo"):
                    notes.append("undo: %s %s" % (op["undo"]["kind"], op["undo"]["operation"]))
                for n in op.get("needs") or []:
                    notes.append("%s from %s" % (n["argument"], " or ".join(p["operation"] for p in n["from"])))
                lines.append("  %s(%s) — %s%s" % (op["id"], inputs, effect, "; " + "; ".join(notes) if notes else ""))
        return "\n".join(lines) + "\n"

    def _unknown_connector(self, cid: Any) -> ComposeError:
        return ComposeError("unknown_connector", fmt("No connector %r in this composite (it has: %s).",
            cid, ", ".join(self._conns) or "none"), {"connector": cid})

    def _lookup(self, op: Any, connector: Optional[str] = None) -> Tuple[str, Dict[str, Any]]:
        if not isinstance(op, str) or not op:
            raise ComposeError("unknown_operation", fmt("An operation is named by its AIR id, not %r.", op))
        if ":" in op:
            prefix, op = op.split(":", 1)
            if connector is not None and connector != prefix:
                raise ComposeError("unknown_connector", fmt("The step names connector %r but its operation says %r.",
                    connector, prefix), {"connector": connector})
            connector = prefix
        if connector is not None:
            if connector not in self._conns:
                raise self._unknown_connector(connector)
            entry = self._ops[connector].get(op)
            if entry is None:
                raise ComposeError("unknown_operation", fmt("Connector %r has no operation %r.", connector, op),
                                   {"connector": connector, "operation": op})
            return connector, entry
        matches = [(cid, ops[op]) for cid, ops in self._ops.items() if op in ops]
        if not matches:
            raise ComposeError("unknown_operation", fmt("No connector of this composite has operation %r.", op),
                               {"operation": op})
        if len(matches) > 1:
            cids = [cid for cid, _ in matches]
            raise ComposeError("ambiguous_operation", fmt("%r is an operation of %s: name its connector (\"<connector>:%s\").",
                op, " and ".join(cids), op), {"operation": op, "connectors": cids})
        return matches[0]

    def resolve(self, op: str, connector: Optional[str] = None) -> Dict[str, Any]:
        """The catalog entry of an operation id (or ``"connector:operation"``), with its connector."""
        cid, entry = self._lookup(op, connector)
        out = {"connector": cid, "qualified": "%s:%s" % (cid, entry["id"])}
        out.update(copy.deepcopy(entry))
        return out

    # The SDKs -------------------------------------------------------------------

    def _module(self, cid: str) -> Any:
        if cid in self._modules:
            return self._modules[cid]
        conn = self._conns[cid]
        pkg_dir = os.path.normpath(os.path.join(_ROOT, conn["python"]["path"], conn["python"]["package"]))
        init = os.path.join(pkg_dir, "__init__.py")
        if not os.path.isfile(init):
            raise ComposeError("connector_missing", fmt("The SDK of connector %r is not at %s.", cid, pkg_dir), {"connector": cid})
        alias = "_anvil_compose__" + cid
        module = sys.modules.get(alias)
        if module is None or os.path.normpath(os.path.abspath(getattr(module, "__file__", "") or "")) != os.path.normpath(os.path.abspath(init)):
            spec = importlib.util.spec_from_file_location(alias, init, submodule_search_locations=[pkg_dir])
            if spec is None or spec.loader is None:
                raise ComposeError("connector_missing", fmt("The SDK of connector %r cannot be loaded from %s.", cid, pkg_dir),
                                   {"connector": cid})
            module = importlib.util.module_from_spec(spec)
            sys.modules[alias] = module
            try:
                spec.loader.exec_module(module)
            except Exception as exc:
                del sys.modules[alias]
                raise ComposeError("connector_missing", fmt("The SDK of connector %r failed to load: %s", cid, exc),
                                   {"connector": cid})
        self._modules[cid] = module
        return module

    def client(self, cid: str) -> Any:
        """The SDK client of a connector (built on first use)."""
        if cid not in self._conns:
            raise self._unknown_connector(cid)
        if cid in self._clients:
            return self._clients[cid]
        module = self._module(cid)
        name = self._conns[cid]["python"]["client"]
        cls = getattr(module, name, None)
        if cls is None:
            raise ComposeError("connector_missing", fmt("The SDK of connector %r has no %s.", cid, name), {"connector": cid})
        kwargs = dict(self._options)
        kwargs.update(self._per.get(cid) or {})
        kwargs["gateway_connector"] = cid
        gateway = kwargs.get("gateway_url") or os.environ.get("ANVIL_GATEWAY_URL")
        if not gateway and "base_url" not in kwargs:
            base = os.environ.get("ANVIL_%s_BASE_URL" % _env_name(cid))
            if base and _accepts(cls, "base_url"):
                kwargs["base_url"] = base
        client = cls(**kwargs)
        self._clients[cid] = client
        return client

    def _names(self, cid: str, entry: Dict[str, Any]) -> Tuple[Dict[str, str], Dict[str, str]]:
        """The SDK method's keyword for each input key, and for each safety control."""
        spec = None
        table = getattr(self._module(cid), "OPERATIONS", None)
        if isinstance(table, dict):
            spec = table.get(entry["method"]["python"])
        inputs = {}
        controls = {
            "confirm": entry["safety"]["confirm"],
            "idempotency_key": entry["safety"]["idempotencyKey"],
            "dry_run": entry["safety"]["dryRun"],
        }
        if isinstance(spec, dict):
            for i in spec.get("inputs") or []:
                if isinstance(i, dict) and "key" in i and "name" in i:
                    inputs[i["key"]] = i["name"]
            if isinstance(spec.get("controls"), dict):
                for k in controls:
                    controls[k] = spec["controls"].get(k, controls[k])
        for i in entry["inputs"]:
            inputs.setdefault(i["key"], _snake(i["key"]))
        return inputs, controls

    def _normalize(self, entry: Dict[str, Any], args: Dict[str, Any]) -> Dict[str, Any]:
        """args by input key (an input may be named by its key or its wire name)."""
        by_key = {i["key"]: i for i in entry["inputs"]}
        by_wire = {i["wire"]: i for i in entry["inputs"]}
        out = {}
        for name, value in args.items():
            i = by_key.get(name) or by_wire.get(name)
            if i is None:
                raise ComposeError("unknown_input", fmt("%s takes no input %r.", entry["id"], name),
                                   {"operation": entry["id"], "input": name})
            out[i["key"]] = value
        return out

    def _invoke(self, cid: str, entry: Dict[str, Any], args: Dict[str, Any], confirm: bool,
                idempotency_key: Any, dry_run: bool) -> Tuple[Dict[str, Any], Any]:
        """One call through the SDK's own method; returns (the request by input key, the result)."""
        if not isinstance(args, dict):
            raise ComposeError("invalid_flow", "The arguments of %s must be an object." % entry["id"])
        request = self._normalize(entry, args)
        if dry_run:
            for k, v in request.items():
                if isinstance(v, Placeholder):
                    request[k] = stand_in(self._input_type(cid, entry["id"], k), v)
        client = self.client(cid)
        method = getattr(client, entry["method"]["python"], None)
        if not callable(method):
            raise ComposeError("connector_missing", fmt("The SDK of connector %r has no method %s.",
                cid, entry["method"]["python"]), {"connector": cid})
        names, controls = self._names(cid, entry)
        kwargs = {names[k]: v for k, v in request.items()}
        kwargs[controls["confirm"]] = bool(confirm)
        if idempotency_key is not None:
            kwargs[controls["idempotency_key"]] = str(idempotency_key)
        if dry_run:
            kwargs[controls["dry_run"]] = True
        result = method(**kwargs)
        return {k: v for k, v in request.items() if v is not None}, result

    def _input_type(self, cid: str, op: str, key: str) -> str:
        if self._types is None:
            try:
                with open(os.path.join(_HERE, "input_types.json"), "r", encoding="utf-8") as f:
                    self._types = json.load(f)
            except (OSError, ValueError):
                self._types = {}
        return ((self._types.get(cid) or {}).get(op) or {}).get(key) or ""

    def call(self, op: str, args: Optional[Dict[str, Any]] = None, *, connector: Optional[str] = None,
             confirm: bool = False, idempotency_key: Optional[str] = None, dry_run: bool = False) -> Any:
        """Call one operation (an AIR id, or ``"connector:operation"``) through its SDK."""
        cid, entry = self._lookup(op, connector)
        return self._invoke(cid, entry, dict(args or {}), confirm, idempotency_key, dry_run)[1]

    # Flows ----------------------------------------------------------------------

    def flow(self, name: str) -> Flow:
        """A new, empty flow."""
        return Flow(self, name)

    def load(self, source: Any) -> Flow:
        """A flow from an ``anvil.compose-flow/v1`` document: a dict, a JSON string, or a file path."""
        doc = source
        if isinstance(source, (bytes, bytearray)):
            source = source.decode("utf-8")
        if isinstance(source, str) and source.lstrip().startswith("{"):
            try:
                doc = json.loads(source)
            except ValueError as exc:
                raise ComposeError("invalid_flow", "The flow is not valid JSON: %s" % exc)
        elif isinstance(source, (str, os.PathLike)):
            try:
                with open(source, "r", encoding="utf-8") as f:
                    doc = json.load(f)
            except OSError as exc:
                raise ComposeError("invalid_flow", "The flow file cannot be read: %s" % exc)
            except ValueError as exc:
                raise ComposeError("invalid_flow", "The flow file is not valid JSON: %s" % exc)
        return Flow.from_json(self, doc)

    def compensate(self, run: Any, *, confirm: bool = False, dry_run: bool = False) -> List[Dict[str, Any]]:
        """Make the undo calls a failed run lists, newest first.

        Each is an ordinary call under the same grant, passing ``confirm`` as
        given: without it an undo that needs confirmation is refused by the
        SDK's own gate. One outcome per entry: the entry plus ``status`` "ok"
        and ``result``, "failed" and ``error``, or "not_undoable".
        """
        entries = run.compensation if isinstance(run, Run) else (run or {}).get("compensation")
        if not isinstance(entries, list):
            raise ComposeError("invalid_flow", "compensate() takes a run (or its to_json()).")
        outcomes = []
        for entry in entries:
            out = copy.deepcopy(entry)
            undo = entry.get("undo") if isinstance(entry, dict) else None
            if not undo:
                out["status"] = "not_undoable"
                outcomes.append(out)
                continue
            try:
                out["result"] = self.call(undo["operation"], undo["arguments"], connector=entry["connector"],
                                          confirm=confirm, dry_run=dry_run)
                out["status"] = "ok"
            except Exception as exc:  # each undo is reported, whatever happened
                out.pop("result", None)
                out["status"] = "failed"
                out["error"] = error_json(exc)
            outcomes.append(_ordered(out))
        return outcomes


def _ordered(out: Dict[str, Any]) -> Dict[str, Any]:
    """The entry's own keys, then status, then result or error."""
    tail = {k: out.pop(k) for k in ("status", "result", "error") if k in out}
    out.update(tail)
    return out
