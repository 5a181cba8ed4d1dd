// Local safety gates: they run before anything is sent to the gateway.

import { createHash } from "node:crypto";

import { AnvilError } from "./errors.ts";
import type { OperationSpec } from "./spec.ts";

/** Compact JSON with sorted keys, the form idempotency keys are derived from. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) {
    return "[" + value.map((v) => canonicalJson(v)).join(",") + "]";
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort();
  return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonicalJson(record[k])).join(",") + "}";
}

/** "anvil-" + the first 32 hex characters of sha256(id + NUL + canonical JSON). */
export function deriveIdempotencyKey(operationId: string, args: Record<string, unknown>): string {
  const digest = createHash("sha256")
    .update(operationId + "\u0000" + canonicalJson(args), "utf8")
    .digest("hex");
  return "anvil-" + digest.slice(0, 32);
}

/** Refuses a confirmation-gated operation called without { confirm: true }. */
export function checkConfirmation(op: OperationSpec, confirm: boolean): void {
  if (op.confirm && !confirm) {
    throw new AnvilError(
      "confirmation_required",
      op.id + " needs confirmation: pass { confirm: true } only when the task really asks for this change.",
      { operation: op.id, requiredArguments: ["confirm"], details: { code: "sdk/confirmation_required" } },
    );
  }
}

/** The key for this call: the caller's, a derived one, or undefined. */
export function resolveIdempotencyKey(
  op: OperationSpec,
  key: string | undefined,
  args: Record<string, unknown>,
): string | undefined {
  if (key !== undefined) {
    if (typeof key !== "string" || key === "") {
      throw new AnvilError("validation_error", "idempotencyKey must be a non-empty string.", {
        operation: op.id,
        details: { code: "sdk/invalid_idempotency_key" },
      });
    }
    return key;
  }
  if (op.idempotency.keyRequired) {
    throw new AnvilError("idempotency_required", op.id + " needs an idempotency key: pass { idempotencyKey }.", {
      operation: op.id,
      requiredArguments: ["idempotencyKey"],
      details: { code: "sdk/idempotency_required" },
    });
  }
  if (op.idempotency.keyDerived) {
    return deriveIdempotencyKey(op.id, args);
  }
  return undefined;
}
