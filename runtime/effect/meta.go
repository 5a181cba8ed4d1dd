package effect

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// Caller _meta keys the gateway reads; every other key is ignored.
const (
	MetaIdempotencyKey = "idempotency_key"
	MetaStage          = "stage"
)

// tools/list _meta keys published for operations that declare a contract.
const (
	MetaEffectClass    = "anvil/effect_class"
	MetaEffectContract = "anvil/effect_contract"
)

// MaxIdempotencyKeyBytes caps an idempotency key (the ledger id): it is
// written into every audit line, the effect report and the upstream request,
// so an unbounded one would bloat all three. 255 bytes holds any ULID, UUID
// or provider key format in use (Stripe's limit is 255 characters).
const MaxIdempotencyKeyBytes = 255

// CheckKey refuses an idempotency key the ledger, the audit line and the
// upstream request cannot all hold as it is: longer than
// MaxIdempotencyKeyBytes (effect/idempotency_key_too_long), or not valid
// UTF-8, or holding a control character (U+0000–U+001F, U+007F:
// effect/invalid_idempotency_key). Both are validation_error (400), with
// details.field set to field (where the key came from, such as
// "_meta.idempotency_key" or the carrier input's name), checked before any
// store sees the key: a key PostgreSQL cannot store is the caller's error,
// not an outage. The caller fills the envelope's Operation when it knows
// it.
func CheckKey(field, key string) *envelope.Error {
	if len(key) > MaxIdempotencyKeyBytes {
		return newError(envelope.ValidationError, "",
			"The idempotency key must be at most 255 bytes.", details(CodeIdempotencyKeyTooLong, "field", field))
	}
	if !utf8.ValidString(key) || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return newError(envelope.ValidationError, "",
			"The idempotency key must be valid UTF-8 without control characters.", details(CodeInvalidIdempotencyKey, "field", field))
	}
	return nil
}

// Meta is what a caller's _meta asks of a call.
type Meta struct {
	// IdempotencyKey is the caller's ledger key; "" when none was given.
	IdempotencyKey string
	// HasKey reports whether a key was given (IdempotencyKey != "").
	HasKey bool
	// Stage asks for the operation's draft form instead of the call.
	Stage bool
}

// ParseMeta reads a tools/call _meta (nil when absent). idempotency_key
// must be a non-empty string and stage a boolean when present (a present
// null is invalid too); otherwise it returns validation_error
// effect/invalid_meta. A key CheckKey refuses is refused here (the REST gateway passes its
// Idempotency-Key header here as _meta.idempotency_key, so the cap holds for
// both). Other keys are ignored. The caller fills the envelope's Operation
// and TraceID.
func ParseMeta(meta map[string]any) (Meta, *envelope.Error) {
	var m Meta
	if v, ok := meta[MetaIdempotencyKey]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" {
			return Meta{}, newError(envelope.ValidationError, "",
				"_meta.idempotency_key must be a non-empty string.", details(CodeInvalidMeta, "field", "_meta."+MetaIdempotencyKey))
		}
		if err := CheckKey("_meta."+MetaIdempotencyKey, s); err != nil {
			return Meta{}, err
		}
		m.IdempotencyKey, m.HasKey = s, true
	}
	if v, ok := meta[MetaStage]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return Meta{}, newError(envelope.ValidationError, "",
				"_meta.stage must be a boolean.", details(CodeInvalidMeta, "field", "_meta."+MetaStage))
		}
		m.Stage = b
	}
	return m, nil
}

// ParseMetaJSON is ParseMeta over raw JSON; empty input or null is no _meta,
// and anything but an object is effect/invalid_meta.
func ParseMetaJSON(raw json.RawMessage) (Meta, *envelope.Error) {
	if len(raw) == 0 {
		return Meta{}, nil
	}
	var meta map[string]any
	if err := json.Unmarshal(raw, &meta); err != nil {
		return Meta{}, newError(envelope.ValidationError, "", "_meta must be an object.", details(CodeInvalidMeta, "field", "_meta"))
	}
	return ParseMeta(meta)
}

// carrierInput is the input that carries op's idempotency key upstream, or
// "" when op declares no carrier.
func carrierInput(op *air.Operation) string {
	if op == nil || !op.Idempotency.HasCarrier() {
		return ""
	}
	return op.Input.Safety.IdempotencyKey
}

// CheckKeyConflict refuses a call whose arguments already hold a different
// idempotency key than key (the caller's _meta or Idempotency-Key) under the
// operation's carrier input (op.Input.Safety.IdempotencyKey):
// validation_error effect/idempotency_key_conflict with details.field
// naming the input. An absent or null argument, the same key, no key, or no
// carrier is fine. A key in the carrier argument longer than
// MaxIdempotencyKeyBytes is refused too (CheckKey), with or without a
// call key: call it also when the caller gave no key.
func CheckKeyConflict(op *air.Operation, args map[string]any, key string) *envelope.Error {
	field := carrierInput(op)
	if field == "" {
		return nil
	}
	if s, isStr := args[field].(string); isStr {
		if err := CheckKey(field, s); err != nil {
			err.Operation = op.ID
			return err
		}
	}
	if key == "" {
		return nil
	}
	v, ok := args[field]
	if !ok || v == nil {
		return nil
	}
	if s, isStr := v.(string); isStr && s == key {
		return nil
	}
	return newError(envelope.ValidationError, op.ID,
		"The arguments carry a different idempotency key in "+field+" than the call's key; send one key.",
		details(CodeIdempotencyKeyConflict, "field", field))
}

// PlaceKey decides which idempotency key goes upstream for a call of op.
// When op declares a carrier (op.Input.Safety.IdempotencyKey) and key is
// set, it sets args[carrier] = key (allocating args when nil) so the key
// goes upstream; with a carrier and no key, a non-empty string already in
// args[carrier] (an SDK-supplied key) goes. Without a carrier nothing is
// sent. It returns the arguments and the key sent ("": none, reported
// null). Run CheckKeyConflict first. For a staged call pass the draft
// operation.
func PlaceKey(op *air.Operation, args map[string]any, key string) (map[string]any, string) {
	field := carrierInput(op)
	if field == "" {
		return args, ""
	}
	if key != "" {
		if args == nil {
			args = make(map[string]any, 1)
		}
		args[field] = key
		return args, key
	}
	if s, ok := args[field].(string); ok && s != "" {
		return args, s
	}
	return args, ""
}
