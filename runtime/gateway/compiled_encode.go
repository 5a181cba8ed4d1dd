package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/anvil-dev/anvil/runtime/jsstring"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// The helpers below are what generated request builders and hashers call.
// Each writes exactly what the generic path (upstream.BuildRequest,
// audit.InputSHA256) writes for the same decoded value; compiled_test.go
// checks them against it.

// BuildError is the error of a request that cannot be built, as
// upstream.BuildRequest words it (validation_error; internal_error when
// internal is set).
func BuildError(opID, message string, internal bool) error {
	code := envelope.ValidationError
	if internal {
		code = envelope.InternalError
	}
	return &envelope.Error{Code: code, Message: message, Operation: opID}
}

// MissingInput is BuildError "Missing required input <key>.".
func MissingInput(opID, key string) error {
	return BuildError(opID, "Missing required input "+key+".", false)
}

// BadBase is BuildError for a server URL that is not an http(s) URL.
func BadBase(opID string) error {
	return BuildError(opID, "The operation's server URL is not an http(s) URL.", true)
}

// PathSegment escapes a path value like encodeURIComponent, and the dot
// segments "." and ".." too.
func PathSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	const hexd = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !uriUnreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	out := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if uriUnreserved(c) {
			out = append(out, c)
		} else {
			out = append(out, '%', hexd[c>>4], hexd[c&0xf])
		}
	}
	return string(out)
}

func uriUnreserved(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '.', '!', '~', '*', '\'', '(', ')':
		return true
	}
	return false
}

// NumberString renders a JSON number for a URL, header or form: integers as
// written, other numbers in the shortest form without exponent.
func NumberString(n json.Number) string {
	s := string(n)
	if plainInteger(s) {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return formatPlainFloat(f)
}

func formatPlainFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	if f == 0 {
		return "0"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// ScalarString renders any decoded JSON value for a URL, header or form:
// strings as they are, booleans, numbers without exponent, null as "", and
// arrays and objects as compact JSON.
func ScalarString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return NumberString(x)
	case float64:
		return formatPlainFloat(x)
	}
	b, err := AppendJSON(nil, v)
	if err != nil {
		return ""
	}
	return string(b)
}

// AppendQuery appends name=value, both query-escaped, to a raw query.
func AppendQuery(q, name, value string) string {
	if q != "" {
		q += "&"
	}
	return q + url.QueryEscape(name) + "=" + url.QueryEscape(value)
}

// AppendQueryValue appends a query input holding any decoded value: arrays
// repeated (explode) or joined (by style), objects as name[key]=value
// (deepObject) or as JSON, scalars as ScalarString.
func AppendQueryValue(q, name, style string, explode bool, v any) string {
	switch x := v.(type) {
	case []any:
		sep := ","
		switch style {
		case "spaceDelimited":
			sep, explode = " ", false
		case "pipeDelimited":
			sep, explode = "|", false
		}
		if explode {
			for _, e := range x {
				q = AppendQuery(q, name, ScalarString(e))
			}
			return q
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = ScalarString(e)
		}
		return AppendQuery(q, name, strings.Join(parts, sep))
	case map[string]any:
		if style == "deepObject" {
			for _, k := range sortedMapKeys(x) {
				if x[k] == nil {
					continue
				}
				q = AppendQuery(q, name+"["+k+"]", ScalarString(x[k]))
			}
			return q
		}
	}
	return AppendQuery(q, name, ScalarString(v))
}

// PathValue renders a path input holding any decoded value in its style
// (simple, label or matrix); false for an empty value.
func PathValue(v any, name, style string, explode bool) (string, bool) {
	var parts []string
	var pairs [][2]string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			parts = append(parts, PathSegment(ScalarString(e)))
		}
	case map[string]any:
		for _, k := range sortedMapKeys(x) {
			pairs = append(pairs, [2]string{PathSegment(k), PathSegment(ScalarString(x[k]))})
		}
	default:
		s := ScalarString(x)
		if s == "" {
			return "", false
		}
		parts = []string{PathSegment(s)}
	}
	for _, kv := range pairs {
		if explode {
			parts = append(parts, kv[0]+"="+kv[1])
		} else {
			parts = append(parts, kv[0], kv[1])
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	switch style {
	case "label":
		if explode {
			return "." + strings.Join(parts, "."), true
		}
		return "." + strings.Join(parts, ","), true
	case "matrix":
		n := PathSegment(name)
		if explode && pairs == nil {
			return ";" + n + "=" + strings.Join(parts, ";"+n+"="), true
		}
		if explode {
			return ";" + strings.Join(parts, ";"), true
		}
		return ";" + n + "=" + strings.Join(parts, ","), true
	}
	return strings.Join(parts, ","), true
}

// HeaderValue renders a header or cookie input holding any decoded value:
// arrays comma-joined, everything else as ScalarString.
func HeaderValue(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = ScalarString(e)
		}
		return strings.Join(parts, ",")
	}
	return ScalarString(v)
}

// BadHeader reports a header value the builder refuses (CR, LF or NUL).
func BadHeader(s string) bool { return strings.ContainsAny(s, "\r\n\x00") }

// CookieValue percent-encodes the bytes a cookie value may not hold.
func CookieValue(s string) string {
	const hexd = "0123456789ABCDEF"
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == 0x21 || (c >= 0x23 && c <= 0x2B) || (c >= 0x2D && c <= 0x3A) ||
			(c >= 0x3C && c <= 0x5B) || (c >= 0x5D && c <= 0x7E)
		if ok {
			if out != nil {
				out = append(out, c)
			}
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(s)+8), s[:i]...)
		}
		out = append(out, '%', hexd[c>>4], hexd[c&0xf])
	}
	if out == nil {
		return s
	}
	return string(out)
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// plainJSONString reports a string JSON writes between quotes unchanged.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// AppendJSONString appends s as a request body writes it (encoding/json
// without HTML escaping).
func AppendJSONString(b []byte, s string) []byte {
	if plainJSONString(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	out, _ := AppendJSON(b, s)
	return out
}

// AppendJSONNumber appends a JSON number as a request body writes it.
func AppendJSONNumber(b []byte, n json.Number) []byte {
	if plainInteger(string(n)) {
		return append(b, n...)
	}
	out, err := AppendJSON(b, n)
	if err != nil {
		return append(b, "null"...)
	}
	return out
}

// AppendJSON appends any value as compact JSON without HTML escaping.
func AppendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		if plainJSONString(x) {
			b = append(b, '"')
			b = append(b, x...)
			return append(b, '"'), nil
		}
	case json.Number:
		if plainInteger(string(x)) {
			return append(b, x...), nil
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// AppendFormValue appends a form field holding any decoded value: arrays as
// repeated keys, null as nothing.
func AppendFormValue(q, name string, v any) string {
	switch x := v.(type) {
	case nil:
		return q
	case []any:
		for _, e := range x {
			q = AppendQuery(q, name, ScalarString(e))
		}
		return q
	}
	return AppendQuery(q, name, ScalarString(v))
}

// Body encodings of a request body, decided at generation time.
const (
	BodyJSON = iota
	BodyForm
	BodyRaw
)

// WholeBody encodes a "whole" body input (any decoded value): raw text for
// a string under a text or octet-stream type, flat form pairs for a form,
// else JSON. It returns the bytes and the Content-Type. carrierKey and
// carrier add an idempotency key to an object body (carrierKey "" adds none).
func WholeBody(opID, key string, enc int, contentType string, v any, carrierKey string, carrier any) ([]byte, string, error) {
	if carrierKey != "" {
		if m, ok := v.(map[string]any); ok {
			c := make(map[string]any, len(m)+1)
			for k, x := range m {
				c[k] = x
			}
			c[carrierKey] = carrier
			v = c
		}
	}
	switch enc {
	case BodyRaw:
		if s, ok := v.(string); ok {
			return []byte(s), contentType, nil
		}
		contentType = "application/json"
	case BodyForm:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, "", BuildError(opID, "A form body must be an object.", false)
		}
		q := ""
		for _, k := range sortedMapKeys(m) {
			q = AppendFormValue(q, k, m[k])
		}
		return []byte(q), contentType, nil
	}
	out, err := AppendJSON(nil, v)
	if err != nil {
		return nil, "", BuildError(opID, "The body input cannot be encoded as JSON.", false)
	}
	return out, contentType, nil
}

// BodyValueError is the error of a body field that cannot be encoded.
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

// Key starts a member.
func (c *Canonical) Key(name string) {
	if c.n > 0 {
		c.b = append(c.b, ',')
	}
	c.n++
	c.b = appendCanonicalString(c.b, name)
	c.b = append(c.b, ':')
}

// Redacted writes the redacted value.
func (c *Canonical) Redacted() { c.b = append(c.b, `"***"`...) }

// Null writes null.
func (c *Canonical) Null() { c.b = append(c.b, "null"...) }

// Bool writes a boolean.
func (c *Canonical) Bool(v bool) { c.b = strconv.AppendBool(c.b, v) }

// String writes a string as JSON.stringify does.
func (c *Canonical) String(s string) { c.b = appendCanonicalString(c.b, s) }

// Number writes a JSON number as JavaScript prints it.
func (c *Canonical) Number(n json.Number) {
	s := string(n)
	if len(s) <= 15 && plainInteger(s) && s != "-0" && (len(s) == 1 || (s[0] != '0' && !strings.HasPrefix(s, "-0"))) {
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
func appendCanonicalString(b []byte, s string) []byte { return jsstring.Append(b, s) }

// SensitiveKeys reports, for each input name, whether the audit hash
// redacts its value (audit.SensitiveKey). Generated code calls it once.
func SensitiveKeys(names ...string) []bool {
	out := make([]bool, len(names))
	for i, n := range names {
		out[i] = audit.SensitiveKey(n)
	}
	return out
}
