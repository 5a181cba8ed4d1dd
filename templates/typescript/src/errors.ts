// Errors raised by this client.

/** Every code an AnvilError can carry. */
export const ERROR_CODES = [
  "validation_error",
  "auth_required",
  "permission_denied",
  "not_found",
  "conflict",
  "rate_limited",
  "upstream_timeout",
  "upstream_unavailable",
  "unsafe_retry_blocked",
  "confirmation_required",
  "idempotency_required",
  "schema_mismatch",
  "unsupported_operation",
  "policy_denied",
  "unknown_upstream_error",
] as const;

/** One of ERROR_CODES. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The optional fields of an AnvilError. */
export interface AnvilErrorInit {
  operation?: string | null;
  traceId?: string | null;
  retryable?: boolean;
  safeToRetry?: boolean;
  upstream?: Record<string, unknown> | null;
  requiredArguments?: string[];
  details?: Record<string, unknown>;
  retryAfterMs?: number | null;
}

/** Reports whether code is one of ERROR_CODES. */
export function isErrorCode(code: string): code is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(code);
}

/** A call that failed, locally or at the gateway. */
export class AnvilError extends Error {
  readonly code: ErrorCode;
  readonly operation: string | null;
  readonly traceId: string | null;
  readonly retryable: boolean;
  readonly safeToRetry: boolean;
  readonly upstream: Record<string, unknown> | null;
  readonly requiredArguments: string[];
  readonly details: Record<string, unknown>;
  readonly retryAfterMs: number | null;

  constructor(code: string, message: string, init: AnvilErrorInit = {}) {
    super(message);
    this.name = "AnvilError";
    this.code = isErrorCode(code) ? code : "unknown_upstream_error";
    this.operation = init.operation ?? null;
    this.traceId = init.traceId ?? null;
    this.retryable = init.retryable ?? false;
    this.safeToRetry = init.safeToRetry ?? false;
    this.upstream = init.upstream ?? null;
    this.requiredArguments = init.requiredArguments ?? [];
    this.details = init.details ?? {};
    this.retryAfterMs = init.retryAfterMs ?? null;
  }

  /** The error as an envelope body ({code, message, ...}). */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      safe_to_retry: this.safeToRetry,
      operation: this.operation,
      trace_id: this.traceId,
    };
    if (this.upstream !== null) out.upstream = this.upstream;
    if (this.requiredArguments.length > 0) out.required_arguments = this.requiredArguments;
    if (Object.keys(this.details).length > 0) out.details = this.details;
    if (this.retryAfterMs !== null) out.retry_after_ms = this.retryAfterMs;
    return out;
  }
}
