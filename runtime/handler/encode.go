package handler

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/anvil-dev/anvil/runtime/air"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// The helpers below are what generated request builders and hashers call.
// Each writes exactly what the generic path (upstream.BuildRequest,
// audit.InputSHA256) writes for the same decoded value; compiled_test.go
// checks them against it. The error constructors are marked noinline: they
// are cold paths of every generated builder, and inlining them copies their
// body into each one (a large workspace's compile time and binary size).

// BuildError is the error of a request that cannot be built, as
// upstream.BuildRequest words it (validation_error; internal_error when
// internal is set).
//
//go:noinline
func BuildError(opID, message string, internal bool) error {
	code := envelope.ValidationError
	if internal {
		code = envelope.InternalError
	}
	return &envelope.Error{Code: code, Message: message, Operation: opID}
}

// MissingInput is BuildError "Missing required input <key>.".
//
//go:noinline
func MissingInput(opID, key string) error {
	return BuildError(opID, "Missing required input "+key+".", false)
}

// BadBase is BuildError for a server URL that is not an http(s) URL.
//
//go:noinline
func BadBase(opID string) error {
	return BuildError(opID, "The operation's server URL is not an http(s) URL.", true)
}

// BadHeader reports a header value the builder refuses (CR, LF or NUL).
func BadHeader(s string) bool { return strings.ContainsAny(s, "\r\n\x00") }

// AppendJSONString appends s as a request body writes it (encoding/json
// without HTML escaping).
func AppendJSONString(b []byte, s string) []byte {
	out, _ := upstream.AppendJSON(b, s)
	return out
}

// AppendJSONNumber appends a JSON number as a request body writes it.
func AppendJSONNumber(b []byte, n json.Number) []byte {
	out, err := upstream.AppendJSON(b, n)
	if err != nil {
		return append(b, "null"...)
	}
	return out
}

// WholeBody encodes a "whole" body input (any decoded value): raw text for
// a string under a text or octet-stream type, flat form pairs for a form,
// else JSON. It returns the bytes and the Content-Type. carrierKey and
// carrier add an idempotency key to an object body (carrierKey "" adds none).
// key, the input's name, is not used: the error names no argument.
func WholeBody(opID, key string, enc air.BodyEncoding, contentType string, v any, carrierKey string, carrier any) ([]byte, string, error) {
	return upstream.EncodeBody(opID, enc, contentType, v, carrierKey, carrier)
}

// BodyValueError is the error of a body field that cannot be encoded.
//
//go:noinline
func BodyValueError(opID, name string) error {
	return BuildError(opID, "Body input "+name+" cannot be encoded as JSON.", false)
}

// Canonical writes the canonical JSON of a typed input for its audit hash,
// keys in the order generated code calls Key (sorted by UTF-16 code units).
type Canonical struct {
	b []byte
	n int
}

// NewCanonical starts an object in buf.
func NewCanonical(buf []byte) Canonical { return Canonical{b: append(buf[:0], '{')} }

// key starts a member.
func (c *Canonical) key(name string) {
	if c.n > 0 {
		c.b = append(c.b, ',')
	}
	c.n++
	c.b = appendCanonicalString(c.b, name)
	c.b = append(c.b, ':')
}

// redacted starts member name and, when redact is set, writes the redacted
// value and reports true.
func (c *Canonical) redacted(name string, redact bool) bool {
	c.key(name)
	if redact {
		c.b = append(c.b, `"***"`...)
	}
	return redact
}

// Null writes member name as null ("***" when redact is set).
func (c *Canonical) Null(name string, redact bool) {
	if !c.redacted(name, redact) {
		c.b = append(c.b, "null"...)
	}
}

// Bool writes member name holding a boolean.
func (c *Canonical) Bool(name string, redact bool, v bool) {
	if !c.redacted(name, redact) {
		c.b = strconv.AppendBool(c.b, v)
	}
}

// String writes member name holding a string as JSON.stringify does.
func (c *Canonical) String(name string, redact bool, s string) {
	if !c.redacted(name, redact) {
		c.b = appendCanonicalString(c.b, s)
	}
}

// Number writes member name holding a JSON number as JavaScript prints it.
func (c *Canonical) Number(name string, redact bool, n json.Number) {
	if c.redacted(name, redact) {
		return
	}
	s := string(n)
	if len(s) <= 15 && upstream.IsIntegerText(s) && s != "-0" && (len(s) == 1 || (s[0] != '0' && !strings.HasPrefix(s, "-0"))) {
		c.b = append(c.b, s...)
		return
	}
	c.b = append(c.b, audit.CanonicalJSON(n)...)
}

// SHA256 closes the object and returns "sha256:<hex>" of it.
func (c *Canonical) SHA256() string {
	c.b = append(c.b, '}')
	sum := sha256.Sum256(c.b)
	var out [7 + 64]byte
	copy(out[:], "sha256:")
	hex.Encode(out[7:], sum[:])
	return string(out[:])
}

// appendCanonicalString writes s as the audit hash's canonical JSON does.
func appendCanonicalString(b []byte, s string) []byte { return canon.AppendString(b, s) }

// SensitiveKeys reports, for each input name, whether the audit hash
// redacts its value (audit.SensitiveKey). Generated code calls it once.
func SensitiveKeys(names ...string) []bool {
	out := make([]bool, len(names))
	for i, n := range names {
		out[i] = audit.SensitiveKey(n)
	}
	return out
}
