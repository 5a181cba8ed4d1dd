package effect

import (
	"encoding/json"
	"github.com/anvil-dev/anvil/runtime/canon"

	"github.com/anvil-dev/anvil/runtime/envelope"
)

// Call-time codes, carried in an error envelope's details.code.
const (
	// CodeInvalidMeta (validation_error): _meta.idempotency_key is not a
	// non-empty string, or _meta.stage is not a boolean.
	CodeInvalidMeta = "effect/invalid_meta"
	// CodeIdempotencyKeyTooLong (validation_error): an idempotency key
	// (_meta.idempotency_key, the REST Idempotency-Key header, or a key in
	// the operation's carrier argument) is longer than MaxIdempotencyKeyBytes;
	// details.field names where it came from.
	CodeIdempotencyKeyTooLong = "effect/idempotency_key_too_long"
	// CodeInvalidIdempotencyKey (validation_error): an idempotency key is
	// not valid UTF-8 or holds a control character (NUL included);
	// details.field names where it came from.
	CodeInvalidIdempotencyKey = "effect/invalid_idempotency_key"
	// CodeIdempotencyKeyConflict (validation_error): a different key is
	// already in the arguments; details.field names the input.
	CodeIdempotencyKeyConflict = "effect/idempotency_key_conflict"
	// CodeNoDraftForm (unsupported_operation): stage was requested on an
	// operation with no draft form.
	CodeNoDraftForm = "effect/no_draft_form"
	// CodeDraftUnavailable (unsupported_operation): the draft operation is
	// not served.
	CodeDraftUnavailable = "effect/draft_unavailable"
	// CodeDraftArgumentMissing (validation_error): a draft mapping resolves
	// to nothing; details.argument names it.
	CodeDraftArgumentMissing = "effect/draft_argument_missing"
	// CodeDraftInputInvalid (validation_error): the mapped draft input fails
	// the draft tool's own schema.
	CodeDraftInputInvalid = "effect/draft_input_invalid"
)

// newError builds an envelope for a call-time effect refusal. Nothing was
// sent upstream, so it is neither retryable nor safe to retry unchanged.
// The caller fills TraceID (and Operation when opID is empty).
func newError(code, opID, message string, details json.RawMessage) *envelope.Error {
	return &envelope.Error{Code: code, Message: message, Operation: opID, Details: details}
}

// details builds a details object with keys in the given order: code first,
// then the other key/value pairs.
func details(code string, kv ...string) json.RawMessage {
	b := make([]byte, 0, 64)
	b = append(b, `{"code":`...)
	b = canon.AppendString(b, code)
	for i := 0; i+1 < len(kv); i += 2 {
		b = append(b, ',')
		b = canon.AppendString(b, kv[i])
		b = append(b, ':')
		b = canon.AppendString(b, kv[i+1])
	}
	return append(b, '}')
}
