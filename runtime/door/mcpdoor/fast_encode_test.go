package mcpdoor

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/effect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// TestPlainToolResultBytes: the direct encoding of a data result is byte for
// byte what marshalData(toolResult(out)) writes, for objects, arrays,
// scalars, HTML-sensitive characters, U+2028, non-ASCII text, with and
// without an effect report; other outcomes are left to marshalData.
func TestPlainToolResultBytes(t *testing.T) {
	key := "k<&>\u2028"
	deadline := int64(1750000000123)
	reports := []*effect.Report{
		nil,
		{Class: "read", Operation: "github.pulls.list"},
		{Class: "reversible", Operation: "a<b>&c", IdempotencyKey: key, DeadlineMs: &deadline, UndoUnavailable: "x\u2029y"},
		{Class: "reversible", Operation: "github.comments.create", Undo: &effect.Undo{FollowUp: effect.FollowUp{
			Operation: "github.comments.delete", Tool: "github__delete_comment", Arguments: effect.Args{
				{Name: "raw", Value: json.RawMessage(` { "a" : [ 1 , "<x>" ] } `)},
				{Name: "map", Value: map[string]any{"z": "&", "a": []any{json.Number("1.50"), true, nil}}},
				{Name: "text", Value: "line\u2028<tag>\u00e9"},
			}}}},
	}
	raws := []string{
		`[{"number":3,"title":"Fix the first issue","state":"merged"}]`,
		`{"a":1,"b":"<script>&amp;</script>","c":[true,false,null],"d":{"e":1.5e300}}`,
		`{"ü":"é\u2028\u2029","x":"\"quoted\" \u0001 \ud83d\ude00"}`,
		`"just a string <b>"`,
		`42`,
		`null`,
		`[]`,
		`{}`,
		`{ "spaced" : [ 1 , 2 ] }`,
		"\"bad \xff utf-8 \xe2\x80\"",
		"{\"raw\":\"\xe2\x80\xa8 and \xe2\x80\xa9\"}",
	}
	n := 0
	for _, rep := range reports {
		for _, raw := range raws {
			var compacted bytes.Buffer
			if err := json.Compact(&compacted, []byte(raw)); err != nil {
				t.Fatal(err)
			}
			for _, out := range []*executor.Outcome{
				{Raw: json.RawMessage(raw), Effect: rep},
				{Raw: compacted.Bytes(), RawCompact: true, Effect: rep},
			} {
				for _, rev2026 := range []bool{false, true} {
					got, ok := appendPlainToolResult([]byte("prefix"), out, rev2026)
					if !ok {
						t.Fatalf("%s: not encoded", raw)
					}
					res := toolResult(out)
					if res.Content == nil {
						res.Content = []mcp.Content{}
					}
					if rev2026 {
						// As the SDK finishes a 2026-07-28 result.
						if res.Meta == nil {
							res.Meta = mcp.Meta{}
						}
						res.Meta[metaServerInfo] = implementation
						res = completed(res)
					}
					want, err := wirejson.Marshal(res)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, append([]byte("prefix"), want...)) {
						t.Errorf("%s (effect %v, compact %v, 2026 %v):\n got %s\nwant prefix%s", out.Raw, rep != nil, out.RawCompact, rev2026, got, want)
					}
				}
				n++
			}
		}
	}
	for name, out := range map[string]*executor.Outcome{
		"error":    {Err: &envelope.Error{Code: envelope.PolicyDenied, Message: "no"}},
		"dry run":  {Plan: map[string]any{"method": "GET"}},
		"no raw":   {},
		"bad json": {Raw: json.RawMessage(`{"a":`)},
	} {
		if b, ok := appendPlainToolResult(nil, out, false); ok {
			t.Errorf("%s: encoded directly as %s", name, b)
		}
	}
	if n == 0 {
		t.Fatal("no cases")
	}
}
