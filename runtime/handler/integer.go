package handler

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// integerProblem is the check both gateways run after the JSON Schema
// check: every number the input schema types as an integer only (at any
// depth: properties, additional properties, array items) must be an exact
// integer in [upstream.MinInteger, upstream.MaxInteger]
// (upstream.IntegerArgument). JSON Schema's "integer" admits 1e400, which no
// upstream can take exactly. It returns the message of a validation error,
// or "". The walk follows the value, whose depth the JSON decoder bounds,
// and stops where the schema does not say more.
func integerProblem(s *air.Schema, v any) string {
	return integerAt(s, v, "")
}

func integerAt(s *air.Schema, v any, at string) string {
	if s == nil {
		return ""
	}
	switch x := v.(type) {
	case json.Number:
		if msg := upstream.IntegerArgument(s, x); msg != "" {
			return "at '" + at + "': " + msg
		}
	case []any:
		for i, e := range x {
			if msg := integerAt(s.Items, e, at+"/"+strconv.Itoa(i)); msg != "" {
				return msg
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps := s.Properties[k]
			if ps == nil {
				ps = s.AdditionalProperties
			}
			if msg := integerAt(ps, x[k], at+"/"+k); msg != "" {
				return msg
			}
		}
	}
	return ""
}
