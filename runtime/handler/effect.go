package handler

import (
	"encoding/json"
	"strings"

	"github.com/anvil-dev/anvil/runtime/effect"
)

// The helpers below are what generated effect functions call. They word
// and compute what effect.Build does for the same mapping; the differential
// and property tests compare the two.

// NamesNothing is the reason a mapped path gives when it names nothing in
// the call ("response.id names nothing in this call").
func NamesNothing(path string) string {
	return strings.TrimSuffix(path, "?") + " names nothing in this call"
}

// NotAPath is the reason a mapped path gives when it does not parse.
func NotAPath(path string) string {
	return "the path " + strings.TrimSuffix(path, "?") + " is not a valid argument path"
}

// NotServed is the reason a follow-up gives when its operation is not
// served by this gateway.
func NotServed(operation string) string { return operation + " is not served by this gateway" }

// UndoUnavailable prefixes a reason for Report.UndoUnavailable.
func UndoUnavailable(reason string) string { return effect.UndoUnavailablePrefix + reason }

// StagedUnavailable joins the promote and discard reasons of a staged
// report ("" when both are available).
func StagedUnavailable(promote, discard string) string {
	var s string
	if promote != "" {
		s = effect.PromoteUnavailablePrefix + promote
	}
	if discard != "" {
		if s != "" {
			s += "; "
		}
		s += effect.DiscardUnavailablePrefix + discard
	}
	return s
}

// DeadlineAt reads an at deadline's value (a response value): epoch
// milliseconds as a number, or an RFC 3339 time as a string; nil otherwise
// and when the value was not found (effect.EpochMs).
func DeadlineAt(v any, found bool) *int64 {
	if !found {
		return nil
	}
	return effect.EpochMs(v)
}

// DecodeJSON decodes a literal of generated code (numbers as json.Number).
func DecodeJSON(raw string) any {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}
