// Unit tests of the composite's TypeScript flow engine (templates/compose/typescript/src/flow.ts),
// over the fixture catalog of this directory and the stand-in SDK shop-sdk.ts.
// templates/runtime_test.go renders catalog.ts and clients.ts for them, type-checks everything
// with tsc --strict and runs this file with node --test.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ComposeError, Composite, PLAN_SCHEMA, item, ref } from "./index.js";
import { ITEMS, SENT } from "./shop-sdk.js";

test("plan: nodes, depends_on and order follow the references", () => {
  const c = new Composite();
  const f = c.flow("close-all");
  const items = f.step("items", "shop.items.list", { owner: "o" });
  f.map("close", "shop.items.close", items, { owner: "o", number: item("number") }, { confirm: true });
  const plan = f.plan();
  assert.equal(plan.schema, PLAN_SCHEMA);
  assert.deepEqual(
    plan.nodes.map((n) => [n.id, n.depends_on]),
    [
      ["items", []],
      ["close", ["items"]],
    ],
  );
  assert.deepEqual(f.order(), ["items", "close"]);
  assert.match(f.mermaid(), /s0 --> s1/);
});

test("validate: unknown operations, missing inputs and unconfirmed writes", () => {
  const c = new Composite();
  const f = c.flow("v");
  f.step("a", "shop.nope", {});
  f.step("close", "shop.items.close", { owner: "o" });
  assert.deepEqual(
    f.validate().map((x) => [x.level, x.code, x.step]),
    [
      ["error", "unknown_operation", "a"],
      ["error", "missing_input", "close"],
      ["error", "confirmation_required", "close"],
    ],
  );
  assert.throws(() => f.step("a", "shop.items.list", { owner: "o" }), (e: unknown) => e instanceof ComposeError && e.code === "duplicate_step");
  assert.throws(() => new Composite({ connectors: ["nope"] }), (e: unknown) => e instanceof ComposeError && e.code === "unknown_connector");
});

test("run: each call is the SDK's own method, under the connector's id, in dependency order", async () => {
  SENT.length = 0;
  ITEMS.clear();
  ITEMS.set(1, true).set(2, true);
  const c = new Composite();
  const f = c.flow("close-all");
  const items = f.step("items", "shop.items.list", { owner: "o" });
  f.map("close", "shop.items.close", items, { owner: "o", number: item("number") }, { confirm: true });
  f.step("again", "shop.items.list", { owner: ref("items", "[0].number") }, { after: ["close"] });
  const run = await f.run();
  assert.equal(run.ok, true, JSON.stringify(run.toJSON()));
  assert.deepEqual(
    SENT.map((s) => [s.method, s.connector, s.input.number ?? s.input.owner, s.options.confirm]),
    [
      ["listItem", "shop", "o", false],
      ["closeItem", "shop", 1, true],
      ["closeItem", "shop", 2, true],
      ["listItem", "shop", 1, false],
    ],
  );
  assert.deepEqual([...ITEMS.values()], [false, false]);
});

test("a failed run lists each completed write's undo, newest first; compensate makes them", async () => {
  SENT.length = 0;
  ITEMS.clear();
  ITEMS.set(1, true).set(2, true);
  const c = new Composite();
  const f = c.flow("close-then-fail");
  const items = f.step("items", "shop.items.list", { owner: "o" });
  f.map("close", "shop.items.close", items, { owner: "o", number: item("number") }, { confirm: true });
  f.step("missing", "shop.items.close", { owner: "o", number: 3 }, { confirm: true, after: ["close"] });
  const run = await f.run();
  assert.equal(run.ok, false);
  assert.deepEqual(
    run.compensation.map((e) => [e.step, e.undo?.operation, e.undo?.arguments]),
    [
      ["close", "shop.items.reopen", { owner: "o", number: 2 }],
      ["close", "shop.items.reopen", { owner: "o", number: 1 }],
    ],
  );
  const outcomes = await f.compensate(run, { confirm: true });
  assert.equal(outcomes.length, 2);
  assert.deepEqual([...ITEMS.values()], [true, true]);
  assert.deepEqual(
    SENT.filter((s) => s.method === "reopenItem").map((s) => s.input.number),
    [2, 1],
  );
});

test("dryRun: every step runs with dryRun and nothing changes", async () => {
  SENT.length = 0;
  ITEMS.clear();
  ITEMS.set(1, true);
  const c = new Composite();
  const f = c.flow("preview");
  f.step("close", "shop.items.close", { owner: "o", number: 1 }, { confirm: true });
  const run = await f.dryRun();
  assert.equal(run.ok, true);
  assert.deepEqual(SENT.map((s) => s.options.dryRun), [true]);
  assert.equal(ITEMS.get(1), true);
});
