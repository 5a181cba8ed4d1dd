// The bin/<connector> runtime: the part of every harness CLI that does not vary by connector.
//
// A generated bin/<connector> is one dependency-free CommonJS script for Node.js 18 or later:
// the generated-code header, this file copied verbatim, then the connector's SPEC and a call to
// start(SPEC, module). Every function here takes the SPEC it works for as its first argument
// (where it needs one), so this file runs and is tested on its own. It calls the gateway named
// by ANVIL_GATEWAY_URL with the token in ANVIL_GATEWAY_TOKEN_FILE, and nothing else.
"use strict";

const fs = require("fs");
const http = require("http");
const https = require("https");
const net = require("net");
const tls = require("tls");

const PROTOCOL_VERSION = "2025-06-18";
const TIMEOUT_MS = 60000;
const UNREACHABLE = "The Anvil gateway could not be reached.";

class CliError extends Error {
  constructor(code, message, operation, extra) {
    super(message);
    this.code = code;
    this.operation = operation || "";
    this.extra = extra || {};
  }
}

function exitCodeFor(spec, code) {
  return Object.prototype.hasOwnProperty.call(spec.exitCodes, code) ? spec.exitCodes[code] : 1;
}

function envelopeOf(err) {
  const body = {
    code: err.code,
    message: err.message,
    retryable: false,
    safe_to_retry: false,
    operation: err.operation,
    trace_id: "",
  };
  return { error: Object.assign(body, err.extra) };
}

function fail(spec, err, stderr) {
  stderr.write(JSON.stringify(envelopeOf(err)) + "\n");
  return exitCodeFor(spec, err.code);
}

// ---- help ----------------------------------------------------------------

function commandName(spec, op) {
  return spec.connector + " " + op.words.join(" ");
}

function serviceHelp(spec) {
  const lines = [
    spec.service.title + " through the Anvil gateway (connector " + spec.connector + ").",
    "",
    "Usage: " + spec.connector + " <resource> <verb> [--flag value ...]",
    "       " + spec.connector + " " + searchCommand(spec) + " <what you want to do> [--limit n] [--json]   (the gateway ranks the commands)",
    "",
    "Commands:",
  ];
  for (const op of spec.operations) {
    lines.push("  " + op.usage);
    lines.push("      " + op.summary + " [" + op.label.replace("needs confirm", "needs --confirm") + "]");
  }
  lines.push(
    "",
    "Options for every command:",
    "  --input <file.json>      base arguments from a JSON object (\"-\" reads stdin)",
    "  --body <json>            the request body's fields as one JSON object",
    "  --confirm                confirm a write that needs it",
    "  --idempotency-key <key>  the idempotency key to send (operations that take one)",
    "  --dry-run                return the gateway's plan; nothing changes",
    "  --json                   print {\"data\", \"effect\"}: the result and its effect report (how to undo it)",
    "  --schema                 print the command's input schema",
    "  --help                   print the command's help",
    "",
    "Environment: ANVIL_GATEWAY_URL (the gateway's /mcp URL), ANVIL_GATEWAY_TOKEN_FILE (this turn's token).",
    "Exit codes: 0 ok, 1 usage, 2 validation, 3 confirmation or idempotency key required,",
    "4 auth or permission, 5 policy or unsupported, 6 not found or conflict, 7 upstream or rate limit."
  );
  return lines.join("\n") + "\n";
}

function operationHelp(spec, op) {
  const lines = [op.usage, "", op.summary + "."];
  if (op.description && op.description !== op.summary) lines.push(op.description);
  lines.push("", "Flags:");
  const rows = [];
  for (const input of op.inputs) {
    const list = input.type === "array";
    const shown = list ? input.items : input.type;
    let text = (input.required ? "required" : "optional") + ", " + (input.type || "json");
    if (list) text += " (repeat the flag for more items, or give a JSON array)";
    if (input.description) text += ". " + input.description;
    rows.push(["--" + input.flag + " <" + (shown && shown !== "array" && shown !== "object" ? shown : "json") + ">", text]);
  }
  if (op.confirm) rows.push(["--" + op.flags.confirm, "required: this write needs confirmation" + (op.reason ? " (" + op.reason + ")" : "")]);
  if (op.idempotencyKey) rows.push(["--" + op.flags.idempotencyKey + " <key>", "the idempotency key sent upstream"]);
  rows.push(["--" + op.flags.dryRun, "return the gateway's plan; nothing changes"]);
  rows.push(["--" + (op.flags.stage || "stage"), "perform the operation's draft form instead (where it declares one)"]);
  rows.push(["--" + op.flags.input + " <file.json>", "base arguments from a JSON object"]);
  rows.push(["--" + op.flags.json, "print {\"data\", \"effect\"}"]);
  const width = rows.reduce((w, r) => Math.max(w, r[0].length), 0);
  for (const r of rows) lines.push("  " + r[0].padEnd(width) + "  " + r[1]);
  lines.push("", "Effect: " + op.label.replace("needs confirm", "needs --confirm") + ". Tool: " + spec.connector + "__" + op.tool + " (" + op.id + ").");
  if (op.undo) lines.push("Undo: " + op.undo.kind + " with " + op.undo.tool + " (" + op.undo.operation + "); --json prints its arguments.");
  return lines.join("\n") + "\n";
}

// ---- arguments -----------------------------------------------------------

function matchOperation(spec, words) {
  let best = null;
  for (const op of spec.operations) {
    if (op.words.length > words.length) continue;
    if (!op.words.every((w, i) => w === words[i])) continue;
    if (!best || op.words.length > best.words.length) best = op;
  }
  return best;
}

function distance(a, b) {
  const d = [];
  for (let i = 0; i <= a.length; i++) d.push([i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length][b.length];
}

function knownFlags(op) {
  const out = op.inputs.map((i) => i.flag);
  const f = op.flags;
  out.push(f.input, f.body, f.confirm, f.idempotencyKey, f.dryRun, f.stage || "stage", f.json, "help", "schema");
  return out;
}

function coerce(op, input, raw) {
  const flag = "--" + input.flag;
  const bad = (what) => new CliError("validation_error", flag + " " + what + ".", op.id, { details: { flag: flag } });
  if (raw === true) {
    if (input.type === "boolean" || !input.type) return true;
    throw bad("needs a value");
  }
  switch (input.type) {
    case "string":
      return raw;
    case "integer":
      if (!/^-?[0-9]+$/.test(raw)) throw bad("must be an integer");
      return Number(raw);
    case "number": {
      const n = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(n)) throw bad("must be a number");
      return n;
    }
    case "boolean":
      if (raw === "true") return true;
      if (raw === "false") return false;
      throw bad("must be true or false");
    case "array":
      // A JSON array is the whole list; any other value is one item, so a plain
      // --status sold works and a repeated flag adds items (parseFlags joins them).
      if (!/^\s*\[/.test(raw)) return [coerce(op, { flag: input.flag, type: input.items || "" }, raw)];
    // falls through
    case "object": {
      let v;
      try {
        v = JSON.parse(raw);
      } catch (e) {
        throw bad("must be JSON");
      }
      if (input.type === "array" ? !Array.isArray(v) : v === null || typeof v !== "object" || Array.isArray(v)) {
        throw bad("must be a JSON " + input.type);
      }
      return v;
    }
    default:
      try {
        return JSON.parse(raw);
      } catch (e) {
        return raw;
      }
  }
}

function readJSONObject(op, source, what) {
  let text;
  try {
    text = fs.readFileSync(source === "-" ? 0 : source, "utf8");
  } catch (e) {
    throw new CliError("validation_error", what + " could not be read.", op.id);
  }
  return parseJSONObject(op, text, what);
}

function parseJSONObject(op, text, what) {
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new CliError("validation_error", what + " is not JSON.", op.id);
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new CliError("validation_error", what + " must be a JSON object.", op.id);
  }
  return v;
}

// parseFlags turns the arguments after the command words into tool arguments.
function parseFlags(spec, op, rest) {
  const out = { args: {}, json: false, stage: false };
  const byFlag = new Map(op.inputs.map((i) => [i.flag, i]));
  const values = [];
  let inputFile, body, key, confirm = false, dryRun = false;
  for (let j = 0; j < rest.length; j++) {
    const tok = rest[j];
    if (!tok.startsWith("--") || tok === "--") {
      throw new CliError("validation_error", "Unexpected argument '" + tok + "' for '" + commandName(spec, op) + "'.", op.id);
    }
    let name = tok.slice(2);
    let value;
    const eq = name.indexOf("=");
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    const take = () => {
      if (value !== undefined) return value;
      if (j + 1 < rest.length && !rest[j + 1].startsWith("--")) return rest[++j];
      return true;
    };
    const needValue = (v) => {
      if (v === true) throw new CliError("validation_error", "--" + name + " needs a value.", op.id, { details: { flag: "--" + name } });
      return v;
    };
    const input = byFlag.get(name);
    if (input) {
      values.push([input, take()]);
    } else if (name === op.flags.confirm) {
      confirm = value === undefined ? true : value === "true";
    } else if (name === op.flags.dryRun) {
      dryRun = value === undefined ? true : value === "true";
    } else if (name === (op.flags.stage || "stage")) {
      out.stage = value === undefined ? true : value === "true";
    } else if (name === op.flags.json) {
      out.json = true;
    } else if (name === op.flags.idempotencyKey) {
      key = needValue(take());
    } else if (name === op.flags.input) {
      inputFile = needValue(take());
    } else if (name === op.flags.body) {
      body = needValue(take());
    } else if (name === "help" || name === "schema") {
      // handled before parsing
    } else {
      let hint = "";
      let best = 3;
      for (const f of knownFlags(op)) {
        const d = distance(name, f);
        if (d < best) {
          best = d;
          hint = " Did you mean --" + f + "?";
        }
      }
      throw new CliError("validation_error", "Unknown flag --" + name + " for '" + commandName(spec, op) + "'." + hint, op.id, {
        details: { flag: "--" + name },
      });
    }
  }
  const args = out.args;
  if (inputFile !== undefined) Object.assign(args, readJSONObject(op, inputFile, "--" + op.flags.input));
  if (body !== undefined) {
    const fields = parseJSONObject(op, body, "--" + op.flags.body);
    for (const k of Object.keys(fields)) {
      const input = op.inputs.find((i) => i.in === "body" && (i.name === k || i.key === k));
      if (!input) {
        throw new CliError("validation_error", "--" + op.flags.body + " has no field '" + k + "' for '" + commandName(spec, op) + "'.", op.id);
      }
      args[input.key] = fields[k];
    }
  }
  const fromFlags = new Set();
  for (const [input, raw] of values) {
    const v = coerce(op, input, raw);
    args[input.key] = input.type === "array" && fromFlags.has(input.key) ? args[input.key].concat(v) : v;
    fromFlags.add(input.key);
  }
  const missing = op.inputs.filter((i) => i.required && args[i.key] === undefined).map((i) => "--" + i.flag);
  if (missing.length > 0) {
    throw new CliError("validation_error", "Missing required flag(s) for '" + commandName(spec, op) + "': " + missing.join(", ") + ".", op.id, {
      required_flags: missing,
    });
  }
  if (key !== undefined) {
    if (!op.idempotencyKey) {
      throw new CliError("validation_error", "'" + commandName(spec, op) + "' does not take an idempotency key.", op.id);
    }
    args[op.idempotencyKey] = key;
  }
  if (confirm && op.confirmKey) args[op.confirmKey] = true;
  if (dryRun) args[spec.dryRunArg] = true;
  return out;
}

// ---- HTTP ----------------------------------------------------------------

// isLoopback reports whether the URL's host is localhost or a loopback address.
function isLoopback(url) {
  let host;
  try {
    host = new URL(url).hostname;
  } catch (e) {
    return false;
  }
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function envOf(name) {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : v;
}

function noProxy(host, port) {
  const value = process.env.no_proxy !== undefined ? process.env.no_proxy : process.env.NO_PROXY || "";
  for (let entry of value.replace(/\s+/g, "").split(",")) {
    if (!entry) continue;
    if (entry === "*") return true;
    entry = entry.toLowerCase();
    let entryPort;
    const m = /^(.*):([0-9]+)$/.exec(entry);
    if (m && (m[1].indexOf(":") < 0 || m[1].startsWith("["))) {
      entry = m[1];
      entryPort = Number(m[2]);
    }
    entry = entry.replace(/^\[|\]$/g, "").replace(/^\*?\./, "");
    if (entryPort !== undefined && entryPort !== port) continue;
    if (host === entry || host.endsWith("." + entry)) return true;
  }
  return false;
}

function proxyFor(secure, host, port) {
  if (noProxy(host, port)) return undefined;
  const names = secure ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy", "HTTP_PROXY"];
  for (const name of names.concat(["all_proxy", "ALL_PROXY"])) {
    const v = envOf(name);
    if (!v) continue;
    let u;
    try {
      u = new URL(v.indexOf("://") >= 0 ? v : "http://" + v);
    } catch (e) {
      return undefined;
    }
    const out = { host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port) || 80 };
    if (u.username) {
      const pair = decodeURIComponent(u.username) + ":" + decodeURIComponent(u.password);
      out.auth = "Basic " + Buffer.from(pair).toString("base64");
    }
    return out;
  }
  return undefined;
}

function send(method, url, headers, body, timeoutMs) {
  const target = new URL(url);
  const secure = target.protocol === "https:";
  const host = target.hostname.replace(/^\[|\]$/g, "");
  const port = Number(target.port) || (secure ? 443 : 80);
  const proxy = proxyFor(secure, host.toLowerCase(), port);
  const hdrs = Object.assign({}, headers);
  if (body !== undefined) hdrs["Content-Length"] = String(Buffer.byteLength(body));
  const path = target.pathname + target.search;
  return new Promise((resolve, reject) => {
    let settled = false;
    const failed = (err) => {
      if (!settled) {
        settled = true;
        reject(err);
      }
    };
    const onResponse = (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("error", failed);
      res.on("end", () => {
        if (!settled) {
          settled = true;
          resolve({ status: res.statusCode || 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") });
        }
      });
    };
    const start = (mod, opts) => {
      const req = mod.request(opts, onResponse);
      req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error("timeout"), { anvilTimeout: true })));
      req.on("error", failed);
      if (body !== undefined) req.write(body);
      req.end();
    };
    if (!proxy) {
      start(secure ? https : http, { hostname: host, port, path, method, headers: hdrs });
      return;
    }
    if (!secure) {
      hdrs.Host = target.host;
      if (proxy.auth) hdrs["Proxy-Authorization"] = proxy.auth;
      start(http, { hostname: proxy.host, port: proxy.port, path: target.href, method, headers: hdrs });
      return;
    }
    const authority = (host.indexOf(":") >= 0 ? "[" + host + "]" : host) + ":" + port;
    const connectHeaders = { Host: authority };
    if (proxy.auth) connectHeaders["Proxy-Authorization"] = proxy.auth;
    const creq = http.request({ hostname: proxy.host, port: proxy.port, method: "CONNECT", path: authority, headers: connectHeaders });
    creq.setTimeout(timeoutMs, () => creq.destroy(Object.assign(new Error("timeout"), { anvilTimeout: true })));
    creq.on("error", failed);
    creq.on("connect", (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        failed(new Error("proxy refused the tunnel"));
        return;
      }
      const servername = net.isIP(host) ? undefined : host;
      start(https, {
        hostname: host,
        port,
        path,
        method,
        headers: hdrs,
        agent: false,
        createConnection: () => tls.connect({ socket, servername }),
      });
    });
    creq.end();
  });
}

async function post(url, headers, message, op) {
  try {
    return await send("POST", url, headers, JSON.stringify(message), TIMEOUT_MS);
  } catch (e) {
    if (typeof e === "object" && e !== null && "anvilTimeout" in e && e.anvilTimeout) {
      throw new CliError("upstream_timeout", "The Anvil gateway did not answer in time.", op.id);
    }
    throw new CliError("upstream_unavailable", UNREACHABLE, op.id);
  }
}

function parseSSE(text) {
  const out = [];
  let data = [];
  const flush = () => {
    if (data.length === 0) return;
    try {
      const v = JSON.parse(data.join("\n"));
      if (Array.isArray(v)) out.push(...v);
      else out.push(v);
    } catch (e) {
      // not JSON: skip the event
    }
    data = [];
  };
  for (const line of text.replace(/\r\n?/g, "\n").split("\n")) {
    if (line === "") flush();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  flush();
  return out;
}

function messagesOf(res) {
  const ctype = String(res.headers["content-type"] || "");
  if (ctype.indexOf("text/event-stream") >= 0) return parseSSE(res.body);
  try {
    const v = JSON.parse(res.body);
    return Array.isArray(v) ? v : [v];
  } catch (e) {
    return parseSSE(res.body);
  }
}

// The code a refusal without a known envelope code gets from its HTTP status alone (the seed's
// REST table); anything else is upstream_unavailable.
const STATUS_CODES = { 401: "auth_required", 403: "permission_denied", 409: "conflict", 428: "confirmation_required", 429: "rate_limited" };

function envelopeIn(text) {
  try {
    const v = JSON.parse(text);
    return v && typeof v.error === "object" && v.error !== null && !Array.isArray(v.error) ? v.error : undefined;
  } catch (e) {
    return undefined;
  }
}

// refusal is the CliError of an error envelope: its own code when the SPEC's exit-code table
// knows it, else fallback with the envelope's code kept as details.code.
function refusal(spec, envelope, op, fallback, message, extra) {
  const details = Object.assign({}, envelope.details && typeof envelope.details === "object" ? envelope.details : {}, extra);
  let code = envelope.code;
  if (typeof code !== "string" || !Object.prototype.hasOwnProperty.call(spec.exitCodes, code)) {
    if (typeof code === "string" && code && details.code === undefined) details.code = code;
    code = fallback;
  }
  const text = typeof envelope.message === "string" && envelope.message ? envelope.message : message;
  const more = { details };
  if (Array.isArray(envelope.required_flags)) more.required_flags = envelope.required_flags;
  return new CliError(code, text, op.id, more);
}

// httpError is the CliError of a refused HTTP request: the code of the body's envelope when it
// is a known one (428 confirmation_required, 409 conflict, ...), else the status's code.
function httpError(spec, res, op) {
  const fallback = STATUS_CODES[res.status] || "upstream_unavailable";
  const message = "The Anvil gateway refused the request (HTTP " + res.status + ").";
  const envelope = envelopeIn(res.body);
  if (envelope === undefined) return new CliError(fallback, message, op.id, { details: { http_status: res.status } });
  return refusal(spec, envelope, op, fallback, message, { http_status: res.status });
}

// rpcError is the CliError of a JSON-RPC error answer: unsupported_operation, unless its data
// carries an error envelope (or a code) of its own.
function rpcError(spec, error, op) {
  const err = error && typeof error === "object" ? error : {};
  const message = typeof err.message === "string" ? err.message : "The Anvil gateway answered with a JSON-RPC error.";
  const data = err.data && typeof err.data === "object" ? err.data : undefined;
  const envelope = data && data.error && typeof data.error === "object" ? data.error : data && typeof data.code === "string" ? data : undefined;
  const extra = { jsonrpc_code: err.code === undefined ? null : err.code };
  if (envelope === undefined) return new CliError("unsupported_operation", message, op.id, { details: extra });
  return refusal(spec, envelope, op, "unsupported_operation", message, extra);
}

function resultOf(spec, res, id, op) {
  if (res.status >= 400) throw httpError(spec, res, op);
  for (const m of messagesOf(res)) {
    if (!m || typeof m !== "object" || m.id !== id) continue;
    if (m.error !== undefined) throw rpcError(spec, m.error, op);
    if (m.result !== undefined) return m.result;
  }
  throw new CliError("upstream_unavailable", "The Anvil gateway's answer did not include this call's response.", op.id);
}

// readToken reads the bearer from ANVIL_GATEWAY_TOKEN_FILE. Without the variable it is "" for a
// gateway on a loopback address (auth mode none takes calls without one; the call then carries no
// Authorization) and auth_required, with nothing sent, for any other.
function readToken(op, gateway) {
  const file = envOf("ANVIL_GATEWAY_TOKEN_FILE");
  if (!file && isLoopback(gateway)) return "";
  if (!file) throw new CliError("auth_required", "No gateway token: ANVIL_GATEWAY_TOKEN_FILE is not set.", op.id);
  let token;
  try {
    token = fs.readFileSync(file, "utf8").trim();
  } catch (e) {
    throw new CliError("auth_required", "The gateway token file could not be read.", op.id);
  }
  if (!token) throw new CliError("auth_required", "The gateway token file is empty.", op.id);
  return token;
}

async function callTool(spec, url, connector, op, args, meta) {
  const token = readToken(op, url);
  const agent = "anvil-harness-cli/" + connector;
  const base = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "User-Agent": agent,
  };
  if (token) base.Authorization = "Bearer " + token;
  let session;
  const headers = Object.assign({}, base);
  try {
    const init = await post(url, base, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: agent, version: "1" } },
    }, op);
    session = init.headers["mcp-session-id"] || undefined;
    const initResult = resultOf(spec, init, 1, op);
    if (session) headers["Mcp-Session-Id"] = session;
    headers["Mcp-Protocol-Version"] =
      initResult && typeof initResult.protocolVersion === "string" && initResult.protocolVersion ? initResult.protocolVersion : PROTOCOL_VERSION;
    const note = await post(url, headers, { jsonrpc: "2.0", method: "notifications/initialized" }, op);
    if (note.status >= 400) throw httpError(spec, note, op);
    const res = await post(url, headers, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: meta ? { name: connector + "__" + op.tool, arguments: args, _meta: meta } : { name: connector + "__" + op.tool, arguments: args },
    }, op);
    const result = resultOf(spec, res, 2, op);
    if (!result || typeof result !== "object") {
      throw new CliError("upstream_unavailable", "The Anvil gateway answered with something that is not a tool result.", op.id);
    }
    return result;
  } finally {
    if (session) {
      try {
        await send("DELETE", url, headers, undefined, 5000);
      } catch (e) {
        // closing is best effort
      }
    }
  }
}

function firstText(result) {
  if (!Array.isArray(result.content)) return undefined;
  for (const item of result.content) {
    if (item && item.type === "text" && typeof item.text === "string") return item.text;
  }
  return undefined;
}

function decode(spec, result) {
  const sc = result.structuredContent;
  if (sc && typeof sc === "object" && !Array.isArray(sc)) {
    if (Object.prototype.hasOwnProperty.call(sc, spec.dryRunArg)) return sc[spec.dryRunArg];
    if (Object.prototype.hasOwnProperty.call(sc, "anvil_unvalidated")) return sc.anvil_unvalidated;
  }
  const text = firstText(result);
  if (text !== undefined) {
    try {
      return JSON.parse(text);
    } catch (e) {
      // not JSON
    }
  }
  if (sc && typeof sc === "object" && !Array.isArray(sc) && Object.keys(sc).length === 1 && "result" in sc) return sc.result;
  if (sc !== undefined) return sc;
  return text === undefined ? null : text;
}

// ---- search --------------------------------------------------------------

// searchCommand is the command word that searches the operations: "search", unless one of the
// connector's own commands starts with that word (the SPEC then names another).
function searchCommand(spec) {
  return spec.searchCommand || "search";
}

function searchHelp(spec) {
  const cmd = spec.connector + " " + searchCommand(spec);
  return [
    "Usage: " + cmd + " <what you want to do> [--limit n] [--json]",
    "",
    "Asks the gateway which of this connector's commands fit, best first (only those this branch's grant allows):",
    "GET /tools?search=<query>&connector=<id>&limit=<n> beside ANVIL_GATEWAY_URL, with the same token as every call.",
    "",
    "  --limit <n>  how many results (1 to 50; default 10)",
    "  --json       print the gateway's answer: {\"tools\": [{name, operation_id, title, summary, effect, confirm_required}]}",
    "",
    "For example: " + cmd + " \"create an issue\" --limit 5",
  ].join("\n") + "\n";
}

// parseSearch reads the arguments after the search command: the words of the query, --limit and --json.
function parseSearch(spec, rest) {
  /** @type {{query: string, limit: number | undefined, json: boolean}} */
  const out = { query: "", limit: undefined, json: false };
  const words = [];
  for (let j = 0; j < rest.length; j++) {
    const tok = rest[j];
    if (!tok.startsWith("--")) {
      words.push(tok);
      continue;
    }
    let name = tok.slice(2);
    let value;
    const eq = name.indexOf("=");
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    if (name === "json" && value === undefined) {
      out.json = true;
    } else if (name === "limit") {
      if (value === undefined && j + 1 < rest.length) value = rest[++j];
      if (value === undefined || !/^[0-9]+$/.test(value)) {
        throw new CliError("validation_error", "--limit needs a whole number (1 to 50).", "", { details: { flag: "--limit" } });
      }
      out.limit = Number(value);
    } else {
      throw new CliError("validation_error", "Unknown flag --" + name + " for '" + spec.connector + " " + searchCommand(spec) + "'; it takes --limit and --json.", "", {
        details: { flag: "--" + name },
      });
    }
  }
  out.query = words.join(" ").trim();
  return out;
}

// toolsURL is the gateway's GET /tools route beside its MCP endpoint: the gateway URL with its
// last path segment (mcp) replaced by "tools", and params as its query.
function toolsURL(gateway, params) {
  const u = new URL(gateway);
  u.pathname = u.pathname.replace(/\/+$/, "").replace(/[^/]*$/, "tools");
  u.search = "";
  u.hash = "";
  for (const k of Object.keys(params)) {
    if (params[k] !== undefined) u.searchParams.set(k, String(params[k]));
  }
  return u.href;
}

// searchTools asks the gateway's GET /tools for a ranked search and returns its {"tools": [...]}.
async function searchTools(spec, gateway, connector, query, limit) {
  const op = { id: "" };
  const token = readToken(op, gateway);
  const url = toolsURL(gateway, { search: query, connector, limit });
  const headers = { Accept: "application/json", "User-Agent": "anvil-harness-cli/" + connector };
  if (token) headers.Authorization = "Bearer " + token;
  let res;
  try {
    res = await send("GET", url, headers, undefined, TIMEOUT_MS);
  } catch (e) {
    if (typeof e === "object" && e !== null && "anvilTimeout" in e && e.anvilTimeout) {
      throw new CliError("upstream_timeout", "The Anvil gateway did not answer in time.", "");
    }
    throw new CliError("upstream_unavailable", UNREACHABLE, "");
  }
  if (res.status >= 400) throw httpError(spec, res, op);
  let body;
  try {
    body = JSON.parse(res.body);
  } catch (e) {
    body = undefined;
  }
  if (!body || typeof body !== "object" || !Array.isArray(body.tools)) {
    throw new CliError("upstream_unavailable", "The Anvil gateway's answer to the search is not a tool list.", "");
  }
  return body;
}

// formatResults prints each result as the command that runs it (when this CLI has it), what it
// does, its effect and whether it needs --confirm, then the served tool name and AIR id.
function formatResults(spec, connector, tools, query) {
  if (tools.length === 0) return "No command of " + spec.connector + " matches '" + query + "' (or this branch's grant allows none that does).\n";
  const byTool = new Map(spec.operations.map((o) => [connector + "__" + o.tool, o]));
  const lines = [];
  for (const t of tools) {
    if (!t || typeof t !== "object") continue;
    const name = String(t.name);
    const op = byTool.get(name);
    const effect = op ? op.label.replace(", needs confirm", "") : String(t.effect);
    const head = op ? spec.connector + " " + op.words.join(" ") : name;
    lines.push(head + ": " + String(t.title || (op && op.summary) || name));
    lines.push("    " + effect + (t.confirm_required ? ", needs --confirm" : "") + ". Tool " + name + " (" + String(t.operation_id) + ").");
    if (t.summary && t.summary !== t.title) lines.push("    " + String(t.summary));
  }
  lines.push("", "Run '" + spec.connector + " <command> --help' for a command's flags.");
  return lines.join("\n") + "\n";
}

async function runSearch(spec, rest, io) {
  if (rest.indexOf("--help") >= 0 || rest.indexOf("-h") >= 0) {
    io.stdout.write(searchHelp(spec));
    return 0;
  }
  let parsed;
  try {
    parsed = parseSearch(spec, rest);
  } catch (e) {
    if (e instanceof CliError) return fail(spec, e, io.stderr);
    throw e;
  }
  if (parsed.query === "") {
    io.stderr.write(searchHelp(spec));
    return 1;
  }
  const gateway = gatewayURL(spec, "", io.stderr);
  if (typeof gateway === "number") return gateway;
  const connector = envOf("ANVIL_GATEWAY_CONNECTOR") || spec.connector;
  let body;
  try {
    body = await searchTools(spec, gateway, connector, parsed.query, parsed.limit);
  } catch (e) {
    if (e instanceof CliError) return fail(spec, e, io.stderr);
    return fail(spec, new CliError("upstream_unavailable", UNREACHABLE, ""), io.stderr);
  }
  io.stdout.write(parsed.json ? JSON.stringify(body, null, 2) + "\n" : formatResults(spec, connector, body.tools, parsed.query));
  return 0;
}

// gatewayURL is ANVIL_GATEWAY_URL, or the exit status after saying why it cannot be used.
function gatewayURL(spec, id, stderr) {
  const url = envOf("ANVIL_GATEWAY_URL");
  if (!url) {
    stderr.write("ANVIL_GATEWAY_URL is not set; " + spec.connector + " calls operations only through the Anvil gateway (set it to the gateway's /mcp URL).\n");
    return 2;
  }
  let target;
  try {
    target = new URL(url);
  } catch (e) {
    target = undefined;
  }
  if (!target || (target.protocol !== "http:" && target.protocol !== "https:") || target.username) {
    return fail(spec, new CliError("validation_error", "ANVIL_GATEWAY_URL must be an http(s) URL without credentials.", id), stderr);
  }
  return url;
}

// ---- main ----------------------------------------------------------------

async function main(spec, argv, io) {
  const stdout = io.stdout;
  const stderr = io.stderr;
  if (argv.length === 0 || argv[0] === "help" || argv[0] === "--help" || argv[0] === "-h") {
    stdout.write(serviceHelp(spec));
    return 0;
  }
  if (argv[0] === searchCommand(spec)) return runSearch(spec, argv.slice(1), io);
  const words = [];
  let i = 0;
  while (i < argv.length && !argv[i].startsWith("--")) words.push(argv[i++]);
  const op = matchOperation(spec, words);
  if (!op) {
    stderr.write(spec.connector + ": unknown command '" + words.join(" ") + "'. Run '" + spec.connector + " --help' for the commands.\n");
    return 1;
  }
  const rest = argv.slice(i);
  if (words.length > op.words.length) {
    return fail(spec, new CliError("validation_error", "Unexpected argument '" + words[op.words.length] + "' for '" + commandName(spec, op) + "'.", op.id), stderr);
  }
  if (rest.indexOf("--help") >= 0 || rest.indexOf("-h") >= 0) {
    stdout.write(rest.indexOf("--json") >= 0 ? JSON.stringify(op, null, 2) + "\n" : operationHelp(spec, op));
    return 0;
  }
  if (rest.indexOf("--schema") >= 0) {
    stdout.write(JSON.stringify(op.schema, null, 2) + "\n");
    return 0;
  }
  let parsed;
  try {
    parsed = parseFlags(spec, op, rest);
  } catch (e) {
    if (e instanceof CliError) return fail(spec, e, stderr);
    throw e;
  }
  const url = gatewayURL(spec, op.id, stderr);
  if (typeof url === "number") return url;
  const connector = envOf("ANVIL_GATEWAY_CONNECTOR") || spec.connector;
  let result;
  try {
    result = await callTool(spec, url, connector, op, parsed.args, parsed.stage ? { stage: true } : undefined);
  } catch (e) {
    if (e instanceof CliError) return fail(spec, e, stderr);
    return fail(spec, new CliError("upstream_unavailable", UNREACHABLE, op.id), stderr);
  }
  if (result.isError) {
    const text = firstText(result);
    let code;
    try {
      const v = JSON.parse(text);
      if (v && v.error && typeof v.error.code === "string") code = v.error.code;
    } catch (e) {
      // not an envelope
    }
    stderr.write((text === undefined ? JSON.stringify(envelopeOf(new CliError("unknown_upstream_error", "The tool call failed.", op.id))) : text) + "\n");
    return code === undefined ? 7 : exitCodeFor(spec, code);
  }
  if (parsed.json) {
    const meta = result._meta && typeof result._meta === "object" ? result._meta : {};
    stdout.write(JSON.stringify({ data: decode(spec, result), effect: meta.effect === undefined ? null : meta.effect }, null, 2) + "\n");
    return 0;
  }
  const text = firstText(result);
  stdout.write((text === undefined ? JSON.stringify(decode(spec, result)) : text) + "\n");
  return 0;
}

/**
 * start makes mod (the generated script's module) export { SPEC, main } bound to spec, and runs
 * the CLI on process.argv when mod is the main module. Every generated bin/<connector> ends by
 * calling it.
 */
function start(spec, mod) {
  mod.exports = { SPEC: spec, main: (argv, io) => main(spec, argv, io) };
  if (require.main !== mod) return;
  main(spec, process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(JSON.stringify(envelopeOf(new CliError("unknown_upstream_error", String((err && err.message) || err), ""))) + "\n");
      process.exitCode = 1;
    }
  );
}

// What the runtime's own tests reach; a generated script replaces these exports in start.
module.exports = {
  CliError, coerce, decode, envelopeOf, exitCodeFor, httpError, main, matchOperation, noProxy, parseFlags, parseSearch, parseSSE,
  proxyFor, rpcError, start, toolsURL,
};
