// Composite and flows: one client over every composed connector's own SDK, and DAGs of
// their calls with plan, validate, dry run, run and compensate. Every call is the connector SDK's
// own method, so confirmation, idempotency, dry run, gateway mode and the grant apply unchanged.

import { readFileSync } from "node:fs";

import { CATALOG, INPUT_TYPES } from "./catalog.js";
import type { CatalogConnector, CatalogOperation } from "./catalog.js";
import { CLIENTS } from "./clients.js";
import type { ConnectorOptions } from "./clients.js";

export const FLOW_SCHEMA = "anvil.compose-flow/v1";
export const PLAN_SCHEMA = "anvil.compose-plan/v1";
export const RUN_SCHEMA = "anvil.compose-run/v1";

/** Every ComposeError code. */
export const COMPOSE_ERROR_CODES = [
  "duplicate_step",
  "cycle",
  "unknown_operation",
  "ambiguous_operation",
  "unknown_connector",
  "connector_missing",
  "unknown_input",
  "invalid_path",
  "unresolved_ref",
  "not_a_list",
  "invalid_flow",
] as const;

/** `{code, message, details}` of a failure. */
export interface ErrorJSON {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** A flow or a composite call that is wrong in itself (not a refused call). */
export class ComposeError extends Error {
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "ComposeError";
    this.code = code;
    this.details = details;
  }

  toJSON(): ErrorJSON {
    return { code: this.code, message: this.message, details: this.details };
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** The `{code, message, details}` of a failed call: an AnvilError (matched by shape) or anything else. */
function errorJSON(e: unknown): ErrorJSON {
  if (e instanceof ComposeError) return e.toJSON();
  if (isRecord(e) && typeof e.code === "string" && typeof e.message === "string") {
    return { code: e.code, message: e.message, details: isRecord(e.details) ? e.details : {} };
  }
  if (e instanceof Error) return { code: "internal_error", message: `${e.name}: ${e.message}`, details: {} };
  return { code: "internal_error", message: String(e), details: {} };
}

// Paths ---------------------------------------------------------------------------------------

type Segment = string | number;

const NAME = /^[A-Za-z_$][A-Za-z0-9_$-]*/;
const INDEX = /^\[([0-9]+)\]/;

/** Splits `items[0].id` into `["items", 0, "id"]`; throws on anything that does not parse. */
function parsePath(path: unknown): Segment[] {
  if (path === undefined || path === null || path === "") return [];
  if (typeof path !== "string") throw new Error("a path is a string");
  const out: Segment[] = [];
  let i = 0;
  let first = true;
  while (i < path.length) {
    const rest = path.slice(i);
    const idx = INDEX.exec(rest);
    if (idx) {
      out.push(Number(idx[1]));
      i += idx[0].length;
      first = false;
      continue;
    }
    if (!first) {
      if (path[i] !== ".") throw new Error(`unexpected ${JSON.stringify(path[i])} at ${i}`);
      i += 1;
    }
    const name = NAME.exec(path.slice(i));
    if (!name) throw new Error(`expected a name at ${i}`);
    out.push(name[0]);
    i += name[0].length;
    first = false;
  }
  return out;
}

function validPath(path: unknown): boolean {
  try {
    parsePath(path);
    return true;
  } catch {
    return false;
  }
}

function lookup(value: unknown, path: unknown): [boolean, unknown] {
  let v = value;
  for (const seg of parsePath(path)) {
    if (typeof seg === "number") {
      if (Array.isArray(v) && seg < v.length) {
        v = v[seg];
        continue;
      }
      return [false, undefined];
    }
    if (isRecord(v) && Object.prototype.hasOwnProperty.call(v, seg)) {
      v = v[seg];
      continue;
    }
    return [false, undefined];
  }
  return [true, v];
}

function join(base: string, path: unknown): string {
  if (typeof path !== "string" || path === "") return base;
  return path.startsWith("[") ? base + path : base + "." + path;
}

// References ----------------------------------------------------------------------------------

/** A when-condition on an earlier step's result. */
export class Cond {
  readonly step: string;
  readonly path: string | undefined;
  readonly kind: "equals" | "exists" | "truthy";
  readonly value: unknown;

  constructor(step: string, path: string | undefined, kind: "equals" | "exists" | "truthy", value: unknown) {
    this.step = step;
    this.path = path;
    this.kind = kind;
    this.value = value;
  }

  toJSON(): Record<string, unknown> {
    const doc: Record<string, unknown> = { $ref: this.step };
    if (this.path) doc.path = this.path;
    doc[this.kind] = clone(this.value);
    return doc;
  }
}

/** A value read from an earlier step's result: `ref(step, "items[0].id")`. */
export class Ref {
  readonly step: string;
  readonly path: string | undefined;

  constructor(step: string, path?: string) {
    this.step = step;
    this.path = path || undefined;
  }

  /** A reference into this one. */
  ref(path?: string): Ref {
    checkPath(path);
    if (!path) return new Ref(this.step, this.path);
    if (!this.path) return new Ref(this.step, path);
    return new Ref(this.step, this.path + (path.startsWith("[") ? path : "." + path));
  }

  /** Holds when the value equals `value`. */
  equals(value: unknown): Cond {
    return new Cond(this.step, this.path, "equals", value);
  }

  /** Holds when the path names a value that is not null. */
  exists(): Cond {
    return new Cond(this.step, this.path, "exists", true);
  }

  /** Holds when the value is truthy. */
  truthy(): Cond {
    return new Cond(this.step, this.path, "truthy", true);
  }

  toJSON(): Record<string, unknown> {
    const doc: Record<string, unknown> = { $ref: this.step };
    if (this.path) doc.path = this.path;
    return doc;
  }
}

/** What Flow.step and Flow.map return: a reference to the step's whole result. */
export class StepHandle extends Ref {
  get id(): string {
    return this.step;
  }
}

/** The current element of a map step: `item("number")`. */
export class Item {
  readonly path: string;

  constructor(path?: string) {
    this.path = path ?? "";
  }

  toJSON(): Record<string, unknown> {
    return { $item: this.path };
  }
}

function checkPath(path: unknown): void {
  if (path !== undefined && !validPath(path)) {
    throw new ComposeError("invalid_path", `${JSON.stringify(path)} is not a path (dotted names and [n] indices).`, { path });
  }
}

/** A reference to an earlier step's result (a step id or handle), at path. */
export function ref(step: string | Ref, path?: string): Ref {
  checkPath(path);
  if (step instanceof Ref) return step.ref(path);
  if (typeof step !== "string" || step === "") {
    throw new ComposeError("invalid_flow", "ref() takes a step id or the handle step() returned.");
  }
  return new Ref(step, path);
}

/** The current element of a map step, at path (the whole element by default). */
export function item(path?: string): Item {
  checkPath(path);
  return new Item(path);
}

function encode(value: unknown): unknown {
  if (value instanceof Ref || value instanceof Item || value instanceof Cond) return value.toJSON();
  if (Array.isArray(value)) return value.map(encode);
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) out[k] = encode(v);
    }
    return out;
  }
  return clone(value);
}

function isRef(v: unknown): v is Record<string, unknown> {
  return isRecord(v) && "$ref" in v;
}

function isItem(v: unknown): v is Record<string, unknown> {
  return isRecord(v) && "$item" in v && !("$ref" in v);
}

function walk(value: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (isRef(value) || isItem(value)) {
    out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) walk(v, out);
  } else if (isRecord(value)) {
    for (const v of Object.values(value)) walk(v, out);
  }
  return out;
}

const refsIn = (v: unknown) => walk(v).filter(isRef);
const itemsIn = (v: unknown) => walk(v).filter(isItem);

// Documents -----------------------------------------------------------------------------------

/** One step of an anvil.compose-flow/v1 document. */
export interface StepDocument {
  id: string;
  operation: string;
  connector?: string;
  args: Record<string, unknown>;
  for_each?: Record<string, unknown>;
  after?: string[];
  when?: Record<string, unknown>;
  confirm?: boolean;
  idempotency_key?: unknown;
}

/** anvil.compose-flow/v1. */
export interface FlowDocument {
  schema: typeof FLOW_SCHEMA;
  name: string;
  steps: StepDocument[];
}

/** One finding of validate(). */
export interface Finding {
  level: "error" | "warning";
  code: string;
  step: string | null;
  message: string;
}

/** One node of a plan. */
export interface PlanNode {
  id: string;
  operation: string;
  depends_on: string[];
  connector: string | null;
  qualified: string | null;
  effect: string | null;
  effect_class: string | null;
  confirm: boolean;
  undo: string | null;
  for_each?: Record<string, unknown>;
  when?: Record<string, unknown>;
  error?: string;
}

/** anvil.compose-plan/v1. */
export interface Plan {
  schema: typeof PLAN_SCHEMA;
  name: string;
  nodes: PlanNode[];
  edges: [string, string][];
  waves: string[][];
  connectors: string[];
  summary: { steps: number; reads: number; writes: number; irreversible: string[] };
}

/** One step of a run. */
export interface StepOutcome {
  operation: string;
  connector: string | null;
  status: "not_run" | "skipped" | "ok" | "failed";
  result?: unknown;
  error?: ErrorJSON;
  calls_completed?: number;
}

/** One completed write call of a failed run, with its undo or the reason it has none. */
export interface CompensationEntry {
  step: string;
  call: number;
  connector: string;
  operation: string;
  effect_class: string;
  undo?: { kind: string; operation: string; arguments: Record<string, unknown> };
  reason?: string;
}

/** What compensate() did with one entry. */
export interface CompensationOutcome extends CompensationEntry {
  status: "ok" | "failed" | "not_undoable";
  result?: unknown;
  error?: ErrorJSON;
}

/** anvil.compose-run/v1. */
export interface RunJSON {
  schema: typeof RUN_SCHEMA;
  flow: string;
  dry_run: boolean;
  status: "succeeded" | "failed" | "refused";
  order: string[];
  failed_step: string | null;
  error: ErrorJSON | null;
  steps: Record<string, StepOutcome>;
  compensation: CompensationEntry[];
}

/** The outcome of Flow.run() or Flow.dryRun(). */
export class Run {
  readonly flow: string;
  readonly dryRun: boolean;
  status: "succeeded" | "failed" | "refused" = "succeeded";
  order: string[] = [];
  failedStep: string | null = null;
  error: ErrorJSON | null = null;
  steps: Record<string, StepOutcome> = {};
  /** After a failed run: every completed write call, newest first, with its undo. Nothing is undone. */
  compensation: CompensationEntry[] = [];

  constructor(flow: string, dryRun: boolean) {
    this.flow = flow;
    this.dryRun = dryRun;
  }

  get ok(): boolean {
    return this.status === "succeeded";
  }

  /** The result of every step that ran. */
  get results(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [id, s] of Object.entries(this.steps)) if (s.status === "ok") out[id] = s.result;
    return out;
  }

  toJSON(): RunJSON {
    const steps: Record<string, StepOutcome> = {};
    for (const [id, s] of Object.entries(this.steps)) {
      const o: StepOutcome = { operation: s.operation, connector: s.connector, status: s.status };
      if ("result" in s) o.result = s.result;
      if ("error" in s) o.error = s.error;
      if ("calls_completed" in s) o.calls_completed = s.calls_completed;
      steps[id] = o;
    }
    return clone({
      schema: RUN_SCHEMA,
      flow: this.flow,
      dry_run: this.dryRun,
      status: this.status,
      order: this.order,
      failed_step: this.failedStep,
      error: this.error,
      steps,
      compensation: this.compensation,
    });
  }
}

// Flow ----------------------------------------------------------------------------------------

/** The options of a step. */
export interface StepOptions {
  connector?: string;
  after?: string | Ref | (string | Ref)[];
  when?: Cond | Ref;
  confirm?: boolean;
  idempotencyKey?: string | Ref | Item;
}

/** The safety options of Composite.call. */
export interface CallOptions {
  connector?: string;
  confirm?: boolean;
  idempotencyKey?: string;
  dryRun?: boolean;
}

/** The options of compensate(). */
export interface CompensateOptions {
  confirm?: boolean;
  dryRun?: boolean;
}

type Resolved = [string | null, CatalogOperation | null, ComposeError | null];

class Placeholder {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  toJSON(): string {
    return this.text;
  }
}

/** A dry run's value for an input of a JSON type: the placeholder text, or a value of that type. */
function standIn(type: string, p: Placeholder): unknown {
  switch (type) {
    case "integer":
    case "number":
      return 0;
    case "boolean":
      return false;
    case "array":
      return [];
    case "object":
      return {};
  }
  return p.text;
}

interface WriteCall {
  step: string;
  call: number;
  connector: string;
  entry: CatalogOperation;
  request: Record<string, unknown>;
  response: unknown;
  key: unknown;
}

/** A DAG of operation calls over a Composite's connectors. Nothing is sent until run(). */
export class Flow {
  readonly composite: Composite;
  readonly name: string;
  readonly #steps: StepDocument[] = [];
  readonly #ids = new Set<string>();

  constructor(composite: Composite, name: string) {
    if (typeof name !== "string" || name === "") throw new ComposeError("invalid_flow", "A flow needs a name.");
    this.composite = composite;
    this.name = name;
  }

  /** The steps in their document form. */
  get steps(): StepDocument[] {
    return clone(this.#steps);
  }

  /** One call of operation op; an input that is ref(step, path) depends on that step. */
  step(id: string, op: string, args: Record<string, unknown> = {}, options: StepOptions = {}): StepHandle {
    return this.#add(this.#doc(id, op, args, undefined, options));
  }

  /** One call of op per element of the list `over`; item(path) reads the element. */
  map(id: string, op: string, over: Ref, args: Record<string, unknown> = {}, options: StepOptions = {}): StepHandle {
    const doc = encode(over);
    if (!isRef(doc)) throw new ComposeError("invalid_flow", `map ${JSON.stringify(id)}: over must be ref(step, path) or a step's handle.`);
    return this.#add(this.#doc(id, op, args, doc, options));
  }

  #doc(id: string, op: string, args: unknown, over: Record<string, unknown> | undefined, o: StepOptions): StepDocument {
    if (!isRecord(args)) throw new ComposeError("invalid_flow", `step ${JSON.stringify(id)}: args must be an object of inputs.`);
    const doc: StepDocument = { id, operation: op, args: {} };
    if (o.connector !== undefined) doc.connector = o.connector;
    doc.args = encode(args) as Record<string, unknown>;
    if (over !== undefined) doc.for_each = over;
    if (o.after !== undefined) {
      const list = Array.isArray(o.after) ? o.after : [o.after];
      doc.after = list.map((a) => (a instanceof Ref ? a.step : a));
    }
    if (o.when !== undefined) doc.when = encode(o.when instanceof Ref ? o.when.truthy() : o.when) as Record<string, unknown>;
    if (o.confirm) doc.confirm = true;
    if (o.idempotencyKey !== undefined) doc.idempotency_key = encode(o.idempotencyKey);
    return doc;
  }

  #add(doc: StepDocument): StepHandle {
    const sid = doc.id;
    if (typeof sid !== "string" || sid === "") throw new ComposeError("invalid_flow", "Every step needs an id (a non-empty string).");
    const at = { step: sid };
    if (typeof doc.operation !== "string" || doc.operation === "") {
      throw new ComposeError("invalid_flow", `Step ${JSON.stringify(sid)} needs an operation (an AIR operation id).`, at);
    }
    if (this.#ids.has(sid)) throw new ComposeError("duplicate_step", `Step ${JSON.stringify(sid)} is defined twice.`, at);
    if (doc.connector !== undefined && typeof doc.connector !== "string") {
      throw new ComposeError("invalid_flow", `Step ${JSON.stringify(sid)}: connector must be a string.`, at);
    }
    if (!isRecord(doc.args)) throw new ComposeError("invalid_flow", `Step ${JSON.stringify(sid)}: args must be an object.`, at);
    if (doc.after !== undefined && !(Array.isArray(doc.after) && doc.after.every((a) => typeof a === "string"))) {
      throw new ComposeError("invalid_flow", `Step ${JSON.stringify(sid)}: after must be a list of step ids.`, at);
    }
    if (doc.for_each !== undefined && !isRef(doc.for_each)) {
      throw new ComposeError("invalid_flow", `Step ${JSON.stringify(sid)}: for_each must be {"$ref": step}.`, at);
    }
    if (doc.when !== undefined && !isRecord(doc.when)) {
      throw new ComposeError("invalid_flow", `Step ${JSON.stringify(sid)}: when must be a condition object.`, at);
    }
    if (doc.confirm !== undefined && typeof doc.confirm !== "boolean") {
      throw new ComposeError("invalid_flow", `Step ${JSON.stringify(sid)}: confirm must be true or false.`, at);
    }
    const key = doc.idempotency_key;
    if (key !== undefined && typeof key !== "string" && !isRef(key) && !isItem(key)) {
      throw new ComposeError("invalid_flow", `Step ${JSON.stringify(sid)}: idempotency_key must be a string, ref() or item().`, at);
    }
    this.#steps.push(doc);
    this.#ids.add(sid);
    return new StepHandle(sid);
  }

  /** Reads an anvil.compose-flow/v1 document. */
  static fromJSON(composite: Composite, doc: unknown): Flow {
    if (!isRecord(doc)) throw new ComposeError("invalid_flow", "A flow document is a JSON object.");
    if (doc.schema !== undefined && doc.schema !== null && doc.schema !== FLOW_SCHEMA) {
      throw new ComposeError("invalid_flow", `Expected schema ${FLOW_SCHEMA}, not ${JSON.stringify(doc.schema)}.`);
    }
    if (!Array.isArray(doc.steps)) throw new ComposeError("invalid_flow", 'A flow document lists its steps under "steps".');
    const flow = new Flow(composite, typeof doc.name === "string" && doc.name !== "" ? doc.name : "flow");
    doc.steps.forEach((s: unknown, i: number) => {
      if (!isRecord(s)) throw new ComposeError("invalid_flow", `Step ${i} is not an object.`);
      if (typeof s.id !== "string" || s.id === "") throw new ComposeError("invalid_flow", `Step ${i} has no id.`);
      if (typeof s.operation !== "string" || s.operation === "") {
        throw new ComposeError("invalid_flow", `Step ${JSON.stringify(s.id)} has no operation.`, { step: s.id });
      }
      const d: Record<string, unknown> = { id: s.id, operation: s.operation };
      if (s.connector !== undefined && s.connector !== null) d.connector = s.connector;
      d.args = clone(s.args ?? {});
      for (const k of ["for_each", "after", "when", "confirm", "idempotency_key"]) {
        if (s[k] !== undefined && s[k] !== null) d[k] = clone(s[k]);
      }
      if (typeof d.after === "string") d.after = [d.after];
      if (d.confirm === false) delete d.confirm;
      flow.#add(d as unknown as StepDocument);
    });
    return flow;
  }

  /** The flow as anvil.compose-flow/v1. */
  toJSON(): FlowDocument {
    return { schema: FLOW_SCHEMA, name: this.name, steps: clone(this.#steps) };
  }

  #resolve(s: StepDocument): Resolved {
    try {
      const [cid, entry] = this.composite.lookup(s.operation, s.connector);
      return [cid, entry, null];
    } catch (e) {
      if (e instanceof ComposeError) return [null, null, e];
      throw e;
    }
  }

  #deps(s: StepDocument, dataOnly = false): string[] {
    const out: string[] = [];
    const found = [...refsIn(s.for_each), ...refsIn(s.args), ...refsIn(s.idempotency_key)];
    if (!dataOnly && isRef(s.when)) found.push(s.when);
    for (const r of found) {
      const t = r.$ref;
      if (typeof t === "string" && this.#ids.has(t) && !out.includes(t)) out.push(t);
    }
    if (!dataOnly) for (const a of s.after ?? []) if (this.#ids.has(a) && !out.includes(a)) out.push(a);
    return out;
  }

  #waves(): string[][] {
    const deps = new Map(this.#steps.map((s) => [s.id, this.#deps(s)]));
    const done = new Set<string>();
    const waves: string[][] = [];
    for (;;) {
      const wave = this.#steps.map((s) => s.id).filter((id) => !done.has(id) && deps.get(id)!.every((d) => done.has(d)));
      if (wave.length === 0) return waves;
      waves.push(wave);
      for (const id of wave) done.add(id);
    }
  }

  #cycles(): string[][] {
    const ids = this.#steps.map((s) => s.id);
    const deps = new Map(this.#steps.map((s) => [s.id, this.#deps(s)]));
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const onStack = new Set<string>();
    const stack: string[] = [];
    const comps: string[][] = [];
    let counter = 0;
    for (const root of ids) {
      if (index.has(root)) continue;
      const work: [string, number][] = [[root, 0]];
      while (work.length > 0) {
        const top = work.pop()!;
        const node = top[0];
        let i = top[1];
        if (i === 0) {
          index.set(node, counter);
          low.set(node, counter);
          counter++;
          stack.push(node);
          onStack.add(node);
        }
        const children = deps.get(node)!;
        let recurse = false;
        while (i < children.length) {
          const child = children[i++];
          if (!index.has(child)) {
            work.push([node, i], [child, 0]);
            recurse = true;
            break;
          }
          if (onStack.has(child)) low.set(node, Math.min(low.get(node)!, index.get(child)!));
        }
        if (recurse) continue;
        if (low.get(node) === index.get(node)) {
          const comp: string[] = [];
          for (;;) {
            const w = stack.pop()!;
            onStack.delete(w);
            comp.push(w);
            if (w === node) break;
          }
          if (comp.length > 1 || children.includes(node)) comps.push(comp.sort((a, b) => ids.indexOf(a) - ids.indexOf(b)));
        }
        if (work.length > 0) {
          const parent = work[work.length - 1][0];
          low.set(parent, Math.min(low.get(parent)!, low.get(node)!));
        }
      }
    }
    return comps.sort((a, b) => ids.indexOf(a[0]) - ids.indexOf(b[0]));
  }

  /** The step ids in the order run() calls them (topological, declaration order within a wave). */
  order(): string[] {
    const cycles = this.#cycles();
    if (cycles.length > 0) {
      throw new ComposeError("cycle", `Steps ${cycles[0].join(", ")} form a cycle.`, { steps: cycles[0] });
    }
    return this.#waves().flat();
  }

  /** The DAG as anvil.compose-plan/v1: nodes, edges, waves, summary. Nothing is sent. */
  plan(): Plan {
    const nodes: PlanNode[] = [];
    const connectors: string[] = [];
    let reads = 0;
    let writes = 0;
    const irreversible: string[] = [];
    for (const s of this.#steps) {
      const [cid, entry, err] = this.#resolve(s);
      const node: PlanNode = {
        id: s.id,
        operation: entry ? entry.id : s.operation,
        depends_on: this.#deps(s),
        connector: cid ?? namedConnector(s),
        qualified: entry ? `${cid}:${entry.id}` : null,
        effect: entry ? entry.effect : null,
        effect_class: entry ? entry.effectClass : null,
        confirm: entry ? entry.confirm : s.confirm === true,
        undo: entry && entry.undo ? entry.undo.kind : null,
      };
      if (s.for_each !== undefined) node.for_each = clone(s.for_each);
      if (s.when !== undefined) node.when = clone(s.when);
      if (err) node.error = err.message;
      if (cid && !connectors.includes(cid)) connectors.push(cid);
      if (entry) {
        if (entry.effect === "read") reads++;
        else {
          writes++;
          if (entry.effectClass === "irreversible") irreversible.push(s.id);
        }
      }
      nodes.push(node);
    }
    const edges = nodes.flatMap((n) => n.depends_on.map((d): [string, string] => [d, n.id]));
    return {
      schema: PLAN_SCHEMA,
      name: this.name,
      nodes,
      edges,
      waves: this.#waves(),
      connectors,
      summary: { steps: nodes.length, reads, writes, irreversible },
    };
  }

  /** The DAG as a Mermaid flowchart. */
  mermaid(): string {
    const lines = ["flowchart TD"];
    const names = new Map(this.#steps.map((s, i) => [s.id, `s${i}`]));
    for (const s of this.#steps) {
      const [cid, entry] = this.#resolve(s);
      let label = `${s.id}<br/>${entry ? `${cid}:${entry.id}` : s.operation}`;
      if (entry && entry.effect !== "read") label += `<br/>${entry.effectClass}`;
      label = label.replace(/"/g, "#quot;");
      const n = names.get(s.id)!;
      if (s.for_each !== undefined) lines.push(`  ${n}[["${label}"]]`);
      else if (s.when !== undefined) lines.push(`  ${n}{{"${label}"}}`);
      else lines.push(`  ${n}["${label}"]`);
    }
    for (const s of this.#steps) {
      const data = this.#deps(s, true);
      for (const d of this.#deps(s)) lines.push(`  ${names.get(d)} ${data.includes(d) ? "-->" : "-.->"} ${names.get(s.id)}`);
    }
    return lines.join("\n") + "\n";
  }

  /** Findings {level, code, step, message}; any error makes run() refuse the flow. */
  validate(): Finding[] {
    const findings: Finding[] = [];
    const err = (code: string, step: string | null, message: string) => findings.push({ level: "error", code, step, message });
    const q = (v: unknown) => JSON.stringify(v);
    for (const s of this.#steps) {
      const sid = s.id;
      const isMap = s.for_each !== undefined;
      const [, entry, problem] = this.#resolve(s);
      if (problem) err(problem.code, sid, problem.message);
      const places: [string, unknown][] = [
        ["for_each", s.for_each],
        ["args", s.args],
        ["idempotency_key", s.idempotency_key],
        ["when", s.when],
      ];
      for (const [place, value] of places) {
        for (const r of refsIn(value)) {
          if (typeof r.$ref !== "string" || !this.#ids.has(r.$ref)) {
            err("unknown_step", sid, `${place} refers to step ${q(r.$ref)}, which the flow does not define.`);
          }
          if (!validPath(r.path)) err("invalid_path", sid, `${place}: ${q(r.path)} is not a path (dotted names and [n] indices).`);
        }
        for (const it of itemsIn(value)) {
          if (!isMap || place === "for_each" || place === "when") {
            const where = !isMap ? "a step that is not a map" : place;
            err("item_outside_map", sid, `item(${q(it.$item)}) is used in ${where}; it reads the element of a map step.`);
          }
          if (!validPath(it.$item)) err("invalid_path", sid, `item(${q(it.$item)}) is not a path (dotted names and [n] indices).`);
        }
      }
      if (isRecord(s.when) && !isRef(s.when) && !isItem(s.when)) {
        err("unknown_step", sid, 'when names no step (expected {"$ref": step, ...}).');
      }
      for (const a of s.after ?? []) {
        if (!this.#ids.has(a)) err("unknown_step", sid, `after names step ${q(a)}, which the flow does not define.`);
      }
      if (!entry) continue;
      const known = new Map<string, string>();
      for (const i of entry.inputs) if (!known.has(i.key)) known.set(i.key, i.key);
      for (const i of entry.inputs) if (!known.has(i.wire)) known.set(i.wire, i.key);
      const given = new Set<string>();
      for (const name of Object.keys(s.args)) {
        const key = known.get(name);
        if (key !== undefined) given.add(key);
        else {
          const takes = entry.inputs.map((i) => i.key).join(", ") || "nothing";
          err("unknown_input", sid, `${entry.id} takes no input ${q(name)} (it takes: ${takes}).`);
        }
      }
      for (const i of entry.inputs) {
        if (i.required && !given.has(i.key)) err("missing_input", sid, `${entry.id} needs input ${q(i.key)}.`);
      }
      if (entry.confirm && s.confirm !== true) {
        err("confirmation_required", sid, `${entry.id} needs confirmation: the step must say confirm: true.`);
      }
      const key = s.idempotency_key;
      if (entry.idempotencyKeyRequired && key === undefined) {
        err("idempotency_required", sid, `${entry.id} needs an idempotency key: the step must give idempotency_key.`);
      } else if (isMap && typeof key === "string") {
        err("idempotency_required", sid, "A map step needs one idempotency key per call: use item() or leave it out, not one string.");
      }
      if (entry.effect !== "read" && entry.effectClass === "irreversible") {
        findings.push({
          level: "warning",
          code: "irreversible",
          step: sid,
          message: `${entry.id} cannot be undone; nothing will compensate it if a later step fails.`,
        });
      }
    }
    for (const comp of this.#cycles()) {
      if (comp.length === 1) err("cycle", comp[0], `Step ${q(comp[0])} depends on itself.`);
      else err("cycle", null, `Steps ${comp.join(", ")} form a cycle.`);
    }
    return findings;
  }

  /**
   * Every step through its SDK with dryRun: nothing changes. References to results not known yet
   * become placeholders ("<step.path>", or a value of the input's JSON type); a map over a result
   * makes a single call; conditions are taken to hold.
   */
  dryRun(): Promise<Run> {
    return this.#execute(true);
  }

  /** Validate, then call the steps one at a time in dependency order, stopping at the first failure. */
  run(): Promise<Run> {
    return this.#execute(false);
  }

  /** Make the undo calls a failed run lists, newest first (see Composite.compensate). */
  compensate(run: Run | RunJSON, options: CompensateOptions = {}): Promise<CompensationOutcome[]> {
    return this.composite.compensate(run, options);
  }

  async #execute(dryRun: boolean): Promise<Run> {
    const run = new Run(this.name, dryRun);
    const resolved = new Map<string, Resolved>();
    for (const s of this.#steps) {
      const r = this.#resolve(s);
      resolved.set(s.id, r);
      run.steps[s.id] = { operation: r[1] ? r[1].id : s.operation, connector: r[0] ?? namedConnector(s), status: "not_run" };
    }
    const findings = this.validate();
    const errors = findings.filter((f) => f.level === "error");
    if (errors.length > 0) {
      run.status = "refused";
      run.error = {
        code: "invalid_flow",
        message: `The flow has ${errors.length} error finding(s); nothing was sent.`,
        details: { findings },
      };
      return run;
    }
    const byId = new Map(this.#steps.map((s) => [s.id, s]));
    const results = new Map<string, unknown>();
    const skipped = new Set<string>();
    const writes: WriteCall[] = [];
    run.order = this.#waves().flat();
    for (const sid of run.order) {
      const s = byId.get(sid)!;
      const [cid, entry] = resolved.get(sid)! as [string, CatalogOperation, null];
      const state = run.steps[sid];
      try {
        if (this.#deps(s, true).some((d) => skipped.has(d))) {
          state.status = "skipped";
          skipped.add(sid);
          continue;
        }
        if (s.when !== undefined && !dryRun && !holds(s.when, results, skipped)) {
          state.status = "skipped";
          skipped.add(sid);
          continue;
        }
        const confirm = s.confirm === true;
        let result: unknown;
        if (s.for_each !== undefined) {
          let over = value(s.for_each, results, undefined, dryRun);
          if (dryRun) over = [new Placeholder("<item>")];
          else if (!Array.isArray(over)) {
            throw new ComposeError("not_a_list", `map ${JSON.stringify(sid)}: ${describe(s.for_each)} is not a list.`, { step: sid });
          }
          const out: unknown[] = [];
          state.calls_completed = 0;
          for (const [n, element] of (over as unknown[]).entries()) {
            const args = value(s.args, results, element, dryRun) as Record<string, unknown>;
            const key = value(s.idempotency_key, results, element, dryRun);
            const [request, res] = await this.composite.invoke(cid, entry, args, confirm, key, dryRun);
            out.push(res);
            state.calls_completed += 1;
            if (!dryRun && entry.effect !== "read") writes.push({ step: sid, call: n, connector: cid, entry, request, response: res, key });
          }
          result = out;
        } else {
          const args = value(s.args, results, undefined, dryRun) as Record<string, unknown>;
          const key = value(s.idempotency_key, results, undefined, dryRun);
          const [request, res] = await this.composite.invoke(cid, entry, args, confirm, key, dryRun);
          if (!dryRun && entry.effect !== "read") writes.push({ step: sid, call: 0, connector: cid, entry, request, response: res, key });
          result = res;
        }
        state.status = "ok";
        state.result = clone(result);
        results.set(sid, result);
      } catch (e) {
        state.status = "failed";
        state.error = errorJSON(e);
        if (run.failedStep === null) {
          run.failedStep = sid;
          run.error = state.error;
        }
        if (!dryRun) break;
      }
    }
    if (run.failedStep !== null) {
      run.status = "failed";
      run.compensation = writes.reverse().map(undoEntry);
    }
    return run;
  }
}

/** The connector a step names (its connector, else its "connector:" prefix), resolved or not. */
function namedConnector(s: StepDocument): string | null {
  if (typeof s.connector === "string") return s.connector;
  const colon = s.operation.indexOf(":");
  return colon >= 0 ? s.operation.slice(0, colon) : null;
}

/** JSON equality: key order does not matter. */
function same(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  if (isRecord(a) || isRecord(b)) {
    if (!isRecord(a) || !isRecord(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
  }
  return a === b;
}

function holds(when: Record<string, unknown>, results: Map<string, unknown>, skipped: Set<string>): boolean {
  const target = when.$ref as string;
  let found = false;
  let v: unknown;
  if (results.has(target) && !skipped.has(target)) [found, v] = lookup(results.get(target), when.path);
  if ("equals" in when) return found && same(v, when.equals);
  if ("exists" in when) return (found && v !== null && v !== undefined) === Boolean(when.exists);
  return found && truthy(v);
}

function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (isRecord(v)) return Object.keys(v).length > 0;
  return Boolean(v);
}

function describe(r: Record<string, unknown>): string {
  return r.path ? `ref(${JSON.stringify(r.$ref)}, ${JSON.stringify(r.path)})` : `ref(${JSON.stringify(r.$ref)})`;
}

function value(v: unknown, results: Map<string, unknown>, element: unknown, dryRun: boolean): unknown {
  if (isRef(v)) {
    const target = v.$ref as string;
    if (dryRun) return new Placeholder(`<${join(target, v.path)}>`);
    const [found, got] = results.has(target) ? lookup(results.get(target), v.path) : [false, undefined];
    if (!found) {
      throw new ComposeError("unresolved_ref", `${describe(v)} names nothing in the result of step ${JSON.stringify(target)}.`, {
        ref: target,
        path: v.path ?? null,
      });
    }
    return clone(got);
  }
  if (isItem(v)) {
    if (element instanceof Placeholder) return new Placeholder(`<${join("item", v.$item)}>`);
    const [found, got] = lookup(element, v.$item);
    if (!found) {
      throw new ComposeError("unresolved_ref", `item(${JSON.stringify(v.$item)}) names nothing in the element.`, { item: v.$item });
    }
    return clone(got);
  }
  if (Array.isArray(v)) return v.map((x) => value(x, results, element, dryRun));
  if (isRecord(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = value(x, results, element, dryRun);
    return out;
  }
  return v;
}

function mapped(source: string, request: Record<string, unknown>, response: unknown, key: unknown): [boolean, unknown] {
  if (source === "idempotency_key") return [key !== undefined && key !== null, key];
  for (const [root, v] of [
    ["request", request],
    ["response", response],
  ] as const) {
    if (source.startsWith(root + ".") || source.startsWith(root + "[")) {
      const rest = source.slice(root.length);
      try {
        return lookup(v, rest.startsWith(".") ? rest.slice(1) : rest);
      } catch {
        return [false, undefined];
      }
    }
  }
  return [false, undefined];
}

function undoEntry(w: WriteCall): CompensationEntry {
  const out: CompensationEntry = {
    step: w.step,
    call: w.call,
    connector: w.connector,
    operation: w.entry.id,
    effect_class: w.entry.effectClass,
  };
  const undo = w.entry.undo;
  if (!undo) {
    out.reason = `${w.entry.id} is ${w.entry.effectClass}: nothing undoes it`;
    return out;
  }
  const args: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(undo.arguments)) {
    if (typeof source !== "string") {
      args[name] = clone(source.const);
      continue;
    }
    const optional = source.endsWith("?");
    const [found, v] = mapped(optional ? source.slice(0, -1) : source, w.request, w.response, w.key);
    if (!found || v === null || v === undefined) {
      if (optional) continue;
      out.reason = `undo unavailable: ${source} names nothing in this call`;
      return out;
    }
    args[name] = clone(v);
  }
  out.undo = { kind: undo.kind, operation: undo.operation, arguments: args };
  return out;
}

// Composite -----------------------------------------------------------------------------------

/** Options every connector client gets, and per-connector options under `connectors`. */
export type CompositeOptions = Partial<ConnectorOptions> & {
  /** The connectors to use (default all), each with its own client options. */
  connectors?: string[] | Record<string, Partial<ConnectorOptions> | undefined>;
};

type Method = (input: Record<string, unknown>, options: Record<string, unknown>) => Promise<unknown>;

function envName(cid: string): string {
  return cid.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

/**
 * One client over every composed connector. Each connector's client is built with
 * `gatewayConnector: <connector>` plus the options; outside gateway mode
 * `ANVIL_<CONNECTOR>_BASE_URL` sets `baseUrl`. Every call is that SDK's own method.
 */
export class Composite {
  readonly #conns = new Map<string, CatalogConnector>();
  readonly #ops = new Map<string, Map<string, CatalogOperation>>();
  readonly #per = new Map<string, Partial<ConnectorOptions>>();
  readonly #options: Partial<ConnectorOptions>;
  readonly #clients = new Map<string, object>();

  constructor(options: CompositeOptions = {}) {
    const { connectors, ...shared } = options;
    this.#options = shared as Partial<ConnectorOptions>;
    const byId = new Map(CATALOG.connectors.map((c) => [c.id, c]));
    const want = new Map<string, Partial<ConnectorOptions>>();
    if (connectors === undefined) {
      for (const id of byId.keys()) want.set(id, {});
    } else {
      const entries: [string, Partial<ConnectorOptions> | undefined][] = Array.isArray(connectors)
        ? connectors.map((c): [string, undefined] => [c, undefined])
        : Object.entries(connectors);
      for (const [id, o] of entries) {
        if (!byId.has(id)) {
          throw new ComposeError("unknown_connector", `No connector ${JSON.stringify(id)} in this composite (it has: ${[...byId.keys()].join(", ")}).`, {
            connector: id,
          });
        }
        want.set(id, o ?? {});
      }
    }
    for (const c of CATALOG.connectors) {
      if (!want.has(c.id)) continue;
      this.#conns.set(c.id, c);
      this.#per.set(c.id, want.get(c.id)!);
      this.#ops.set(c.id, new Map(c.operations.map((op) => [op.id, op])));
    }
  }

  /** `[{id, title, service, operations}]` for every connector of this composite. */
  connectors(): { id: string; title: string; service: { id: string; version: string }; operations: number }[] {
    return [...this.#conns.values()].map((c) => ({ id: c.id, title: c.title, service: { ...c.service }, operations: c.operations.length }));
  }

  /** Every callable operation (of one connector, when given) as the catalog describes it. */
  operations(connector?: string): ({ connector: string; qualified: string } & CatalogOperation)[] {
    if (connector !== undefined && !this.#conns.has(connector)) throw this.#unknownConnector(connector);
    const out: ({ connector: string; qualified: string } & CatalogOperation)[] = [];
    for (const [cid, c] of this.#conns) {
      if (connector !== undefined && cid !== connector) continue;
      for (const op of c.operations) out.push({ connector: cid, qualified: `${cid}:${op.id}`, ...clone(op) });
    }
    return out;
  }

  /** A plain-text summary of the connectors and their operations. */
  describe(): string {
    const lines = [`Composite over ${this.#conns.size} connector(s).`];
    for (const [cid, c] of this.#conns) {
      lines.push("", `${cid}: ${c.title} (${c.operations.length} operation(s))`);
      for (const op of c.operations) {
        const inputs = op.inputs.map((i) => i.key + (i.required ? "" : "?")).join(", ");
        const effect = op.effect === "read" ? "read" : `write, ${op.effectClass}`;
        const notes: string[] = [];
        if (op.confirm) notes.push("needs confirm");
        if (op.undo) notes.push(`undo: ${op.undo.kind} ${op.undo.operation}`);
        for (const n of op.needs ?? []) notes.push(`${n.argument} from ${n.from.map((p) => p.operation).join(" or ")}`);
        lines.push(`  ${op.id}(${inputs}) — ${effect}${notes.length ? "; " + notes.join("; ") : ""}`);
      }
    }
    return lines.join("\n") + "\n";
  }

  #unknownConnector(cid: unknown): ComposeError {
    return new ComposeError(
      "unknown_connector",
      `No connector ${JSON.stringify(cid)} in this composite (it has: ${[...this.#conns.keys()].join(", ") || "none"}).`,
      { connector: cid },
    );
  }

  /** The connector and catalog entry of an operation id (or "connector:operation"). */
  lookup(op: string, connector?: string): [string, CatalogOperation] {
    if (typeof op !== "string" || op === "") {
      throw new ComposeError("unknown_operation", `An operation is named by its AIR id, not ${JSON.stringify(op)}.`);
    }
    let id = op;
    let cid = connector;
    const colon = op.indexOf(":");
    if (colon >= 0) {
      const prefix = op.slice(0, colon);
      id = op.slice(colon + 1);
      if (cid !== undefined && cid !== prefix) {
        throw new ComposeError("unknown_connector", `The step names connector ${JSON.stringify(cid)} but its operation says ${JSON.stringify(prefix)}.`, {
          connector: cid,
        });
      }
      cid = prefix;
    }
    if (cid !== undefined) {
      const ops = this.#ops.get(cid);
      if (!ops) throw this.#unknownConnector(cid);
      const entry = ops.get(id);
      if (!entry) {
        throw new ComposeError("unknown_operation", `Connector ${JSON.stringify(cid)} has no operation ${JSON.stringify(id)}.`, {
          connector: cid,
          operation: id,
        });
      }
      return [cid, entry];
    }
    const matches: [string, CatalogOperation][] = [];
    for (const [c, ops] of this.#ops) {
      const entry = ops.get(id);
      if (entry) matches.push([c, entry]);
    }
    if (matches.length === 0) {
      throw new ComposeError("unknown_operation", `No connector of this composite has operation ${JSON.stringify(id)}.`, { operation: id });
    }
    if (matches.length > 1) {
      const cids = matches.map(([c]) => c);
      throw new ComposeError(
        "ambiguous_operation",
        `${JSON.stringify(id)} is an operation of ${cids.join(" and ")}: name its connector ("<connector>:${id}").`,
        { operation: id, connectors: cids },
      );
    }
    return matches[0];
  }

  /** The catalog entry of an operation id (or "connector:operation"), with its connector. */
  resolve(op: string, connector?: string): { connector: string; qualified: string } & CatalogOperation {
    const [cid, entry] = this.lookup(op, connector);
    return { connector: cid, qualified: `${cid}:${entry.id}`, ...clone(entry) };
  }

  /** The SDK client of a connector (built on first use). */
  client(cid: string): object {
    if (!this.#conns.has(cid)) throw this.#unknownConnector(cid);
    const have = this.#clients.get(cid);
    if (have) return have;
    const factory = CLIENTS[cid];
    if (!factory) throw new ComposeError("connector_missing", `The SDK of connector ${JSON.stringify(cid)} is not imported.`, { connector: cid });
    const opts: Record<string, unknown> = { ...this.#options, ...this.#per.get(cid), gatewayConnector: cid };
    if (!opts.gatewayUrl && !process.env.ANVIL_GATEWAY_URL && opts.baseUrl === undefined) {
      const base = process.env[`ANVIL_${envName(cid)}_BASE_URL`];
      if (base) opts.baseUrl = base;
    }
    const client = factory.create(opts as ConnectorOptions);
    this.#clients.set(cid, client);
    return client;
  }

  /** One call through the SDK's own method; resolves to [the request by input key, the result]. */
  async invoke(
    cid: string,
    entry: CatalogOperation,
    args: Record<string, unknown>,
    confirm: boolean,
    idempotencyKey: unknown,
    dryRun: boolean,
  ): Promise<[Record<string, unknown>, unknown]> {
    if (!isRecord(args)) throw new ComposeError("invalid_flow", `The arguments of ${entry.id} must be an object.`);
    const request: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(args)) {
      const input = entry.inputs.find((i) => i.key === name) ?? entry.inputs.find((i) => i.wire === name);
      if (!input) {
        throw new ComposeError("unknown_input", `${entry.id} takes no input ${JSON.stringify(name)}.`, { operation: entry.id, input: name });
      }
      if (v !== null && v !== undefined) request[input.key] = v;
    }
    if (dryRun) {
      for (const [k, v] of Object.entries(request)) {
        if (v instanceof Placeholder) request[k] = standIn(INPUT_TYPES[cid]?.[entry.id]?.[k] ?? "", v);
      }
    }
    const client = this.client(cid);
    const fn = (client as unknown as Record<string, unknown>)[entry.method.typescript];
    if (typeof fn !== "function") {
      throw new ComposeError("connector_missing", `The SDK of connector ${JSON.stringify(cid)} has no method ${entry.method.typescript}.`, {
        connector: cid,
      });
    }
    const options: Record<string, unknown> = { confirm };
    if (idempotencyKey !== undefined && idempotencyKey !== null) options.idempotencyKey = String(idempotencyKey);
    if (dryRun) options.dryRun = true;
    const result = await (fn as Method).call(client, clone(request), options);
    return [request, result];
  }

  /** Call one operation (an AIR id, or "connector:operation") through its SDK. */
  async call(op: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<unknown> {
    const [cid, entry] = this.lookup(op, options.connector);
    const [, result] = await this.invoke(cid, entry, args, options.confirm === true, options.idempotencyKey, options.dryRun === true);
    return result;
  }

  /** A new, empty flow. */
  flow(name: string): Flow {
    return new Flow(this, name);
  }

  /** A flow from an anvil.compose-flow/v1 document: an object, a JSON string, or a file path. */
  load(source: unknown): Flow {
    let doc = source;
    if (typeof source === "string") {
      let text = source;
      if (!source.trimStart().startsWith("{")) {
        try {
          text = readFileSync(source, "utf8");
        } catch (e) {
          throw new ComposeError("invalid_flow", `The flow file cannot be read: ${(e as Error).message}`);
        }
      }
      try {
        doc = JSON.parse(text);
      } catch (e) {
        throw new ComposeError("invalid_flow", `The flow is not valid JSON: ${(e as Error).message}`);
      }
    }
    return Flow.fromJSON(this, doc);
  }

  /**
   * Make the undo calls a failed run lists, newest first. Each is an ordinary call under the same
   * grant, passing `confirm` as given: without it an undo that needs confirmation is refused by the
   * SDK's own gate. One outcome per entry: status "ok" with result, "failed" with error, or "not_undoable".
   */
  async compensate(run: Run | RunJSON, options: CompensateOptions = {}): Promise<CompensationOutcome[]> {
    const entries = (run as { compensation?: unknown }).compensation;
    if (!Array.isArray(entries)) throw new ComposeError("invalid_flow", "compensate() takes a run (or its toJSON()).");
    const outcomes: CompensationOutcome[] = [];
    for (const e of entries as CompensationEntry[]) {
      const base = clone(e);
      if (!e.undo) {
        outcomes.push({ ...base, status: "not_undoable" });
        continue;
      }
      try {
        const result = await this.call(e.undo.operation, e.undo.arguments, {
          connector: e.connector,
          confirm: options.confirm === true,
          dryRun: options.dryRun === true,
        });
        outcomes.push({ ...base, status: "ok", result: clone(result) });
      } catch (err) {
        outcomes.push({ ...base, status: "failed", error: errorJSON(err) });
      }
    }
    return outcomes;
  }
}
