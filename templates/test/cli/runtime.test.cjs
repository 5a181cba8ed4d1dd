// Unit tests of templates/cli/runtime.cjs, the runtime every bin/<connector> embeds verbatim.
// Run with `node --test` (templates/runtime_test.go does, from `go test ./templates`).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const http = require("node:http");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const cli = require("../../cli/runtime.cjs");

const FLAGS = { input: "input", body: "body", confirm: "confirm", idempotencyKey: "idempotency-key", dryRun: "dry-run", json: "json" };

function input(key, type, extra) {
  return Object.assign({ key, name: key, in: "query", flag: key.replace(/_/g, "-"), type, required: false, description: "" }, extra || {});
}

const SPEC = {
  connector: "shop",
  service: { id: "shop", title: "Shop", version: "1" },
  dryRunArg: "anvil_dry_run",
  exitCodes: { validation_error: 2, confirmation_required: 3, auth_required: 4, not_found: 6, upstream_unavailable: 7 },
  operations: [
    {
      id: "shop.items.list", words: ["items", "list"], tool: "shop_list_item", summary: "List items", description: "",
      usage: "shop items list --owner <string>", effect: "read", label: "read", confirm: false, confirmKey: null,
      reason: "", idempotencyKey: null, flags: FLAGS, undo: null, schema: { type: "object" },
      inputs: [
        input("owner", "string", { required: true, in: "path" }),
        input("limit", "integer"),
        input("ratio", "number"),
        input("open", "boolean"),
        input("status", "array", { items: "string" }),
        input("ids", "array", { items: "integer" }),
        input("filter", "object"),
        input("any", ""),
      ],
    },
    {
      id: "shop.items.list_all", words: ["items", "list", "all"], tool: "shop_list_all", summary: "List all", description: "",
      usage: "shop items list all", effect: "read", label: "read", confirm: false, confirmKey: null, reason: "",
      idempotencyKey: null, flags: FLAGS, undo: null, schema: { type: "object" }, inputs: [],
    },
    {
      id: "shop.items.delete", words: ["items", "delete"], tool: "shop_delete_item", summary: "Delete an item", description: "",
      usage: "shop items delete --id <integer>", effect: "mutation", label: "mutation, needs confirm", confirm: true,
      confirmKey: "confirm", reason: "", idempotencyKey: "idempotency_key", flags: FLAGS, undo: null, schema: { type: "object" },
      inputs: [input("id", "integer", { required: true, in: "path" }), input("note", "string", { in: "body" })],
    },
  ],
};

const op = (id) => SPEC.operations.find((o) => o.id === id);
const list = op("shop.items.list");

test("matchOperation takes the longest operation whose words prefix the arguments", () => {
  assert.equal(cli.matchOperation(SPEC, ["items", "list"]).id, "shop.items.list");
  assert.equal(cli.matchOperation(SPEC, ["items", "list", "all"]).id, "shop.items.list_all");
  assert.equal(cli.matchOperation(SPEC, ["items"]), null);
});

test("parseFlags coerces each flag by its schema type", () => {
  const { args } = cli.parseFlags(SPEC, list, [
    "--owner", "octo", "--limit=5", "--ratio", "0.5", "--open", "--ids", "[1,2]", "--filter", '{"a":1}', "--any", "{\"x\":true}",
  ]);
  assert.deepEqual(args, { owner: "octo", limit: 5, ratio: 0.5, open: true, ids: [1, 2], filter: { a: 1 }, any: { x: true } });
});

test("a string is never parsed as JSON, and a plain value of an array flag is one item", () => {
  const { args } = cli.parseFlags(SPEC, list, ["--owner", "123", "--status", "available", "--status", "sold", "--ids", "7"]);
  assert.deepEqual(args, { owner: "123", status: ["available", "sold"], ids: [7] });
  const json = cli.parseFlags(SPEC, list, ["--owner", "o", "--status", '["a","b"]']).args;
  assert.deepEqual(json.status, ["a", "b"]);
});

test("parseFlags refuses bad values, unknown flags and missing required flags", () => {
  const code = (rest) => {
    try {
      cli.parseFlags(SPEC, list, rest);
    } catch (e) {
      assert.ok(e instanceof cli.CliError);
      return e.message;
    }
    return "accepted";
  };
  assert.match(code(["--owner", "o", "--limit", "x"]), /--limit must be an integer/);
  assert.match(code(["--owner", "o", "--ids", "x"]), /--ids must be an integer/);
  assert.match(code(["--owner", "o", "--open", "maybe"]), /must be true or false/);
  assert.match(code(["--owner", "o", "--filter", "[1]"]), /must be a JSON object/);
  assert.match(code(["--owner", "o", "--limt", "1"]), /Unknown flag --limt .*Did you mean --limit\?/);
  assert.match(code(["--limit", "1"]), /Missing required flag\(s\) .*--owner/);
  assert.match(code(["--owner", "o", "stray"]), /Unexpected argument 'stray'/);
});

test("controls: --confirm, --idempotency-key, --dry-run and --body", () => {
  const del = op("shop.items.delete");
  const { args } = cli.parseFlags(SPEC, del, ["--id", "3", "--confirm", "--idempotency-key", "k1", "--dry-run", "--body", '{"note":"n"}']);
  assert.deepEqual(args, { note: "n", id: 3, idempotency_key: "k1", confirm: true, anvil_dry_run: true });
  assert.throws(() => cli.parseFlags(SPEC, list, ["--owner", "o", "--idempotency-key", "k"]), /does not take an idempotency key/);
  assert.throws(() => cli.parseFlags(SPEC, del, ["--id", "1", "--body", '{"nope":1}']), /has no field 'nope'/);
});

test("decode prefers a dry-run plan, then the text as JSON, then structured content", () => {
  assert.deepEqual(cli.decode(SPEC, { structuredContent: { anvil_dry_run: { plan: 1 } }, content: [] }), { plan: 1 });
  assert.deepEqual(cli.decode(SPEC, { content: [{ type: "text", text: "[1]" }], structuredContent: { result: [2] } }), [1]);
  assert.deepEqual(cli.decode(SPEC, { content: [{ type: "text", text: "plain" }], structuredContent: { result: [2] } }), [2]);
  assert.equal(cli.decode(SPEC, { content: [{ type: "text", text: "plain" }] }), "plain");
});

test("exit codes follow the SPEC's table, 1 for anything else", () => {
  assert.equal(cli.exitCodeFor(SPEC, "not_found"), 6);
  assert.equal(cli.exitCodeFor(SPEC, "toString"), 1);
  assert.equal(cli.exitCodeFor(SPEC, "surprise"), 1);
});

test("parseSSE joins data lines per event and skips events that are not JSON", () => {
  const text = 'event: message\ndata: {"id":1,\ndata:  "result":{}}\n\ndata: nope\n\r\ndata: [{"id":2},{"id":3}]\n';
  assert.deepEqual(cli.parseSSE(text), [{ id: 1, result: {} }, { id: 2 }, { id: 3 }]);
});

test("no_proxy matches hosts, suffixes, ports and *", () => {
  const saved = process.env.no_proxy;
  try {
    process.env.no_proxy = "internal.example, .corp:8080,[::1]";
    assert.equal(cli.noProxy("internal.example", 443), true);
    assert.equal(cli.noProxy("a.internal.example", 443), true);
    assert.equal(cli.noProxy("x.corp", 8080), true);
    assert.equal(cli.noProxy("x.corp", 80), false);
    assert.equal(cli.noProxy("::1", 80), true);
    assert.equal(cli.noProxy("example.org", 80), false);
    process.env.no_proxy = "*";
    assert.equal(cli.noProxy("anything", 1), true);
  } finally {
    if (saved === undefined) delete process.env.no_proxy;
    else process.env.no_proxy = saved;
  }
});

// sink collects what main writes.
function sink() {
  const out = { text: "", write(s) { out.text += s; } };
  return out;
}

// gateway is a minimal Streamable HTTP MCP endpoint answering one tools/call.
function gateway(answer) {
  const seen = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const msg = body ? JSON.parse(body) : null;
      seen.push({ method: req.method, auth: req.headers.authorization, session: req.headers["mcp-session-id"], msg });
      if (req.method === "DELETE") return res.writeHead(204).end();
      if (msg.method === "notifications/initialized") return res.writeHead(202).end();
      res.setHeader("Content-Type", msg.method === "initialize" ? "application/json" : "text/event-stream");
      if (msg.method === "initialize") {
        res.setHeader("Mcp-Session-Id", "s-1");
        return res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18" } }));
      }
      res.end("data: " + JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: answer(msg.params) }) + "\n\n");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, seen, url: "http://127.0.0.1:" + server.address().port + "/mcp" })));
}

test("main calls <connector>__<tool> in one session and prints the result", async (t) => {
  const g = await gateway((params) => ({
    content: [{ type: "text", text: JSON.stringify({ called: params.name, args: params.arguments }) }],
    _meta: { effect: { class: "read" } },
  }));
  t.after(() => g.server.close());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "anvil-cli-"));
  const tokenFile = path.join(dir, "token");
  fs.writeFileSync(tokenFile, "tok\n");
  const saved = { ...process.env };
  t.after(() => {
    process.env = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  process.env.ANVIL_GATEWAY_URL = g.url;
  process.env.ANVIL_GATEWAY_TOKEN_FILE = tokenFile;
  delete process.env.ANVIL_GATEWAY_CONNECTOR;
  for (const k of ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]) delete process.env[k];

  const stdout = sink(), stderr = sink();
  const code = await cli.main(SPEC, ["items", "list", "--owner", "o", "--status", "sold", "--json"], { stdout, stderr });
  assert.equal(code, 0, stderr.text);
  assert.deepEqual(JSON.parse(stdout.text), {
    data: { called: "shop__shop_list_item", args: { owner: "o", status: ["sold"] } },
    effect: { class: "read" },
  });
  assert.deepEqual(g.seen.map((s) => s.method + " " + (s.msg ? s.msg.method : "")), [
    "POST initialize", "POST notifications/initialized", "POST tools/call", "DELETE ",
  ]);
  assert.ok(g.seen.every((s) => s.auth === "Bearer tok"));
  assert.equal(g.seen[2].session, "s-1");

  // Without a token file, a loopback gateway (auth mode none) is called
  // without Authorization; any other gateway is refused before anything
  // is sent.
  delete process.env.ANVIL_GATEWAY_TOKEN_FILE;
  const seenBefore = g.seen.length;
  const loopback = sink();
  assert.equal(await cli.main(SPEC, ["items", "list", "--owner", "o"], { stdout: sink(), stderr: loopback }), 0, loopback.text);
  assert.equal(g.seen.length, seenBefore + 4);
  assert.ok(g.seen.slice(seenBefore).every((s) => s.auth === undefined));
  const noToken = sink();
  process.env.ANVIL_GATEWAY_URL = "http://gateway.invalid/mcp";
  assert.equal(await cli.main(SPEC, ["items", "list", "--owner", "o"], { stdout: sink(), stderr: noToken }), 4);
  assert.equal(JSON.parse(noToken.text).error.code, "auth_required");
  assert.equal(g.seen.length, seenBefore + 4);
});

test("httpError and rpcError: the envelope's code wins, else the status alone decides", () => {
  const op = { id: "shop.items.delete" };
  const res = (status, body) => ({ status, headers: {}, body: typeof body === "string" ? body : JSON.stringify(body) });
  const confirm = cli.httpError(SPEC, res(428, { error: { code: "confirmation_required", message: "pass --confirm", required_flags: ["--confirm"] } }), op);
  assert.deepEqual([confirm.code, confirm.message, confirm.extra.details.http_status, confirm.extra.required_flags],
    ["confirmation_required", "pass --confirm", 428, ["--confirm"]]);
  assert.equal(cli.exitCodeFor(SPEC, confirm.code), 3);
  assert.equal(cli.httpError(SPEC, res(404, { error: { code: "not_found" } }), op).code, "not_found");
  assert.equal(cli.httpError(SPEC, res(428, "not json"), op).code, "confirmation_required");
  assert.equal(cli.httpError(SPEC, res(401, ""), op).code, "auth_required");
  const odd = cli.httpError(SPEC, res(502, { error: { code: "too_many_pending" } }), op);
  assert.deepEqual([odd.code, odd.extra.details.code], ["upstream_unavailable", "too_many_pending"]);
  assert.equal(cli.rpcError(SPEC, { code: -32602, message: "bad" }, op).code, "unsupported_operation");
  const rpc = cli.rpcError(SPEC, { code: -32602, message: "bad", data: { error: { code: "confirmation_required" } } }, op);
  assert.deepEqual([rpc.code, rpc.message, rpc.extra.details.jsonrpc_code], ["confirmation_required", "bad", -32602]);
});

test("main exits 3 with confirmation_required when the gateway refuses a missing confirm (HTTP 428 or a tool error)", async (t) => {
  const envelope = { error: { code: "confirmation_required", message: "shop.items.delete needs confirmation: pass confirm: true." } };
  let asHTTP = true;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const msg = body ? JSON.parse(body) : null;
      if (req.method === "DELETE") return res.writeHead(204).end();
      if (msg.method === "notifications/initialized") return res.writeHead(202).end();
      if (msg.method === "initialize") {
        res.writeHead(200, { "Content-Type": "application/json", "Mcp-Session-Id": "s-1" });
        return res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18" } }));
      }
      if (asHTTP) return res.writeHead(428, { "Content-Type": "application/json" }).end(JSON.stringify(envelope));
      const result = { isError: true, content: [{ type: "text", text: JSON.stringify(envelope) }] };
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "anvil-cli-"));
  const saved = { ...process.env };
  t.after(() => {
    server.close();
    process.env = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  fs.writeFileSync(path.join(dir, "token"), "tok\n");
  process.env.ANVIL_GATEWAY_URL = "http://127.0.0.1:" + server.address().port + "/mcp";
  process.env.ANVIL_GATEWAY_TOKEN_FILE = path.join(dir, "token");
  for (const k of ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]) delete process.env[k];
  for (const http428 of [true, false]) {
    asHTTP = http428;
    const stderr = sink();
    assert.equal(await cli.main(SPEC, ["items", "delete", "--id", "7"], { stdout: sink(), stderr }), 3, stderr.text);
    assert.equal(JSON.parse(stderr.text).error.code, "confirmation_required");
  }
});

test("command help shows an array flag by its item type", async () => {
  const help = sink();
  assert.equal(await cli.main(SPEC, ["items", "list", "--help"], { stdout: help, stderr: sink() }), 0);
  assert.match(help.text, /--status <string> +optional, array \(repeat the flag for more items, or give a JSON array\)/);
  assert.match(help.text, /--filter <json> +optional, object/);
});

test("main: help, unknown commands and an unset gateway URL", async (t) => {
  const saved = process.env.ANVIL_GATEWAY_URL;
  t.after(() => {
    if (saved === undefined) delete process.env.ANVIL_GATEWAY_URL;
    else process.env.ANVIL_GATEWAY_URL = saved;
  });
  delete process.env.ANVIL_GATEWAY_URL;
  const help = sink();
  assert.equal(await cli.main(SPEC, [], { stdout: help, stderr: sink() }), 0);
  assert.match(help.text, /shop items delete --id <integer>\n\s+Delete an item \[mutation, needs --confirm\]/);
  const err = sink();
  assert.equal(await cli.main(SPEC, ["nope"], { stdout: sink(), stderr: err }), 1);
  assert.match(err.text, /unknown command 'nope'/);
  const unset = sink();
  assert.equal(await cli.main(SPEC, ["items", "list", "--owner", "o"], { stdout: sink(), stderr: unset }), 2);
  assert.match(unset.text, /^ANVIL_GATEWAY_URL is not set/);
});

test("start exports { SPEC, main } bound to the spec", () => {
  const mod = { exports: {} };
  cli.start(SPEC, mod);
  assert.equal(mod.exports.SPEC, SPEC);
  assert.equal(typeof mod.exports.main, "function");
});

test("toolsURL replaces the gateway URL's last path segment with tools", () => {
  assert.equal(cli.toolsURL("http://127.0.0.1:8931/mcp", { search: "list items", connector: "shop", limit: undefined }),
    "http://127.0.0.1:8931/tools?search=list+items&connector=shop");
  assert.equal(cli.toolsURL("https://gw.example/anvil/mcp/?x=1#f", { search: "a&b", limit: 5 }), "https://gw.example/anvil/tools?search=a%26b&limit=5");
});

test("parseSearch joins the query words and reads --limit and --json", () => {
  assert.deepEqual(cli.parseSearch(SPEC, ["delete", "an", "item", "--limit", "3", "--json"]), { query: "delete an item", limit: 3, json: true });
  assert.deepEqual(cli.parseSearch(SPEC, ["--limit=7", "items"]), { query: "items", limit: 7, json: false });
  for (const bad of [["x", "--limit"], ["x", "--limit", "many"], ["x", "--limit=-1"], ["x", "--owner", "o"]]) {
    assert.throws(() => cli.parseSearch(SPEC, bad), (e) => e instanceof cli.CliError && e.code === "validation_error", bad.join(" "));
  }
});

// toolsGateway answers GET /tools with answer(url) as {status, body}, recording each request.
function toolsGateway(answer) {
  const seen = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    seen.push({ method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), auth: req.headers.authorization });
    const a = answer(url);
    res.writeHead(a.status, { "Content-Type": "application/json" }).end(JSON.stringify(a.body));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, seen, url: "http://127.0.0.1:" + server.address().port + "/mcp" })));
}

test("search asks GET /tools beside the gateway URL and prints each result as its command", async (t) => {
  const found = {
    tools: [
      { name: "shop__shop_delete_item", operation_id: "shop.items.delete", title: "Delete an item", summary: "Deletes one item for good.", effect: "irreversible", confirm_required: true },
      { name: "other__thing", operation_id: "other.thing", title: "Thing", summary: "Thing", effect: "read", confirm_required: false },
    ],
  };
  const g = await toolsGateway((url) =>
    url.searchParams.get("limit") === "99"
      ? { status: 400, body: { error: { code: "validation_error", message: "limit must be from 1 to 50." } } }
      : { status: 200, body: url.searchParams.get("search") === "nothing here" ? { tools: [] } : found });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "anvil-cli-"));
  const saved = { ...process.env };
  t.after(() => {
    g.server.close();
    process.env = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  fs.writeFileSync(path.join(dir, "token"), "tok\n");
  process.env.ANVIL_GATEWAY_URL = g.url;
  process.env.ANVIL_GATEWAY_TOKEN_FILE = path.join(dir, "token");
  delete process.env.ANVIL_GATEWAY_CONNECTOR;
  for (const k of ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]) delete process.env[k];

  const out = sink(), err = sink();
  assert.equal(await cli.main(SPEC, ["search", "remove", "an", "item", "--limit", "2"], { stdout: out, stderr: err }), 0, err.text);
  assert.deepEqual(g.seen[0], { method: "GET", path: "/tools", query: { search: "remove an item", connector: "shop", limit: "2" }, auth: "Bearer tok" });
  assert.equal(out.text, [
    "shop items delete: Delete an item",
    "    mutation, needs --confirm. Tool shop__shop_delete_item (shop.items.delete).",
    "    Deletes one item for good.",
    "other__thing: Thing",
    "    read. Tool other__thing (other.thing).",
    "",
    "Run 'shop <command> --help' for a command's flags.",
    "",
  ].join("\n"));

  const json = sink();
  assert.equal(await cli.main(SPEC, ["search", "delete", "--json"], { stdout: json, stderr: sink() }), 0);
  assert.deepEqual(JSON.parse(json.text), found);
  assert.equal(g.seen[1].query.limit, undefined);

  const none = sink();
  assert.equal(await cli.main(SPEC, ["search", "nothing", "here"], { stdout: none, stderr: sink() }), 0);
  assert.match(none.text, /^No command of shop matches 'nothing here'/);

  const refused = sink();
  assert.equal(await cli.main(SPEC, ["search", "x", "--limit", "99"], { stdout: sink(), stderr: refused }), 2);
  assert.equal(JSON.parse(refused.text).error.message, "limit must be from 1 to 50.");

  const usage = sink();
  assert.equal(await cli.main(SPEC, ["search"], { stdout: sink(), stderr: usage }), 1);
  assert.match(usage.text, /^Usage: shop search <what you want to do>/);
  assert.equal(g.seen.length, 4);

  delete process.env.ANVIL_GATEWAY_TOKEN_FILE;
  const loopback = sink();
  assert.equal(await cli.main(SPEC, ["search", "x"], { stdout: loopback, stderr: sink() }), 0);
  assert.equal(g.seen[g.seen.length - 1].auth, undefined);
  process.env.ANVIL_GATEWAY_URL = "http://gateway.invalid/mcp";
  const noToken = sink();
  assert.equal(await cli.main(SPEC, ["search", "x"], { stdout: sink(), stderr: noToken }), 4);
  assert.equal(JSON.parse(noToken.text).error.code, "auth_required");
  delete process.env.ANVIL_GATEWAY_URL;
  assert.equal(await cli.main(SPEC, ["search", "x"], { stdout: sink(), stderr: sink() }), 2);
});

test("a connector whose own command starts with search keeps it; the search is then its searchCommand", async () => {
  const own = Object.assign({}, SPEC, {
    searchCommand: "anvil-search",
    operations: SPEC.operations.concat([Object.assign({}, SPEC.operations[1], { id: "shop.search", words: ["search", "items"], usage: "shop search items" })]),
  });
  const help = sink();
  assert.equal(await cli.main(own, ["search", "items", "--help"], { stdout: help, stderr: sink() }), 0);
  assert.match(help.text, /^shop search items\n/);
  const searchHelp = sink();
  assert.equal(await cli.main(own, ["anvil-search", "--help"], { stdout: searchHelp, stderr: sink() }), 0);
  assert.match(searchHelp.text, /^Usage: shop anvil-search <what you want to do>/);
  const top = sink();
  assert.equal(await cli.main(own, ["--help"], { stdout: top, stderr: sink() }), 0);
  assert.match(top.text, /shop anvil-search <what you want to do> \[--limit n\]/);
});
