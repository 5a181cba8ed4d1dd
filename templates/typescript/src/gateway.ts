// The gateway transport: MCP JSON-RPC over Streamable HTTP to the Anvil gateway.
// Each call is one short-lived session (initialize, notifications/initialized,
// tools/call, DELETE). The token is read on every call. No upstream credential
// variable is ever read.

import { readFile } from "node:fs/promises";

import { AnvilError, isErrorCode } from "./errors.ts";
import { SPEC } from "./spec.ts";

/** The connector id this package was built for (tools are <connector>__<tool>). */
export const DEFAULT_CONNECTOR: string = SPEC.connector;
export const PROTOCOL_VERSION = "2025-06-18";
export const DEFAULT_USER_AGENT = "anvil-sdk (typescript)";
export const DEFAULT_TIMEOUT_MS = 60000;

const UNREACHABLE = "The Anvil gateway could not be reached.";
const PROTECTED = ["authorization", "content-type", "accept", "mcp-session-id", "mcp-protocol-version"];

/** Returns the bearer token for one call. */
export type TokenProvider = () => string | Promise<string>;

/** How a client reaches the gateway. */
export interface ClientOptions {
  /** The gateway's /mcp URL; default ANVIL_GATEWAY_URL. */
  gatewayUrl?: string;
  /** The token file; default ANVIL_GATEWAY_TOKEN_FILE, read on every call. */
  tokenFile?: string;
  /** Supplies the token instead of a file. */
  tokenProvider?: TokenProvider;
  /** The connector id; default ANVIL_GATEWAY_CONNECTOR, else DEFAULT_CONNECTOR. */
  gatewayConnector?: string;
  /** Sent as User-Agent and as the MCP clientInfo name. */
  userAgent?: string;
  /** Milliseconds each HTTP request may take. */
  timeoutMs?: number;
  /**
   * How many times a retryable failure (rate_limited, upstream_unavailable, upstream_timeout) is sent
   * again, for reads and writes whose idempotency key goes upstream only; default 2, 0 turns retries off.
   */
  maxRetries?: number;
  /** The fetch to use (for example a proxy-aware one); default the global fetch. */
  fetch?: typeof fetch;
}

/** Per-request transport options. */
export interface TransportCallOptions {
  /** Sent as the call's _meta ({ stage: true }). */
  meta?: Record<string, unknown>;
  operation?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A tools/call result as the gateway sends it. */
export interface ToolResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** One ranked tool of a search (GET /tools?search=...), as the gateway answers it. */
export interface SearchResult {
  /** The served tool name, <connector>__<tool>. */
  name: string;
  /** The AIR operation id. */
  operation_id: string;
  title: string;
  summary: string;
  /** The effect class: read, reversible, compensable or irreversible. */
  effect: string;
  confirm_required: boolean;
}

/**
 * The gateway's GET /tools route beside its MCP endpoint: the gateway URL with its last path
 * segment (mcp) replaced by "tools", and params as its query.
 */
export function toolsUrl(gatewayUrl: string, params: Record<string, string | undefined>): string {
  const u = new URL(gatewayUrl);
  u.pathname = u.pathname.replace(/\/+$/, "").replace(/[^/]*$/, "tools");
  u.search = "";
  u.hash = "";
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined) u.searchParams.set(k, v);
  }
  return u.href;
}

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

function env(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : v;
}

/** ANVIL_GATEWAY_URL, or undefined when unset or empty. */
export function gatewayUrlFromEnv(): string | undefined {
  return env("ANVIL_GATEWAY_URL");
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function parseSSE(text: string): unknown[] {
  const out: unknown[] = [];
  let data: string[] = [];
  const flush = (): void => {
    if (data.length === 0) return;
    try {
      const v: unknown = JSON.parse(data.join("\n"));
      if (Array.isArray(v)) out.push(...v);
      else out.push(v);
    } catch {
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

function messagesOf(answer: Answer): unknown[] {
  if ((answer.headers.get("content-type") ?? "").includes("text/event-stream")) return parseSSE(answer.body);
  try {
    const v: unknown = JSON.parse(answer.body);
    return Array.isArray(v) ? v : [v];
  } catch {
    return parseSSE(answer.body);
  }
}

/** The code a refusal without a known envelope code gets from its HTTP status alone (the seed's REST table). */
const STATUS_CODES: Record<number, string> = {
  401: "auth_required",
  403: "permission_denied",
  409: "conflict",
  428: "confirmation_required",
  429: "rate_limited",
};

function jsonOf(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function envelopeOf(v: unknown): Record<string, unknown> | undefined {
  return isRecord(v) && isRecord(v.error) ? v.error : undefined;
}

/**
 * The AnvilError an error envelope describes. The envelope's own code wins when it is one of
 * ERROR_CODES; otherwise the error is fallback and the envelope's code is kept as details.code
 * (unless the details already name one).
 */
function envelopeError(envelope: Record<string, unknown>, operation: string | undefined, fallback: string): AnvilError {
  const details: Record<string, unknown> = isRecord(envelope.details) ? { ...envelope.details } : {};
  let code = envelope.code;
  if (typeof code !== "string" || !isErrorCode(code)) {
    if (typeof code === "string" && code !== "" && details.code === undefined) details.code = code;
    code = fallback;
  }
  const flags = Array.isArray(envelope.required_flags) ? envelope.required_flags : [];
  const retryAfter = envelope.retry_after_ms ?? details.retry_after_ms;
  return new AnvilError(String(code), typeof envelope.message === "string" && envelope.message ? envelope.message : "The tool call failed.", {
    operation: typeof envelope.operation === "string" && envelope.operation ? envelope.operation : operation,
    traceId: typeof envelope.trace_id === "string" && envelope.trace_id ? envelope.trace_id : null,
    retryable: envelope.retryable === true,
    safeToRetry: envelope.safe_to_retry === true,
    upstream: isRecord(envelope.upstream) ? envelope.upstream : null,
    requiredArguments: flags.filter((f): f is string => typeof f === "string").map(flagToArgument),
    details,
    retryAfterMs: typeof retryAfter === "number" ? retryAfter : null,
  });
}

/**
 * The AnvilError of a refused HTTP request: the code of the body's envelope when it is a known
 * one (a 428 confirmation_required, a 409 conflict, ...), else the code the status alone names.
 */
export function httpError(status: number, body: string, operation: string | undefined): AnvilError {
  const fallback = STATUS_CODES[status] ?? "upstream_unavailable";
  const refused = "The Anvil gateway refused the request (HTTP " + status + ").";
  const retryable = status >= 500 || status === 429;
  const envelope = envelopeOf(jsonOf(body));
  if (envelope === undefined) {
    return new AnvilError(fallback, refused, { operation, retryable, details: { http_status: status } });
  }
  const e = envelopeError(envelope, operation, fallback);
  return new AnvilError(e.code, typeof envelope.message === "string" && envelope.message ? e.message : refused, {
    operation: e.operation,
    traceId: e.traceId,
    retryable: e.retryable || retryable,
    safeToRetry: e.safeToRetry,
    upstream: e.upstream,
    requiredArguments: e.requiredArguments,
    details: { ...e.details, http_status: status },
    retryAfterMs: e.retryAfterMs,
  });
}

/** The AnvilError of a JSON-RPC error answer: unsupported_operation, unless its data carries an error envelope (or a code). */
export function jsonrpcError(error: unknown, operation: string | undefined): AnvilError {
  const err = isRecord(error) ? error : {};
  const message = typeof err.message === "string" ? err.message : "The Anvil gateway answered with a JSON-RPC error.";
  const data = err.data;
  const envelope = envelopeOf(data) ?? (isRecord(data) && typeof data.code === "string" ? data : undefined);
  if (envelope === undefined) {
    return new AnvilError("unsupported_operation", message, { operation, details: { jsonrpc_code: err.code ?? null } });
  }
  const e = envelopeError(envelope, operation, "unsupported_operation");
  return new AnvilError(e.code, typeof envelope.message === "string" && envelope.message ? e.message : message, {
    operation: e.operation,
    traceId: e.traceId,
    retryable: e.retryable,
    safeToRetry: e.safeToRetry,
    upstream: e.upstream,
    requiredArguments: e.requiredArguments,
    details: { ...e.details, jsonrpc_code: err.code ?? null },
    retryAfterMs: e.retryAfterMs,
  });
}

function resultOf(answer: Answer, id: number, operation: string | undefined): unknown {
  if (answer.status >= 400) throw httpError(answer.status, answer.body, operation);
  for (const m of messagesOf(answer)) {
    if (!isRecord(m) || m.id !== id) continue;
    if (m.error !== undefined) throw jsonrpcError(m.error, operation);
    if (m.result !== undefined) return m.result;
  }
  throw new AnvilError("upstream_unavailable", "The Anvil gateway's answer did not include this call's response.", {
    operation,
    retryable: true,
  });
}

function flagToArgument(flag: string): string {
  return flag.replace(/^-+/, "").replace(/-/g, "_");
}

function firstText(result: ToolResult): string | undefined {
  if (!Array.isArray(result.content)) return undefined;
  for (const item of result.content) {
    if (isRecord(item) && item.type === "text" && typeof item.text === "string") return item.text;
  }
  return undefined;
}

function toolError(text: string | undefined, operation: string | undefined): AnvilError {
  const envelope = envelopeOf(jsonOf(text));
  if (envelope === undefined) {
    return new AnvilError("unknown_upstream_error", text || "The tool call failed.", { operation });
  }
  return envelopeError(envelope, operation, "unknown_upstream_error");
}

/** The data of a tools/call result, or throws its error as AnvilError. */
export function decodeToolResult(result: ToolResult, operation?: string): unknown {
  const text = firstText(result);
  if (result.isError === true) throw toolError(text, operation);
  const sc = result.structuredContent;
  if (isRecord(sc)) {
    if (SPEC.dryRunArg in sc) return sc[SPEC.dryRunArg];
    if ("anvil_unvalidated" in sc) return sc.anvil_unvalidated;
  }
  if (text !== undefined) {
    try {
      return JSON.parse(text);
    } catch {
      // not JSON
    }
  }
  if (isRecord(sc) && Object.keys(sc).length === 1 && "result" in sc) return sc.result;
  if (sc !== undefined) return sc;
  return text ?? null;
}

/** Whether the URL's host is localhost or a loopback address. */
function isLoopback(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Calls tools on the Anvil gateway as one connector. */
export class GatewayTransport {
  readonly url: string;
  readonly connector: string;
  readonly userAgent: string;
  readonly timeoutMs: number;
  /** See ClientOptions.maxRetries. */
  readonly maxRetries: number;
  readonly #tokenFile: string | undefined;
  readonly #tokenProvider: TokenProvider | undefined;
  readonly #fetch: typeof fetch;

  constructor(url: string, options: ClientOptions = {}) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:") || parsed.username !== "") {
      throw new AnvilError("validation_error", "The gateway URL must be an http(s) URL without credentials.", {
        details: { code: "sdk/invalid_gateway_url" },
      });
    }
    this.url = url;
    this.connector = options.gatewayConnector || env("ANVIL_GATEWAY_CONNECTOR") || DEFAULT_CONNECTOR;
    this.userAgent = options.userAgent || DEFAULT_USER_AGENT;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? 2;
    this.#tokenFile = options.tokenFile;
    this.#tokenProvider = options.tokenProvider;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /**
   * The bearer token, read now. Without a token provider or file (tokenFile, ANVIL_GATEWAY_TOKEN_FILE)
   * it is "" for a gateway on a loopback address, which in auth mode none takes calls without one (the
   * call then carries no Authorization; a gateway verifying tokens answers 401, auth_required); for any
   * other gateway it is auth_required, and nothing is sent.
   */
  async readToken(operation?: string): Promise<string> {
    let token: string;
    if (this.#tokenProvider === undefined && (this.#tokenFile ?? env("ANVIL_GATEWAY_TOKEN_FILE")) === undefined && isLoopback(this.url)) {
      return "";
    }
    if (this.#tokenProvider !== undefined) {
      try {
        token = String(await this.#tokenProvider()).trim();
      } catch {
        throw new AnvilError("auth_required", "The token provider failed.", { operation, details: { code: "sdk/token_provider_failed" } });
      }
    } else {
      const file = this.#tokenFile ?? env("ANVIL_GATEWAY_TOKEN_FILE");
      if (file === undefined) {
        throw new AnvilError("auth_required", "No gateway token: ANVIL_GATEWAY_TOKEN_FILE is not set.", {
          operation,
          details: { code: "sdk/token_file_unset" },
        });
      }
      try {
        token = (await readFile(file, "utf8")).trim();
      } catch {
        throw new AnvilError("auth_required", "The gateway token file could not be read.", {
          operation,
          details: { code: "sdk/token_file_unreadable" },
        });
      }
    }
    if (token === "") {
      throw new AnvilError("auth_required", "The gateway token is empty.", { operation, details: { code: "sdk/token_empty" } });
    }
    return token;
  }

  async #send(
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    options: TransportCallOptions,
    url: string = this.url,
  ): Promise<Answer> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, options.timeoutMs ?? this.timeoutMs);
    const onAbort = (): void => controller.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await this.#fetch(url, { method, headers, body, redirect: "manual", signal: controller.signal });
      return { status: res.status, headers: res.headers, body: await res.text() };
    } catch {
      if (timedOut) {
        throw new AnvilError("upstream_timeout", "The Anvil gateway did not answer in time.", {
          operation: options.operation,
          retryable: true,
        });
      }
      throw new AnvilError("upstream_unavailable", UNREACHABLE, { operation: options.operation, retryable: true });
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * Ranks this connector's tools for a plain-language query (GET /tools?search=...): the tools the
   * caller's grant allows, best first, with the same ranking as the gateway's MCP anvil_search.
   */
  async searchTools(query: string, options: TransportCallOptions & { limit?: number } = {}): Promise<SearchResult[]> {
    const token = await this.readToken();
    const headers: Record<string, string> = { Accept: "application/json", "User-Agent": this.userAgent };
    if (token !== "") headers.Authorization = "Bearer " + token;
    const limit = options.limit === undefined ? undefined : String(options.limit);
    const url = toolsUrl(this.url, { search: query, connector: this.connector, limit });
    const answer = await this.#send("GET", headers, undefined, options, url);
    if (answer.status >= 400) throw httpError(answer.status, answer.body, undefined);
    const doc = jsonOf(answer.body);
    if (!isRecord(doc) || !Array.isArray(doc.tools)) {
      throw new AnvilError("upstream_unavailable", "The Anvil gateway's answer to the search is not a tool list.", { retryable: true });
    }
    return doc.tools.filter(isRecord) as unknown as SearchResult[];
  }

  /** Calls one tool in a fresh MCP session and returns the raw tools/call result. */
  async callTool(name: string, args: Record<string, unknown>, options: TransportCallOptions = {}): Promise<ToolResult> {
    const operation = options.operation;
    const token = await this.readToken(operation);
    const base: Record<string, string> = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "User-Agent": this.userAgent,
    };
    if (token !== "") base.Authorization = "Bearer " + token;
    for (const [k, v] of Object.entries(options.headers ?? {})) {
      if (!PROTECTED.includes(k.toLowerCase())) base[k] = v;
    }
    const headers: Record<string, string> = { ...base };
    let session: string | undefined;
    try {
      const initialize = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: this.userAgent, version: "1" } },
      };
      const init = await this.#send("POST", base, JSON.stringify(initialize), options);
      session = init.headers.get("mcp-session-id") || undefined;
      const initResult = resultOf(init, 1, operation);
      if (session !== undefined) headers["Mcp-Session-Id"] = session;
      const version = isRecord(initResult) ? initResult.protocolVersion : undefined;
      headers["Mcp-Protocol-Version"] = typeof version === "string" && version !== "" ? version : PROTOCOL_VERSION;
      const note = await this.#send("POST", headers, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), options);
      if (note.status >= 400) throw httpError(note.status, note.body, operation);
      const params: Record<string, unknown> = { name, arguments: args };
      if (options.meta !== undefined) params._meta = options.meta;
      const call = { jsonrpc: "2.0", id: 2, method: "tools/call", params };
      const answer = await this.#send("POST", headers, JSON.stringify(call), options);
      const result = resultOf(answer, 2, operation);
      if (!isRecord(result)) {
        throw new AnvilError("upstream_unavailable", "The Anvil gateway answered with something that is not a tool result.", {
          operation,
        });
      }
      return result as ToolResult;
    } finally {
      if (session !== undefined) {
        try {
          await this.#send("DELETE", headers, undefined, { ...options, timeoutMs: Math.min(options.timeoutMs ?? this.timeoutMs, 5000) });
        } catch {
          // closing is best effort
        }
      }
    }
  }
}
