package upstream

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// The range of an "integer" argument: a signed 64-bit integer, the widest
// integer OpenAPI describes (format int64) and what Go upstream clients and
// servers read. JSON clients that hold numbers as IEEE doubles (JavaScript,
// the TypeScript SDK and the Node CLI) are exact only up to 2^53-1; the
// gateway does not narrow the range for them, it only refuses what no
// upstream could take exactly.
const (
	MinInteger = math.MinInt64
	MaxInteger = math.MaxInt64
)

// maxNumberText bounds the JSON number text ExactInteger looks at; longer
// text (which no int64 needs) is refused without being parsed.
const maxNumberText = 400

// ExactInteger reports whether the JSON number text s is an integer by value
// within [MinInteger, MaxInteger], and returns it as plain decimal digits
// ("1.5e3" → "1500", "-0" → "0", "2.0" → "2"). Fractions ("1.5"), values out
// of range ("1e400", "9223372036854775808") and anything that is not a JSON
// number are refused. It never expands a huge exponent: the work is linear
// in len(s), which is capped.
func ExactInteger(s string) (string, bool) {
	if t := strings.TrimPrefix(s, "-"); len(s) <= 19 && IsIntegerText(s) && (len(t) < 2 || t[0] != '0') {
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			if s == "-0" {
				return "0", true
			}
			return s, true
		}
	}
	if len(s) > maxNumberText {
		return "", false
	}
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	mant, expText, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, hasFrac := strings.Cut(mant, ".")
	if intPart == "" || !allDigits(intPart) || (len(intPart) > 1 && intPart[0] == '0') ||
		(hasFrac && (frac == "" || !allDigits(frac))) {
		return "", false
	}
	exp := 0
	if hasExp {
		sign := 1
		switch {
		case strings.HasPrefix(expText, "+"):
			expText = expText[1:]
		case strings.HasPrefix(expText, "-"):
			expText, sign = expText[1:], -1
		}
		if expText == "" || !allDigits(expText) {
			return "", false
		}
		expText = strings.TrimLeft(expText, "0")
		if len(expText) > 6 { // |exp| ≥ 10^6: only zero can be in range
			expText = "1000000"
		}
		exp, _ = strconv.Atoi(expText)
		if expText == "" {
			exp = 0
		}
		exp *= sign
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	if digits == "" {
		return "0", true
	}
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		exp++
	}
	if exp < 0 || len(digits)+exp > 19 {
		return "", false // a fraction, or more than 19 digits
	}
	text := digits + strings.Repeat("0", exp)
	if neg {
		text = "-" + text
	}
	if _, err := strconv.ParseInt(text, 10, 64); err != nil {
		return "", false
	}
	return text, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// IntegerArgument checks a decoded argument value against a schema that
// types it as an integer only (the check a JSON Schema "integer" lacks: it
// admits 1e400): a number must be ExactInteger, and so must
// each number of an array whose items are integers. Other schemas and
// values pass (the schema validator judges them). It returns the message of
// a validation error, or "".
func IntegerArgument(s *air.Schema, v any) string {
	if s == nil {
		return ""
	}
	if integerOnly(s.Type) {
		if text, ok := numberText(v); ok {
			if _, ok := ExactInteger(text); !ok {
				return fmt.Sprintf("must be an integer from %d to %d, not %s", int64(MinInteger), int64(MaxInteger), clip(text))
			}
		}
		return ""
	}
	if l, ok := v.([]any); ok && s.Items != nil && integerOnly(s.Items.Type) {
		for i, e := range l {
			if text, ok := numberText(e); ok {
				if _, ok := ExactInteger(text); !ok {
					return fmt.Sprintf("item %d must be an integer from %d to %d, not %s", i, int64(MinInteger), int64(MaxInteger), clip(text))
				}
			}
		}
	}
	return ""
}

// integerOnly reports whether a type list admits integers but no other
// numbers ("integer", possibly with "null" or non-numeric types).
func integerOnly(t air.Types) bool {
	has := false
	for _, x := range t {
		switch x {
		case "integer":
			has = true
		case "number":
			return false
		}
	}
	return has
}

// numberText returns the JSON text of a decoded number.
func numberText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "NaN", true
		}
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), true
	}
	return "", false
}

// clip shortens a value quoted in an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
