// Unit tests of the TypeScript SDK's verbatim modules (templates/typescript/src/*.ts).
// templates/runtime_test.go copies them beside this file with a spec.ts rendered from
// spec.ts.tmpl (connector "shop"), type-checks everything with tsc --strict and runs
// the output with node --test.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { AnvilError, ERROR_CLASSES, ERROR_CODES, PolicyDenied, UnknownUpstreamError, isErrorCode } from "./errors.ts";
import { DEFAULT_CONNECTOR, GatewayTransport, decodeToolResult, httpError, jsonrpcError, toolsUrl } from "./gateway.ts";
import type { ToolResult, TransportCallOptions } from "./gateway.ts";
import { invoke, operationFor, retryDelayMs } from "./invoke.ts";
import { canonicalJson, checkConfirmation, deriveIdempotencyKey, resolveIdempotencyKey } from "./safety.ts";
import { SPEC } from "./spec.ts";

test("errors: unknown codes become unknown_upstream_error; toJSON adds set fields only", () => {
  assert.equal(new AnvilError("nope", "m").code, "unknown_upstream_error");
  assert.ok(isErrorCode("not_found") && !isErrorCode("nope"));
  assert.equal(ERROR_CODES.length, 15);
  const e = new AnvilError("conflict", "m", { operation: "o", requiredArguments: ["x"] });
  assert.deepEqual(e.toJSON(), {
    code: "conflict", message: "m", retryable: false, safe_to_retry: false, operation: "o", trace_id: null,
    required_arguments: ["x"],
  });
});

test("safety: canonical JSON, derived keys and the local gates", () => {
  assert.equal(canonicalJson({ b: 1, a: [true, null], c: undefined }), '{"a":[true,null],"b":1}');
  const want = createHash("sha256").update('op\u0000{"a":"é"}', "utf8").digest("hex").slice(0, 32);
  assert.equal(deriveIdempotencyKey("op", { a: "é" }), "anvil-" + want);
  const del = SPEC.operations["deleteItem"];
  const pay = SPEC.operations["pay"];
  assert.ok(del !== undefined && pay !== undefined);
  assert.throws(() => checkConfirmation(del, false), (e: unknown) => e instanceof AnvilError && e.code === "confirmation_required");
  checkConfirmation(del, true);
  assert.throws(() => resolveIdempotencyKey(pay, undefined, {}), (e: unknown) => e instanceof AnvilError && e.code === "idempotency_required");
  assert.match(resolveIdempotencyKey(del, undefined, { id: 1 }) ?? "", /^anvil-[0-9a-f]{32}$/);
  assert.equal(resolveIdempotencyKey(del, "k", {}), "k");
});

test("decodeToolResult: plan, unvalidated, JSON text, result, structured content, errors", () => {
  assert.deepEqual(decodeToolResult({ structuredContent: { anvil_dry_run: { p: 1 } } }), { p: 1 });
  assert.equal(decodeToolResult({ structuredContent: { anvil_unvalidated: "raw" } }), "raw");
  assert.deepEqual(decodeToolResult({ content: [{ type: "text", text: "[1]" }], structuredContent: { result: 2 } }), [1]);
  assert.equal(decodeToolResult({ content: [{ type: "text", text: "x" }], structuredContent: { result: 2 } }), 2);
  const env = { error: { code: "policy_denied", message: "no", trace_id: "t", required_flags: ["--issue-number"] } };
  assert.throws(
    () => decodeToolResult({ isError: true, content: [{ type: "text", text: JSON.stringify(env) }] }, "op"),
    (e: unknown) =>
      e instanceof AnvilError && e.code === "policy_denied" && e.traceId === "t" && e.requiredArguments[0] === "issue_number",
  );
});

test("httpError and jsonrpcError: the envelope's code wins, else the status alone decides", async () => {
  const refusal = (status: number, code: string, extra: Record<string, unknown> = {}): AnvilError =>
    httpError(status, JSON.stringify({ error: { code, message: code + " here", ...extra } }), "op");
  const confirm = refusal(428, "confirmation_required", { required_flags: ["--confirm"] });
  assert.deepEqual([confirm.code, confirm.message, confirm.requiredArguments, confirm.details.http_status],
    ["confirmation_required", "confirmation_required here", ["confirm"], 428]);
  assert.equal(refusal(409, "conflict").code, "conflict");
  assert.equal(refusal(404, "not_found").code, "not_found");
  const limited = refusal(429, "too_many_pending");
  assert.deepEqual([limited.code, limited.details.code, limited.retryable], ["rate_limited", "too_many_pending", true]);
  assert.equal(refusal(503, "whatever").code, "upstream_unavailable");
  assert.equal(httpError(401, "", undefined).code, "auth_required");
  assert.equal(httpError(428, "nope", undefined).code, "confirmation_required");
  assert.equal(httpError(502, "", undefined).code, "upstream_unavailable");
  assert.equal(jsonrpcError({ code: -32602, message: "bad" }, "op").code, "unsupported_operation");
  const rpc = jsonrpcError({ code: -32602, message: "bad", data: { error: { code: "confirmation_required" } } }, "op");
  assert.deepEqual([rpc.code, rpc.message, rpc.details.jsonrpc_code], ["confirmation_required", "bad", -32602]);

  // Through callTool: a tools/call refused with 428 rejects with confirmation_required.
  const fake = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const msg = init?.body ? (JSON.parse(String(init.body)) as { method: string }) : undefined;
    if (msg?.method === "initialize") {
      return new Response(JSON.stringify({ jsonrpc: "2.0", id: 1, result: {} }), { headers: { "Content-Type": "application/json" } });
    }
    if (msg?.method === "tools/call") {
      return new Response(JSON.stringify({ error: { code: "confirmation_required", message: "needs confirm" } }), { status: 428 });
    }
    return new Response(null, { status: 202 });
  };
  const t = new GatewayTransport("http://127.0.0.1:1/mcp", { tokenProvider: () => "tok", gatewayConnector: "shop", fetch: fake as typeof fetch });
  await assert.rejects(t.callTool("shop__shop_delete_item", {}), (e: unknown) => e instanceof AnvilError && e.code === "confirmation_required");
});

test("GatewayTransport: connector from option, environment, then DEFAULT_CONNECTOR", () => {
  assert.equal(DEFAULT_CONNECTOR, "shop");
  const saved = process.env.ANVIL_GATEWAY_CONNECTOR;
  try {
    delete process.env.ANVIL_GATEWAY_CONNECTOR;
    assert.equal(new GatewayTransport("http://gw/mcp").connector, "shop");
    process.env.ANVIL_GATEWAY_CONNECTOR = "env_shop";
    assert.equal(new GatewayTransport("http://gw/mcp").connector, "env_shop");
    assert.equal(new GatewayTransport("http://gw/mcp", { gatewayConnector: "arg" }).connector, "arg");
  } finally {
    if (saved === undefined) delete process.env.ANVIL_GATEWAY_CONNECTOR;
    else process.env.ANVIL_GATEWAY_CONNECTOR = saved;
  }
  assert.throws(() => new GatewayTransport("http://u:p@gw/mcp"), AnvilError);
});

test("GatewayTransport.callTool: one session, token read from its file, SSE answer", async () => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const msg = body ? (JSON.parse(body) as { id?: number; method: string; params?: unknown }) : undefined;
      seen.push(req.method + " " + (msg?.method ?? "") + " " + (req.headers.authorization ?? "") + " " + (req.headers["mcp-session-id"] ?? ""));
      if (req.method === "DELETE" || msg?.method === "notifications/initialized") {
        res.writeHead(req.method === "DELETE" ? 204 : 202).end();
        return;
      }
      if (msg?.method === "initialize") {
        res.writeHead(200, { "Content-Type": "application/json", "Mcp-Session-Id": "s-1" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18" } }));
        return;
      }
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      const result = { content: [{ type: "text", text: JSON.stringify(msg?.params) }] };
      res.end("data: " + JSON.stringify({ jsonrpc: "2.0", id: msg?.id, result }) + "\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const dir = mkdtempSync(join(tmpdir(), "anvil-ts-runtime-"));
  try {
    const tokenFile = join(dir, "token");
    writeFileSync(tokenFile, " tok\n");
    const url = "http://127.0.0.1:" + (server.address() as AddressInfo).port + "/mcp";
    const t = new GatewayTransport(url, { tokenFile, gatewayConnector: "shop" });
    const result = await t.callTool("shop__shop_list_item", { page: 2 });
    assert.deepEqual(decodeToolResult(result), { name: "shop__shop_list_item", arguments: { page: 2 } });
    assert.deepEqual(seen, [
      "POST initialize Bearer tok ",
      "POST notifications/initialized Bearer tok s-1",
      "POST tools/call Bearer tok s-1",
      "DELETE  Bearer tok s-1",
    ]);
    const missing = new GatewayTransport(url, { tokenFile: join(dir, "missing") });
    await assert.rejects(missing.callTool("x", {}), (e: unknown) => e instanceof AnvilError && e.code === "auth_required");
    // Without a token file a loopback gateway (auth mode none) gets no
    // Authorization; any other gateway is refused before anything is sent.
    const saved = process.env.ANVIL_GATEWAY_TOKEN_FILE;
    delete process.env.ANVIL_GATEWAY_TOKEN_FILE;
    try {
      seen.length = 0;
      await new GatewayTransport(url, { gatewayConnector: "shop" }).callTool("shop__shop_list_item", {});
      assert.deepEqual(seen[0], "POST initialize  ");
      const remote = new GatewayTransport("http://gateway.example/mcp", { gatewayConnector: "shop" });
      await assert.rejects(remote.callTool("x", {}), (e: unknown) => e instanceof AnvilError && e.code === "auth_required");
      assert.equal(seen.length, 4);
    } finally {
      if (saved !== undefined) process.env.ANVIL_GATEWAY_TOKEN_FILE = saved;
    }
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("operationFor: method names, AIR ids and tool names as effect reports give them", () => {
  assert.equal(operationFor("deleteItem", "shop")?.id, "shop.items.delete");
  assert.equal(operationFor("shop.items.delete", "shop")?.id, "shop.items.delete");
  assert.equal(operationFor("shop_delete_item", "shop")?.id, "shop.items.delete");
  assert.equal(operationFor("shop__shop_delete_item", "shop")?.id, "shop.items.delete");
  assert.equal(operationFor("team_shop__shop_delete_item", "team_shop")?.id, "shop.items.delete");
  assert.equal(operationFor("other__shop_delete_item", "shop"), undefined);
  assert.equal(operationFor("nope", "shop"), undefined);
});

test("invoke: gates, controls, the effect report before the result, and no gateway", async () => {
  const del = SPEC.operations["deleteItem"];
  assert.ok(del !== undefined);
  const sent: { name: string; args: Record<string, unknown>; options: TransportCallOptions }[] = [];
  const fake = {
    connector: "shop",
    async callTool(name: string, args: Record<string, unknown>, options: TransportCallOptions = {}): Promise<ToolResult> {
      sent.push({ name, args, options });
      return { isError: true, content: [{ type: "text", text: '{"error":{"code":"conflict","message":"no"}}' }], _meta: { effect: { class: "reversible" } } };
    },
  } as unknown as GatewayTransport;
  const effects: unknown[] = [];
  await assert.rejects(
    invoke(fake, del, { id: 4, gone: undefined }, { confirm: true, dryRun: true }, (e) => effects.push(e)),
    (e: unknown) => e instanceof AnvilError && e.code === "conflict",
  );
  assert.equal(sent.length, 1);
  assert.equal(sent[0]?.name, "shop__shop_delete_item");
  const args = sent[0]?.args ?? {};
  assert.deepEqual(Object.keys(args).sort(), ["anvil_dry_run", "confirm", "id", "idempotency_key"]);
  assert.match(String(args.idempotency_key), /^anvil-/);
  assert.deepEqual(effects, [null, { class: "reversible" }]);
  await assert.rejects(invoke(fake, del, { id: 1 }, {}, () => {}), (e: unknown) => e instanceof AnvilError && e.code === "confirmation_required");
  await assert.rejects(invoke(null, del, { id: 1 }, { confirm: true }, () => {}), (e: unknown) => e instanceof AnvilError && e.code === "validation_error");
  assert.equal(sent.length, 1);
});

test("toolsUrl: the GET /tools route beside the gateway's MCP endpoint", () => {
  assert.equal(toolsUrl("http://127.0.0.1:8931/mcp", { search: "list items", connector: "shop", limit: undefined }),
    "http://127.0.0.1:8931/tools?search=list+items&connector=shop");
  assert.equal(toolsUrl("https://gw.example/anvil/mcp/?x=1#f", { search: "a&b", limit: "5" }), "https://gw.example/anvil/tools?search=a%26b&limit=5");
});

test("every code has its AnvilError subclass", () => {
  for (const code of ERROR_CODES) {
    const e = new AnvilError(code, "m", { operation: "o" });
    assert.ok(e instanceof ERROR_CLASSES[code]);
    assert.ok(e instanceof AnvilError);
    assert.ok(e instanceof Error);
    assert.equal(e.code, code);
    assert.equal(e.name, ERROR_CLASSES[code].name);
    assert.equal(e.operation, "o");
  }
  assert.ok(new AnvilError("nope", "m") instanceof UnknownUpstreamError);
  assert.ok(new PolicyDenied("policy_denied", "m") instanceof PolicyDenied);
});

/** A transport answering each call with the next of answers (an error to throw or a result). */
function flaky(answers: Array<Error | ToolResult>, maxRetries = 2) {
  const calls: Array<Record<string, unknown>> = [];
  const transport = {
    connector: "shop",
    maxRetries,
    async callTool(_name: string, args: Record<string, unknown>): Promise<ToolResult> {
      calls.push({ ...args });
      const next = answers.shift();
      if (next instanceof Error) throw next;
      return next as ToolResult;
    },
  };
  return { transport: transport as unknown as GatewayTransport, calls };
}

const limited = () => new AnvilError("rate_limited", "slow down", { retryable: true, retryAfterMs: 1 });
const ok: ToolResult = { content: [{ type: "text", text: "[1]" }] };

test("reads and keyed writes are retried; other writes and codes are not", async () => {
  let f = flaky([limited(), limited(), ok]);
  assert.deepEqual(await invoke(f.transport, SPEC.operations.listItem, {}, {}, () => {}), [1]);
  assert.equal(f.calls.length, 3);
  f = flaky([limited(), limited(), ok], 1);
  await assert.rejects(invoke(f.transport, SPEC.operations.listItem, {}, {}, () => {}), (e: unknown) => e instanceof AnvilError && e.code === "rate_limited");
  assert.equal(f.calls.length, 2);
  f = flaky([limited(), ok]);
  await invoke(f.transport, SPEC.operations.deleteItem, { id: 1 }, { confirm: true }, () => {});
  assert.equal(f.calls.length, 2);
  assert.equal(f.calls[0].idempotency_key, f.calls[1].idempotency_key);
  f = flaky([new AnvilError("not_found", "no", { retryable: true }), ok]);
  await assert.rejects(invoke(f.transport, SPEC.operations.listItem, {}, {}, () => {}));
  assert.equal(f.calls.length, 1);
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => retryDelayMs(i, null)), [500, 1000, 2000, 4000, 8000, 8000]);
  assert.equal(retryDelayMs(0, 1500), 1500);
});
