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

/**
 * A call that failed, locally or at the gateway. Every AnvilError is an instance of the subclass of
 * its code (`new AnvilError("policy_denied", ...)` is a PolicyDenied), so `e instanceof RateLimited`
 * picks one code and `e instanceof AnvilError` all of them.
 */
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
    this.name = new.target.name;
    this.code = isErrorCode(code) ? code : "unknown_upstream_error";
    this.operation = init.operation ?? null;
    this.traceId = init.traceId ?? null;
    this.retryable = init.retryable ?? false;
    this.safeToRetry = init.safeToRetry ?? false;
    this.upstream = init.upstream ?? null;
    this.requiredArguments = init.requiredArguments ?? [];
    this.details = init.details ?? {};
    this.retryAfterMs = init.retryAfterMs ?? null;
    if (new.target === AnvilError) {
      // The base class built directly: the instance is its code's subclass instead.
      return new ERROR_CLASSES[this.code](this.code, message, init);
    }
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

/** An AnvilError whose code is validation_error. */
export class ValidationError extends AnvilError {
  declare readonly code: "validation_error";
}

/** An AnvilError whose code is auth_required. */
export class AuthRequired extends AnvilError {
  declare readonly code: "auth_required";
}

/** An AnvilError whose code is permission_denied. */
export class PermissionDenied extends AnvilError {
  declare readonly code: "permission_denied";
}

/** An AnvilError whose code is not_found. */
export class NotFound extends AnvilError {
  declare readonly code: "not_found";
}

/** An AnvilError whose code is conflict. */
export class Conflict extends AnvilError {
  declare readonly code: "conflict";
}

/** An AnvilError whose code is rate_limited. */
export class RateLimited extends AnvilError {
  declare readonly code: "rate_limited";
}

/** An AnvilError whose code is upstream_timeout. */
export class UpstreamTimeout extends AnvilError {
  declare readonly code: "upstream_timeout";
}

/** An AnvilError whose code is upstream_unavailable. */
export class UpstreamUnavailable extends AnvilError {
  declare readonly code: "upstream_unavailable";
}

/** An AnvilError whose code is unsafe_retry_blocked. */
export class UnsafeRetryBlocked extends AnvilError {
  declare readonly code: "unsafe_retry_blocked";
}

/** An AnvilError whose code is confirmation_required. */
export class ConfirmationRequired extends AnvilError {
  declare readonly code: "confirmation_required";
}

/** An AnvilError whose code is idempotency_required. */
export class IdempotencyRequired extends AnvilError {
  declare readonly code: "idempotency_required";
}

/** An AnvilError whose code is schema_mismatch. */
export class SchemaMismatch extends AnvilError {
  declare readonly code: "schema_mismatch";
}

/** An AnvilError whose code is unsupported_operation. */
export class UnsupportedOperation extends AnvilError {
  declare readonly code: "unsupported_operation";
}

/** An AnvilError whose code is policy_denied. */
export class PolicyDenied extends AnvilError {
  declare readonly code: "policy_denied";
}

/** An AnvilError whose code is unknown_upstream_error. */
export class UnknownUpstreamError extends AnvilError {
  declare readonly code: "unknown_upstream_error";
}

/** The AnvilError subclass of each code. */
export const ERROR_CLASSES: { readonly [C in ErrorCode]: new (code: string, message: string, init?: AnvilErrorInit) => AnvilError } = {
  validation_error: ValidationError,
  auth_required: AuthRequired,
  permission_denied: PermissionDenied,
  not_found: NotFound,
  conflict: Conflict,
  rate_limited: RateLimited,
  upstream_timeout: UpstreamTimeout,
  upstream_unavailable: UpstreamUnavailable,
  unsafe_retry_blocked: UnsafeRetryBlocked,
  confirmation_required: ConfirmationRequired,
  idempotency_required: IdempotencyRequired,
  schema_mismatch: SchemaMismatch,
  unsupported_operation: UnsupportedOperation,
  policy_denied: PolicyDenied,
  unknown_upstream_error: UnknownUpstreamError,
};
