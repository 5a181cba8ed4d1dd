package upstream

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// The encoders below write the parts of an upstream request: path, query,
// header, cookie and form values, and JSON bodies. BuildRequest uses them,
// and the request builders of a generated gateway call them directly, so
// both write the same bytes for the same value.
// Values are decoded JSON (nil, bool, string, float64 or json.Number,
// []any, map[string]any); ScalarString also reads Go's int, int32, int64,
// uint64 and float32, and any other Go value is written as encoding/json
// writes it.

// PathSegment escapes a path value like encodeURIComponent (every byte
// except A-Z a-z 0-9 - _ . ! ~ * ' ( ) as %XX), and also the dot segments
// "." and ".." (as %2E and %2E%2E). Escaping alone does not stop a value
// from climbing the upstream's path (a proxy or server that decodes the
// path first sees the dot segment again): both gateways refuse such a path
// with DotSegmentError before it is sent (KeepsPathShape).
func PathSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	const hex = "0123456789ABCDEF"
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
			out = append(out, '%', hex[c>>4], hex[c&0xf])
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

// ScalarString renders a value for a URL, header or form: strings as they
// are, booleans as true/false, numbers without exponent (NumberString;
// integers of Go's integer types as decimals, a float32 as the float64 it
// converts to), null as "", and arrays and objects as compact JSON.
func ScalarString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return formatFloat(x)
	case float32:
		return formatFloat(float64(x))
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case json.Number:
		return NumberString(x)
	}
	b, err := AppendJSON(nil, v)
	if err != nil {
		return ""
	}
	return string(b)
}

// NumberString renders a JSON number for a URL, header or form: integers
// within [MinInteger, MaxInteger] as exact plain digits (ExactInteger: "1.5e3"
// is "1500"), other integers as written, other numbers in the shortest form
// without exponent; text that float64 cannot hold (not a number, or beyond
// its range) is returned as it is: range checks belong to argument
// validation (IntegerArgument), and both gateways render numbers here.
func NumberString(n json.Number) string {
	s := string(n)
	if t, ok := ExactInteger(s); ok {
		return t
	}
	if IsIntegerText(s) {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return formatFloat(f)
}

func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	if f == 0 {
		return "0"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// IsIntegerText reports whether s is decimal digits with an optional
// leading minus sign.
func IsIntegerText(s string) bool {
	if strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// AppendQuery appends name=value, both query-escaped, to a raw query.
func AppendQuery(q, name, value string) string {
	if q != "" {
		q += "&"
	}
	return q + url.QueryEscape(name) + "=" + url.QueryEscape(value)
}

// AppendQueryValue appends a query input to a raw query: an array as
// repeated name=value pairs (explode) or as one pair joined by "," (form),
// " " (spaceDelimited) or "|" (pipeDelimited; these two never explode); an
// object as name[key]=value pairs in key order, nulls left out
// (deepObject), or as compact JSON; anything else as ScalarString.
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
			for _, k := range slices.Sorted(maps.Keys(x)) {
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

// PathValue renders the path input name holding v in its style: simple
// (the default; "a,b"), label (".a,b", exploded ".a.b") or matrix
// (";name=a,b", exploded ";name=a;name=b"); an object's members are
// key,value pairs in key order (key=value pairs when exploded). Every part
// is escaped with PathSegment. It returns false for an empty value, and for
// a value that renders as "", "." or ".." in any style (an array of empty
// strings: [""] is "" simple and "." label, ["",""] is ".." exploded
// label), since such a segment would drop or climb a level of the
// upstream's path. Callers refuse both as a validation error.
func PathValue(v any, name, style string, explode bool) (string, bool) {
	s, ok := pathValue(v, name, style, explode)
	if !ok || !SafePathSegment(s) {
		return "", false
	}
	return s, true
}

// SafePathSegment reports whether s, a whole rendered path segment, keeps
// the path's shape: it is not empty and not the dot segment "." or "..".
func SafePathSegment(s string) bool {
	return s != "" && s != "." && s != ".."
}

// DotSegmentMessage is the validation_error message of an upstream path
// that KeepsPathShape refuses; both gateways word it alike.
const DotSegmentMessage = "A path input must not make a dot segment (. or ..) of the upstream path, encoded or not."

// maxPathDecodes bounds how many rounds of percent-decoding KeepsPathShape
// follows: a path still changing after that many is refused (fail closed).
const maxPathDecodes = 4

// KeepsPathShape reports whether the escaped URL path p keeps its shape
// however a server or proxy on the way reads it: no segment is "." or ".."
// as written or after percent-decoding it once or repeatedly (%2E%2E,
// %252E%252E), with "/" and "\" both taken as separators (a decoded %2F or
// %5C starts a new segment) and a ";" parameter stripped from a segment
// ("..;x" is ".." to Tomcat). Invalid escapes are left as written, as a
// lenient decoder would. Every path value of both gateways goes through
// it: upstream.BuildRequest and the generated builders' handler.NewRequest
// refuse a path it rejects with a validation_error (DotSegmentMessage), so
// the check does not depend on the parameter's style (simple, label,
// matrix) or on how the value was rendered.
func KeepsPathShape(p string) bool {
	for range maxPathDecodes {
		if hasDotSegment(p) {
			return false
		}
		d := percentDecode(p)
		if d == p {
			return true
		}
		p = d
	}
	return false
}

// hasDotSegment reports a "." or ".." segment of p, split on "/" and "\",
// each segment cut at its first ";".
func hasDotSegment(p string) bool {
	for len(p) > 0 {
		i := strings.IndexAny(p, "/\\")
		seg := p
		if i >= 0 {
			seg, p = p[:i], p[i+1:]
		} else {
			p = ""
		}
		if j := strings.IndexByte(seg, ';'); j >= 0 {
			seg = seg[:j]
		}
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// percentDecode decodes every valid %XX escape of s and leaves anything
// else as it is.
func percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if h, l := unhex(s[i+1]), unhex(s[i+2]); h >= 0 && l >= 0 {
				out = append(out, byte(h<<4|l))
				i += 2
				continue
			}
		}
		out = append(out, s[i])
	}
	return string(out)
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func pathValue(v any, name, style string, explode bool) (string, bool) {
	var parts []string // already escaped
	var pairs [][2]string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			parts = append(parts, PathSegment(ScalarString(e)))
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
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

// HeaderValue renders a header or cookie input: arrays comma-joined,
// everything else as ScalarString.
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

// CookieValue percent-encodes the bytes a cookie value may not hold
// (RFC 6265 cookie-octet).
func CookieValue(s string) string {
	const hex = "0123456789ABCDEF"
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
		out = append(out, '%', hex[c>>4], hex[c&0xf])
	}
	if out == nil {
		return s
	}
	return string(out)
}

// AppendFormValue appends a form field to a form body: arrays as repeated
// name=value pairs, null as nothing, anything else as ScalarString.
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

// AppendJSON appends v as compact JSON without HTML escaping, as a request
// body writes it (encoding/json with SetEscapeHTML(false)). On error b is
// returned as it was.
func AppendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		if plainString(x) {
			b = append(b, '"')
			b = append(b, x...)
			return append(b, '"'), nil
		}
	case json.Number:
		if IsIntegerText(string(x)) {
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

// plainString reports a string JSON writes between quotes unchanged.
// AppendJSONString appends s as AppendJSON does (encoding/json without HTML
// escaping), without converting it to an interface on the common path: the
// request builders write every body key and string value with it.
func AppendJSONString(b []byte, s string) []byte {
	if plainString(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	out, _ := AppendJSON(b, s)
	return out
}

func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// Messages of a "whole" body that cannot be encoded.
const (
	formNotObject = "A form body must be an object."
	bodyNotJSON   = "The body input cannot be encoded as JSON."
)

// EncodeBody encodes v, the whole request body of operation opID, in the
// body encoding enc that lowering recorded (air.Body.Wire): a string as raw
// text under air.BodyRaw, an object as flat form pairs in key order under
// air.BodyForm, anything else as JSON. It returns the bytes and the
// Content-Type: contentType, or application/json for an air.BodyRaw value
// that is not a string. When carrierKey is not "" and v is an object, the body
// is a copy of v with carrier under carrierKey (an idempotency key).
//
// Errors are *envelope.Error validation_error ("A form body must be an
// object.", "The body input cannot be encoded as JSON.").
func EncodeBody(opID string, enc air.BodyEncoding, contentType string, v any, carrierKey string, carrier any) ([]byte, string, error) {
	out, ctype, problem := wholeBody(enc, contentType, v, carrierKey, carrier)
	if problem != "" {
		return nil, "", &envelope.Error{Code: envelope.ValidationError, Message: problem, Operation: opID}
	}
	return out, ctype, nil
}

// wholeBody is EncodeBody with the error as its message ("" for none).
func wholeBody(enc air.BodyEncoding, contentType string, v any, carrierKey string, carrier any) ([]byte, string, string) {
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
	case air.BodyRaw:
		if s, ok := v.(string); ok {
			return []byte(s), contentType, ""
		}
		contentType = "application/json"
	case air.BodyForm:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, "", formNotObject
		}
		q := ""
		for _, k := range slices.Sorted(maps.Keys(m)) {
			q = AppendFormValue(q, k, m[k])
		}
		return []byte(q), contentType, ""
	}
	out, err := AppendJSON(nil, v)
	if err != nil {
		return nil, "", bodyNotJSON
	}
	return out, contentType, ""
}
