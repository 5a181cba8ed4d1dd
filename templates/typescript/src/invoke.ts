// One call: the operation a name means, the local gates, then the gateway, then the result.
// The generated client's methods all end here.

import { AnvilError } from "./errors.ts";
import { decodeToolResult } from "./gateway.ts";
import type { GatewayTransport } from "./gateway.ts";
import { checkConfirmation, resolveIdempotencyKey } from "./safety.ts";
import { SPEC } from "./spec.ts";
import type { OperationSpec } from "./spec.ts";

/** The safety controls and transport options of one call. */
export interface CallOptions {
  /** Confirms a write that needs confirmation. Without it such a call is refused before anything is sent. */
  confirm?: boolean;
  /** The idempotency key to send upstream (derived from the inputs where supported when not given). */
  idempotencyKey?: string;
  /** Returns the gateway's plan; nothing changes. */
  dryRun?: boolean;
  /** Performs the operation's draft form instead (operations that declare one); lastEffect.staged says how to promote or discard it. */
  stage?: boolean;
  /** Extra HTTP headers for the gateway. */
  headers?: Record<string, string>;
  /** Milliseconds each HTTP request may take. */
  timeoutMs?: number;
  /** Aborts the call. */
  signal?: AbortSignal;
}

/**
 * The operation a name means: a method name, an AIR id, or a tool name, bare or as the gateway and
 * its effect reports name it (`<connector>__<tool>`, under this client's connector only).
 */
export function operationFor(name: string, connector: string): OperationSpec | undefined {
  if (Object.prototype.hasOwnProperty.call(SPEC.operations, name)) return SPEC.operations[name];
  const ops = Object.values(SPEC.operations);
  const byId = ops.find((op) => op.id === name);
  if (byId !== undefined) return byId;
  let tool = name;
  if (connector !== "" && name.startsWith(connector + "__")) tool = name.slice(connector.length + 2);
  else if (name.includes("__")) return undefined;
  return ops.find((op) => op.tool === tool);
}

/**
 * Calls op with tool-input arguments through transport (null when no gateway URL is set). onEffect
 * receives the call's effect report (_meta.effect), or null, before the result is decoded, so a
 * refused call still reports its effect.
 */
export async function invoke(
  transport: GatewayTransport | null,
  op: OperationSpec,
  input: object,
  options: CallOptions,
  onEffect: (effect: Record<string, unknown> | null) => void,
): Promise<unknown> {
  const args: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input ?? {})) {
    if (value !== undefined) args[key] = value;
  }
  checkConfirmation(op, options.confirm === true);
  const key = resolveIdempotencyKey(op, options.idempotencyKey, args);
  if (transport === null) {
    throw new AnvilError(
      "validation_error",
      "ANVIL_GATEWAY_URL is not set; this client calls operations only through the Anvil gateway.",
      { operation: op.id, details: { code: "sdk/gateway_url_unset" } },
    );
  }
  const callArgs: Record<string, unknown> = { ...args };
  if (op.confirmKey !== null && options.confirm === true) callArgs[op.confirmKey] = true;
  if (key !== undefined && op.idempotency.input !== null) callArgs[op.idempotency.input] = key;
  if (options.dryRun === true) callArgs[SPEC.dryRunArg] = true;
  onEffect(null);
  const retries = op.kind === "read" || (key !== undefined && op.idempotency.input !== null) ? transport.maxRetries : 0;
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await transport.callTool(transport.connector + "__" + op.tool, callArgs, {
        operation: op.id,
        meta: options.stage === true ? { stage: true } : undefined,
        headers: options.headers,
        timeoutMs: options.timeoutMs,
        signal: options.signal,
      });
      const effect = result._meta?.effect;
      if (typeof effect === "object" && effect !== null && !Array.isArray(effect)) {
        onEffect(effect as Record<string, unknown>);
      }
      return decodeToolResult(result, op.id);
    } catch (e) {
      if (attempt >= retries || !(e instanceof AnvilError) || !e.retryable || !RETRIED_CODES.includes(e.code) || options.signal?.aborted) {
        throw e;
      }
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt, e.retryAfterMs)));
    }
  }
}

/** The codes a call is retried on: the gateway or upstream was busy or did not answer. */
export const RETRIED_CODES: readonly string[] = ["rate_limited", "upstream_unavailable", "upstream_timeout"];

/**
 * Milliseconds to wait before retry attempt+1: the gateway's retry_after_ms (capped at a minute),
 * else 500 ms doubling up to 8 s.
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | null): number {
  if (retryAfterMs !== null && retryAfterMs >= 0) return Math.min(retryAfterMs, 60000);
  return Math.min(500 * 2 ** attempt, 8000);
}
