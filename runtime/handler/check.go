package handler

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/upstream"
)

// A generated Validate is one call of Checks over the rules of the input
// schema, one line per rule: each helper below returns nil or the
// *FieldError of the argument and the JSON Schema keyword it fails, and
// checks only an argument that is present (and not null, for a value rule).

// FieldError is a generated validator's refusal: the argument and the JSON
// Schema keyword it fails.
type FieldError struct {
	// Path is a JSON pointer to the argument ("" for the arguments object).
	Path string
	// Rule is the keyword it fails: required, type, enum, pattern,
	// minLength, maximum, additionalProperties, …
	Rule string
}

// Error reads "at '/owner': required".
func (e *FieldError) Error() string { return "at '" + e.Path + "': " + e.Rule }

// Invalid is the FieldError of top-level argument prop ("" for the
// arguments object) failing rule.
//
//go:noinline
func Invalid(prop, rule string) error {
	path := ""
	if prop != "" {
		path = "/" + strings.ReplaceAll(strings.ReplaceAll(prop, "~", "~0"), "/", "~1")
	}
	return &FieldError{Path: path, Rule: rule}
}

// Checks returns the first refusal among the checks (nil when there is none).
func Checks(checks ...error) error {
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// Rule is the refusal of argument key by rule when failed is set.
func Rule(key, rule string, failed bool) error {
	if failed {
		return Invalid(key, rule)
	}
	return nil
}

// Required refuses a required argument that is not set.
func Required(key string, set bool) error { return Rule(key, "required", !set) }

// OneOf refuses a string argument that is none of the values (enum).
func OneOf(key string, v Opt[string], values ...string) error {
	if !v.Present() {
		return nil
	}
	for _, s := range values {
		if v.Value == s {
			return nil
		}
	}
	return Invalid(key, "enum")
}

// BoolIs refuses a boolean argument other than want (a one-value enum or
// const).
func BoolIs(key string, v Opt[bool], want bool) error {
	return Rule(key, "enum", v.Present() && v.Value != want)
}

// Length refuses a string argument shorter than min or longer than max
// characters (-1: no bound), as JSON Schema counts them.
func Length(key string, v Opt[string], min, max int) error {
	if !v.Present() {
		return nil
	}
	n := utf8.RuneCountInString(v.Value)
	switch {
	case min >= 0 && max >= 0 && (n < min || n > max):
		return Invalid(key, "minLength/maxLength")
	case min >= 0 && n < min:
		return Invalid(key, "minLength")
	case max >= 0 && n > max:
		return Invalid(key, "maxLength")
	}
	return nil
}

// Pattern refuses a string argument re does not match.
func Pattern(key string, v Opt[string], re *regexp.Regexp) error {
	return Rule(key, "pattern", v.Present() && !re.MatchString(v.Value))
}

// Integer refuses a number argument that is not an exact integer in range
// (IsInteger): the type integer.
func Integer(key string, v Opt[json.Number]) error {
	return Rule(key, "type", v.Present() && !IsInteger(v.Value))
}

// NumberOneOf refuses a number argument equal to none of the values (JSON
// numbers, compared by value).
func NumberOneOf(key string, v Opt[json.Number], values ...string) error {
	return Rule(key, "enum", v.Present() && !NumberIn(v.Value, values...))
}

// Minimum refuses a number argument below bound (a JSON number).
func Minimum(key string, v Opt[json.Number], bound string) error {
	return bounded(key, "minimum", v, bound, func(c int) bool { return c < 0 })
}

// Maximum refuses a number argument above bound.
func Maximum(key string, v Opt[json.Number], bound string) error {
	return bounded(key, "maximum", v, bound, func(c int) bool { return c > 0 })
}

// ExclusiveMinimum refuses a number argument at or below bound.
func ExclusiveMinimum(key string, v Opt[json.Number], bound string) error {
	return bounded(key, "exclusiveMinimum", v, bound, func(c int) bool { return c <= 0 })
}

// ExclusiveMaximum refuses a number argument at or above bound.
func ExclusiveMaximum(key string, v Opt[json.Number], bound string) error {
	return bounded(key, "exclusiveMaximum", v, bound, func(c int) bool { return c >= 0 })
}

// bounded refuses a present number whose comparison with bound fails, or
// that does not compare.
func bounded(key, rule string, v Opt[json.Number], bound string, fails func(int) bool) error {
	if !v.Present() {
		return nil
	}
	c, ok := CompareNumber(v.Value, bound)
	return Rule(key, rule, !ok || fails(c))
}

// IsInteger reports whether a JSON number is an integer by value (1.0 and
// 1e2 are) within [upstream.MinInteger, upstream.MaxInteger]
// (upstream.ExactInteger): JSON Schema's "integer" also admits 1e400, which
// no upstream can take exactly, so both gateways refuse it (the AIR-driven
// one through integerProblem after its schema check).
func IsInteger(n json.Number) bool {
	_, ok := upstream.ExactInteger(string(n))
	return ok
}

// CompareNumber compares a JSON number with a bound written as JSON (-1, 0
// or +1), exactly; ok is false when either does not parse.
func CompareNumber(n json.Number, bound string) (c int, ok bool) {
	a, b := string(n), bound
	if len(a) < 19 && len(b) < 19 && upstream.IsIntegerText(a) && upstream.IsIntegerText(b) {
		x, err1 := strconv.ParseInt(a, 10, 64)
		y, err2 := strconv.ParseInt(b, 10, 64)
		if err1 == nil && err2 == nil {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	}
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	return x.Cmp(y), true
}

// NumberIn reports whether a JSON number equals one of the values (JSON
// numbers), as enum and const compare numbers.
func NumberIn(n json.Number, values ...string) bool {
	for _, v := range values {
		if c, ok := CompareNumber(n, v); ok && c == 0 {
			return true
		}
	}
	return false
}
