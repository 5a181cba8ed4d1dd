package gateway

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

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

// DeadlineWithin is a within_ms deadline: now plus within, in epoch
// milliseconds (nil on overflow or a negative within).
func DeadlineWithin(now time.Time, within int64) *int64 {
	if now.IsZero() {
		now = time.Now()
	}
	base := now.UnixMilli()
	if within < 0 || base > math.MaxInt64-within {
		return nil
	}
	ms := base + within
	return &ms
}

// DeadlineAt reads an at deadline's value (a response value): epoch
// milliseconds as a number, or an RFC 3339 time as a string; nil otherwise.
func DeadlineAt(v any, found bool) *int64 {
	if !found {
		return nil
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return &n
		}
		g, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil
		}
		f = g
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return nil
		}
		n := t.UnixMilli()
		return &n
	default:
		return nil
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f >= math.MaxInt64 || f <= math.MinInt64 {
		return nil
	}
	n := int64(math.Trunc(f))
	return &n
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
