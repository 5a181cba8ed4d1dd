"""Flows: DAGs of connector calls, with plan, validate, dry run, run and compensate."""

import copy
from typing import Any, Dict, List, Optional, Set, Tuple

from ._errors import ComposeError, error_json, fmt
from ._paths import join, lookup, valid_path
from ._refs import Cond, Placeholder, Ref, StepHandle, encode, is_item, is_ref, items_in, refs_in

FLOW_SCHEMA = "anvil.compose-flow/v1"
PLAN_SCHEMA = "anvil.compose-plan/v1"
RUN_SCHEMA = "anvil.compose-run/v1"

_CONDITIONS = ("equals", "exists", "truthy")


def _finding(level: str, code: str, step: Optional[str], message: str) -> Dict[str, Any]:
    return {"level": level, "code": code, "step": step, "message": message}


class Run:
    """The outcome of Flow.run() or Flow.dry_run().

    Attributes:
        flow: the flow's name.
        dry_run: whether every call was a dry run.
        status: "succeeded", "failed" or "refused" (the flow had an error finding; nothing was sent).
        ok: status == "succeeded".
        order: the step ids in the order they were run.
        failed_step: the id of the first step that failed, or None.
        error: ``{code, message, details}`` of that failure (or of the refusal), or None.
        steps: per step id: ``{operation, connector, status, result?, error?, calls_completed?}``.
        compensation: after a failed run, every completed write call newest first with its
            undo (``{step, call, connector, operation, effect_class, undo}``) or the
            ``reason`` it has none. Nothing is undone unless you call compensate().
    """

    def __init__(self, flow: str, dry_run: bool) -> None:
        self.flow = flow
        self.dry_run = dry_run
        self.status = "succeeded"
        self.order = []  # type: List[str]
        self.failed_step = None  # type: Optional[str]
        self.error = None  # type: Optional[Dict[str, Any]]
        self.steps = {}  # type: Dict[str, Dict[str, Any]]
        self.compensation = []  # type: List[Dict[str, Any]]

    @property
    def ok(self) -> bool:
        return self.status == "succeeded"

    @property
    def results(self) -> Dict[str, Any]:
        """The result of every step that ran."""
        return {sid: s["result"] for sid, s in self.steps.items() if s["status"] == "ok"}

    def to_json(self) -> Dict[str, Any]:
        """The run as ``anvil.compose-run/v1``."""
        steps = {}
        for sid, s in self.steps.items():
            out = {"operation": s["operation"], "connector": s["connector"], "status": s["status"]}
            for key in ("result", "error", "calls_completed"):
                if key in s:
                    out[key] = s[key]
            steps[sid] = out
        return copy.deepcopy(
            {
                "schema": RUN_SCHEMA,
                "flow": self.flow,
                "dry_run": self.dry_run,
                "status": self.status,
                "order": self.order,
                "failed_step": self.failed_step,
                "error": self.error,
                "steps": steps,
                "compensation": self.compensation,
            }
        )

    def __repr__(self) -> str:
        return fmt("<Run %r %s%s>", self.flow, self.status, " (dry run)" if self.dry_run else "")


class Flow:
    """A DAG of operation calls over a Composite's connectors. Nothing is sent until run()."""

    def __init__(self, composite: Any, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ComposeError("invalid_flow", "A flow needs a name.")
        self.composite = composite
        self.name = name
        self._steps = []  # type: List[Dict[str, Any]]
        self._ids = set()  # type: Set[str]

    # Building ------------------------------------------------------------

    @property
    def steps(self) -> List[Dict[str, Any]]:
        """The steps in their document form."""
        return copy.deepcopy(self._steps)

    def step(
        self,
        id: str,
        op: str,
        args: Optional[Dict[str, Any]] = None,
        *,
        connector: Optional[str] = None,
        after: Any = None,
        when: Any = None,
        confirm: bool = False,
        idempotency_key: Any = None,
        **kw: Any
    ) -> StepHandle:
        """One call of operation op. Extra keywords are inputs too: ``step("a", op, owner="o")``.

        An input that is ``ref(step, path)`` depends on that step; ``after=`` adds
        ordering-only edges; ``when=ref(...).equals(v)`` skips the step unless it holds.
        """
        merged = self._args(id, args)
        merged.update(encode(kw))
        return self._add(self._doc(id, op, merged, None, connector, after, when, confirm, idempotency_key))

    def map(
        self,
        id: str,
        op: str,
        over: Any,
        args: Optional[Dict[str, Any]] = None,
        *,
        connector: Optional[str] = None,
        after: Any = None,
        when: Any = None,
        confirm: bool = False,
        idempotency_key: Any = None
    ) -> StepHandle:
        """One call of op per element of the list ``over`` (a ref); ``item(path)`` reads the element.

        The step's result is the list of the calls' results.
        """
        if isinstance(over, Ref):
            over = over.to_json()
        if not is_ref(over):
            raise ComposeError("invalid_flow", fmt("map %r: over must be ref(step, path) or a step's handle.", id))
        return self._add(self._doc(id, op, self._args(id, args), over, connector, after, when, confirm, idempotency_key))

    def _args(self, id: Any, args: Any) -> Dict[str, Any]:
        if args is None:
            return {}
        if not isinstance(args, dict):
            raise ComposeError("invalid_flow", fmt("step %r: args must be a dict of inputs.", id))
        return encode(args)

    def _doc(self, id, op, args, over, connector, after, when, confirm, key) -> Dict[str, Any]:
        doc = {"id": id, "operation": op}  # type: Dict[str, Any]
        if connector is not None:
            doc["connector"] = connector
        doc["args"] = args
        if over is not None:
            doc["for_each"] = copy.deepcopy(over)
        if after is not None:
            items = after if isinstance(after, (list, tuple)) else [after]
            doc["after"] = [a.step if isinstance(a, Ref) else a for a in items]
        if when is not None:
            if isinstance(when, Ref) and not isinstance(when, Cond):
                when = when.truthy()
            doc["when"] = encode(when)
        if confirm:
            doc["confirm"] = True
        if key is not None:
            doc["idempotency_key"] = encode(key)
        return doc

    def _add(self, doc: Dict[str, Any]) -> StepHandle:
        sid = doc.get("id")
        if not isinstance(sid, str) or not sid:
            raise ComposeError("invalid_flow", "Every step needs an id (a non-empty string).")
        if not isinstance(doc.get("operation"), str) or not doc["operation"]:
            raise ComposeError("invalid_flow", fmt("Step %r needs an operation (an AIR operation id).", sid), {"step": sid})
        if sid in self._ids:
            raise ComposeError("duplicate_step", fmt("Step %r is defined twice.", sid), {"step": sid})
        for key in ("connector",):
            if key in doc and not isinstance(doc[key], str):
                raise ComposeError("invalid_flow", fmt("Step %r: %s must be a string.", sid, key), {"step": sid})
        if not isinstance(doc.get("args", {}), dict):
            raise ComposeError("invalid_flow", fmt("Step %r: args must be an object.", sid), {"step": sid})
        if "after" in doc and not (isinstance(doc["after"], list) and all(isinstance(a, str) for a in doc["after"])):
            raise ComposeError("invalid_flow", fmt("Step %r: after must be a list of step ids.", sid), {"step": sid})
        if "for_each" in doc and not is_ref(doc["for_each"]):
            raise ComposeError("invalid_flow", fmt("Step %r: for_each must be {\"$ref\": step}.", sid), {"step": sid})
        if "when" in doc and not isinstance(doc["when"], dict):
            raise ComposeError("invalid_flow", fmt("Step %r: when must be a condition object.", sid), {"step": sid})
        if "confirm" in doc and not isinstance(doc["confirm"], bool):
            raise ComposeError("invalid_flow", fmt("Step %r: confirm must be true or false.", sid), {"step": sid})
        key = doc.get("idempotency_key")
        if key is not None and not isinstance(key, str) and not is_ref(key) and not is_item(key):
            raise ComposeError("invalid_flow", fmt("Step %r: idempotency_key must be a string, ref() or item().", sid), {"step": sid})
        self._steps.append(doc)
        self._ids.add(sid)
        return StepHandle(sid)

    @classmethod
    def from_json(cls, composite: Any, doc: Any) -> "Flow":
        """Read an ``anvil.compose-flow/v1`` document."""
        if not isinstance(doc, dict):
            raise ComposeError("invalid_flow", "A flow document is a JSON object.")
        schema = doc.get("schema")
        if schema is not None and schema != FLOW_SCHEMA:
            raise ComposeError("invalid_flow", fmt("Expected schema %s, not %r.", FLOW_SCHEMA, schema))
        steps = doc.get("steps")
        if not isinstance(steps, list):
            raise ComposeError("invalid_flow", "A flow document lists its steps under \"steps\".")
        name = doc.get("name")
        flow = cls(composite, name if isinstance(name, str) and name else "flow")
        for i, s in enumerate(steps):
            if not isinstance(s, dict):
                raise ComposeError("invalid_flow", "Step %d is not an object." % i)
            if not isinstance(s.get("id"), str) or not s["id"]:
                raise ComposeError("invalid_flow", "Step %d has no id." % i)
            if not isinstance(s.get("operation"), str) or not s["operation"]:
                raise ComposeError("invalid_flow", fmt("Step %r has no operation.", s["id"]), {"step": s["id"]})
            d = {"id": s["id"], "operation": s["operation"]}  # type: Dict[str, Any]
            for key in ("connector",):
                if key in s and s[key] is not None:
                    d[key] = s[key]
            d["args"] = copy.deepcopy(s.get("args") if s.get("args") is not None else {})
            for key in ("for_each", "after", "when", "confirm", "idempotency_key"):
                if key in s and s[key] is not None:
                    d[key] = copy.deepcopy(s[key])
            if isinstance(d.get("after"), str):
                d["after"] = [d["after"]]
            if d.get("confirm") is False:
                del d["confirm"]
            flow._add(d)
        return flow

    def to_json(self) -> Dict[str, Any]:
        """The flow as ``anvil.compose-flow/v1``."""
        return {"schema": FLOW_SCHEMA, "name": self.name, "steps": copy.deepcopy(self._steps)}

    def __repr__(self) -> str:
        return fmt("<Flow %r (%d step(s))>", self.name, len(self._steps))

    # Reading the DAG -------------------------------------------------------

    def _resolve(self, s: Dict[str, Any]) -> Tuple[Optional[str], Optional[Dict[str, Any]], Optional[ComposeError]]:
        try:
            cid, entry = self.composite._lookup(s["operation"], s.get("connector"))
            return cid, entry, None
        except ComposeError as e:
            return None, None, e

    def _deps(self, s: Dict[str, Any], data_only: bool = False) -> List[str]:
        """The ids s depends on, in document order (unknown ids left out)."""
        out = []  # type: List[str]
        found = refs_in(s.get("for_each")) + refs_in(s.get("args")) + refs_in(s.get("idempotency_key"))
        if not data_only:
            found += [s["when"]] if is_ref(s.get("when")) else []
        for r in found:
            target = r.get("$ref")
            if isinstance(target, str) and target in self._ids and target not in out:
                out.append(target)
        if not data_only:
            for a in s.get("after", []):
                if a in self._ids and a not in out:
                    out.append(a)
        return out

    def _waves(self) -> List[List[str]]:
        """Topological levels, each in declaration order; steps on a cycle are left out."""
        deps = {s["id"]: set(self._deps(s)) for s in self._steps}
        done = set()  # type: Set[str]
        waves = []
        while True:
            wave = [s["id"] for s in self._steps if s["id"] not in done and deps[s["id"]] <= done]
            if not wave:
                return waves
            waves.append(wave)
            done.update(wave)

    def _cycles(self) -> List[List[str]]:
        """The strongly connected components on a cycle (a self-dependency counts), in step order."""
        ids = [s["id"] for s in self._steps]
        deps = {s["id"]: self._deps(s) for s in self._steps}
        index = {}  # type: Dict[str, int]
        low = {}  # type: Dict[str, int]
        on_stack = set()  # type: Set[str]
        stack = []  # type: List[str]
        comps = []  # type: List[List[str]]
        counter = [0]
        for root in ids:
            if root in index:
                continue
            work = [(root, 0)]
            while work:
                node, i = work.pop()
                if i == 0:
                    index[node] = low[node] = counter[0]
                    counter[0] += 1
                    stack.append(node)
                    on_stack.add(node)
                recurse = False
                children = deps[node]
                while i < len(children):
                    child = children[i]
                    i += 1
                    if child not in index:
                        work.append((node, i))
                        work.append((child, 0))
                        recurse = True
                        break
                    if child in on_stack:
                        low[node] = min(low[node], index[child])
                if recurse:
                    continue
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1 or node in deps[node]:
                        comps.append(sorted(comp, key=ids.index))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
        comps.sort(key=lambda c: ids.index(c[0]))
        return comps

    def order(self) -> List[str]:
        """The step ids in the order run() calls them (topological, declaration order within a wave)."""
        cycles = self._cycles()
        if cycles:
            raise ComposeError("cycle", fmt("Steps %s form a cycle.", ", ".join(cycles[0])), {"steps": cycles[0]})
        return [sid for wave in self._waves() for sid in wave]

    def plan(self) -> Dict[str, Any]:
        """The DAG as ``anvil.compose-plan/v1``: nodes, edges, waves, summary. Nothing is sent."""
        nodes = []
        connectors = []  # type: List[str]
        reads = writes = 0
        irreversible = []
        for s in self._steps:
            cid, entry, err = self._resolve(s)
            node = {
                "id": s["id"],
                "operation": entry["id"] if entry else s["operation"],
                "depends_on": self._deps(s),
                "connector": cid if cid else _named_connector(s),
                "qualified": "%s:%s" % (cid, entry["id"]) if entry else None,
                "effect": entry["effect"] if entry else None,
                "effect_class": entry["effectClass"] if entry else None,
                "confirm": bool(entry["confirm"]) if entry else s.get("confirm") is True,
                "undo": entry["undo"]["kind"] if entry and entry.get("undo") else None,
            }  # type: Dict[str, Any]
            if "for_each" in s:
                node["for_each"] = copy.deepcopy(s["for_each"])
            if "when" in s:
                node["when"] = copy.deepcopy(s["when"])
            if err is not None:
                node["error"] = err.message
            if cid and cid not in connectors:
                connectors.append(cid)
            if entry:
                if entry["effect"] == "read":
                    reads += 1
                else:
                    writes += 1
                    if entry["effectClass"] == "irreversible":
                        irreversible.append(s["id"])
            nodes.append(node)
        edges = [[d, n["id"]] for n in nodes for d in n["depends_on"]]
        return {
            "schema": PLAN_SCHEMA,
            "name": self.name,
            "nodes": nodes,
            "edges": edges,
            "waves": self._waves(),
            "connectors": connectors,
            "summary": {"steps": len(nodes), "reads": reads, "writes": writes, "irreversible": irreversible},
        }

    def mermaid(self) -> str:
        """The DAG as a Mermaid flowchart."""
        lines = ["flowchart TD"]
        names = {s["id"]: "s%d" % i for i, s in enumerate(self._steps)}
        for s in self._steps:
            cid, entry, _ = self._resolve(s)
            op = "%s:%s" % (cid, entry["id"]) if entry else s["operation"]
            label = "%s<br/>%s" % (s["id"], op)
            if entry and entry["effect"] != "read":
                label += "<br/>%s" % entry["effectClass"]
            label = label.replace('"', "#quot;")
            if "for_each" in s:
                lines.append('  %s[["%s"]]' % (names[s["id"]], label))
            elif "when" in s:
                lines.append('  %s{{"%s"}}' % (names[s["id"]], label))
            else:
                lines.append('  %s["%s"]' % (names[s["id"]], label))
        for s in self._steps:
            data = self._deps(s, data_only=True)
            for d in self._deps(s):
                arrow = "-->" if d in data else "-.->"
                lines.append("  %s %s %s" % (names[d], arrow, names[s["id"]]))
        return "\n".join(lines) + "\n"

    def validate(self) -> List[Dict[str, Any]]:
        """Findings ``{level, code, step, message}``; any error makes run() refuse the flow."""
        findings = []  # type: List[Dict[str, Any]]

        def err(code: str, step: Optional[str], message: str) -> None:
            findings.append(_finding("error", code, step, message))

        for s in self._steps:
            sid = s["id"]
            is_map = "for_each" in s
            cid, entry, problem = self._resolve(s)
            if problem is not None:
                err(problem.code, sid, problem.message)

            # References and paths.
            places = [("for_each", s.get("for_each")), ("args", s.get("args")),
                      ("idempotency_key", s.get("idempotency_key")), ("when", s.get("when"))]
            for place, value in places:
                for r in refs_in(value):
                    target = r.get("$ref")
                    if not isinstance(target, str) or target not in self._ids:
                        err("unknown_step", sid, fmt("%s refers to step %r, which the flow does not define.", place, target))
                    if not valid_path(r.get("path")):
                        err("invalid_path", sid, fmt("%s: %r is not a path (dotted names and [n] indices).", place, r.get("path")))
                for it in items_in(value):
                    if not is_map or place in ("for_each", "when"):
                        where = "a step that is not a map" if not is_map else place
                        err("item_outside_map", sid, fmt("item(%r) is used in %s; it reads the element of a map step.", it.get("$item"), where))
                    if not valid_path(it.get("$item")):
                        err("invalid_path", sid, fmt("item(%r) is not a path (dotted names and [n] indices).", it.get("$item")))
            when = s.get("when")
            if isinstance(when, dict) and not is_ref(when) and not is_item(when):
                err("unknown_step", sid, "when names no step (expected {\"$ref\": step, ...}).")
            for a in s.get("after", []):
                if a not in self._ids:
                    err("unknown_step", sid, fmt("after names step %r, which the flow does not define.", a))

            if entry is None:
                continue
            # Inputs.
            known = {}  # type: Dict[str, Dict[str, Any]]
            for i in entry["inputs"]:
                known.setdefault(i["key"], i)
            for i in entry["inputs"]:
                known.setdefault(i["wire"], i)
            given = set()
            for name in s.get("args", {}):
                if name in known:
                    given.add(known[name]["key"])
                else:
                    err("unknown_input", sid, fmt("%s takes no input %r (it takes: %s).",
                        entry["id"], name, ", ".join(i["key"] for i in entry["inputs"]) or "nothing"))
            for i in entry["inputs"]:
                if i["required"] and i["key"] not in given:
                    err("missing_input", sid, fmt("%s needs input %r.", entry["id"], i["key"]))
            # Safety gates, checked before anything is sent.
            if entry["confirm"] and s.get("confirm") is not True:
                err("confirmation_required", sid, "%s needs confirmation: the step must say confirm: true." % entry["id"])
            key = s.get("idempotency_key")
            if entry["idempotencyKeyRequired"] and key is None:
                err("idempotency_required", sid, "%s needs an idempotency key: the step must give idempotency_key." % entry["id"])
            elif is_map and isinstance(key, str):
                err("idempotency_required", sid, "A map step needs one idempotency key per call: use item() or leave it out, not one string.")
            if entry["effect"] != "read" and entry["effectClass"] == "irreversible":
                findings.append(_finding("warning", "irreversible", sid, "%s cannot be undone; nothing will compensate it if a later step fails." % entry["id"]))

        for comp in self._cycles():
            if len(comp) == 1:
                err("cycle", comp[0], fmt("Step %r depends on itself.", comp[0]))
            else:
                findings.append(_finding("error", "cycle", None, "Steps %s form a cycle." % ", ".join(comp)))
        return findings

    # Running ---------------------------------------------------------------

    def dry_run(self) -> Run:
        """Every step through its SDK with dry_run: nothing changes.

        References to results that do not exist yet become placeholders: the
        text ``"<step.path>"``, or for an input of another JSON type a value of
        that type (0, false, [], {}) so the call passes the tool's schema. A
        map over a result makes a single call. Conditions are taken to hold.
        """
        return self._execute(dry_run=True)

    def run(self) -> Run:
        """Validate, then call the steps one at a time in dependency order, stopping at the first failure."""
        return self._execute(dry_run=False)

    def compensate(self, run: Any, *, confirm: bool = False, dry_run: bool = False) -> List[Dict[str, Any]]:
        """Make the undo calls a failed run lists, newest first (see Composite.compensate)."""
        return self.composite.compensate(run, confirm=confirm, dry_run=dry_run)

    def _execute(self, dry_run: bool) -> Run:
        run = Run(self.name, dry_run)
        resolved = {}
        for s in self._steps:
            cid, entry, _ = self._resolve(s)
            resolved[s["id"]] = (cid, entry)
            run.steps[s["id"]] = {
                "operation": entry["id"] if entry else s["operation"],
                "connector": cid if cid else _named_connector(s),
                "status": "not_run",
            }
        findings = self.validate()
        errors = [f for f in findings if f["level"] == "error"]
        if errors:
            run.status = "refused"
            run.error = {
                "code": "invalid_flow",
                "message": "The flow has %d error finding(s); nothing was sent." % len(errors),
                "details": {"findings": findings},
            }
            return run

        by_id = {s["id"]: s for s in self._steps}
        results = {}  # type: Dict[str, Any]
        skipped = set()  # type: Set[str]
        writes = []  # completed write calls: (step, call, connector, entry, request, response)
        run.order = [sid for wave in self._waves() for sid in wave]
        for sid in run.order:
            s = by_id[sid]
            cid, entry = resolved[sid]
            state = run.steps[sid]
            try:
                if any(d in skipped for d in self._deps(s, data_only=True)):
                    state["status"] = "skipped"
                    skipped.add(sid)
                    continue
                if "when" in s and not dry_run and not self._holds(s["when"], results, skipped):
                    state["status"] = "skipped"
                    skipped.add(sid)
                    continue
                confirm = s.get("confirm") is True
                if "for_each" in s:
                    over = self._value(s["for_each"], results, None, dry_run)
                    if dry_run:
                        over = [Placeholder("<item>")]
                    elif not isinstance(over, list):
                        raise ComposeError("not_a_list", fmt("map %r: %s is not a list.", sid, _describe(s["for_each"])), {"step": sid})
                    out = []
                    state["calls_completed"] = 0
                    for n, element in enumerate(over):
                        args = self._value(s.get("args", {}), results, element, dry_run)
                        key = self._value(s.get("idempotency_key"), results, element, dry_run)
                        request, result = self.composite._invoke(cid, entry, args, confirm, key, dry_run)
                        out.append(result)
                        state["calls_completed"] += 1
                        if not dry_run and entry["effect"] != "read":
                            writes.append((sid, n, cid, entry, request, result, key))
                    result = out
                else:
                    args = self._value(s.get("args", {}), results, None, dry_run)
                    key = self._value(s.get("idempotency_key"), results, None, dry_run)
                    request, result = self.composite._invoke(cid, entry, args, confirm, key, dry_run)
                    if not dry_run and entry["effect"] != "read":
                        writes.append((sid, 0, cid, entry, request, result, key))
                state["status"] = "ok"
                state["result"] = result
                results[sid] = result
            except Exception as exc:  # a failed call fails the step, whatever raised it
                state["status"] = "failed"
                state["error"] = error_json(exc)
                if run.failed_step is None:
                    run.failed_step = sid
                    run.error = state["error"]
                if not dry_run:
                    break
        if run.failed_step is not None:
            run.status = "failed"
            run.compensation = [_undo_entry(*w) for w in reversed(writes)]
        return run

    def _holds(self, when: Dict[str, Any], results: Dict[str, Any], skipped: Set[str]) -> bool:
        target = when.get("$ref")
        found, value = (False, None)
        if target in results and target not in skipped:
            found, value = lookup(results[target], when.get("path"))
        if "equals" in when:
            return found and _same(value, when["equals"])
        if "exists" in when:
            return (found and value is not None) == bool(when["exists"])
        return found and bool(value)

    def _value(self, value: Any, results: Dict[str, Any], element: Any, dry_run: bool) -> Any:
        """value with every ref and item replaced by what it names."""
        if is_ref(value):
            target = value["$ref"]
            path = value.get("path")
            if dry_run:
                return Placeholder("<%s>" % join(target, path))
            found, got = lookup(results.get(target), path) if target in results else (False, None)
            if not found:
                raise ComposeError("unresolved_ref", fmt("%s names nothing in the result of step %r.", _describe(value), target),
                                   {"ref": target, "path": path})
            return copy.deepcopy(got)
        if is_item(value):
            path = value["$item"]
            if isinstance(element, Placeholder):
                return Placeholder("<%s>" % join("item", path))
            found, got = lookup(element, path)
            if not found:
                raise ComposeError("unresolved_ref", fmt("item(%r) names nothing in the element.", path),
                                   {"item": path})
            return copy.deepcopy(got)
        if isinstance(value, dict):
            return {k: self._value(v, results, element, dry_run) for k, v in value.items()}
        if isinstance(value, list):
            return [self._value(v, results, element, dry_run) for v in value]
        return value


def _named_connector(s: Dict[str, Any]) -> Optional[str]:
    """The connector a step names (its connector, else its "connector:" prefix), resolved or not."""
    if isinstance(s.get("connector"), str):
        return s["connector"]
    op = s.get("operation")
    if isinstance(op, str) and ":" in op:
        return op.split(":", 1)[0]
    return None


def _same(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, key order does not matter."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _describe(r: Dict[str, Any]) -> str:
    if r.get("path"):
        return fmt("ref(%r, %r)", r.get("$ref"), r.get("path"))
    return fmt("ref(%r)", r.get("$ref"))


def _undo_entry(step, call, cid, entry, request, response, key) -> Dict[str, Any]:
    """One compensation entry: the declared undo resolved from the call, or the reason there is none."""
    out = {
        "step": step,
        "call": call,
        "connector": cid,
        "operation": entry["id"],
        "effect_class": entry["effectClass"],
    }  # type: Dict[str, Any]
    undo = entry.get("undo")
    if not undo:
        out["reason"] = "%s is %s: nothing undoes it" % (entry["id"], entry["effectClass"])
        return out
    arguments = {}
    for name, source in undo["arguments"].items():
        if isinstance(source, dict) and "const" in source:
            arguments[name] = copy.deepcopy(source["const"])
            continue
        optional = isinstance(source, str) and source.endswith("?")
        path = source[:-1] if optional else source
        found, value = _mapped(path, request, response, key)
        if not found or value is None:
            if optional:
                continue
            out["reason"] = "undo unavailable: %s names nothing in this call" % source
            return out
        arguments[name] = copy.deepcopy(value)
    out["undo"] = {"kind": undo["kind"], "operation": undo["operation"], "arguments": arguments}
    return out


def _mapped(source: Any, request: Dict[str, Any], response: Any, key: Any) -> Tuple[bool, Any]:
    if not isinstance(source, str):
        return False, None
    if source == "idempotency_key":
        return key is not None, key
    for root, value in (("request", request), ("response", response)):
        if source.startswith(root + ".") or source.startswith(root + "["):
            rest = source[len(root):]
            try:
                return lookup(value, rest[1:] if rest.startswith(".") else rest)
            except ValueError:
                return False, None
    return False, None
