package effect

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestDecodeReport: a recorded effect report re-encodes to the
// same bytes, so a replay reports exactly what the first call did.
func TestDecodeReport(t *testing.T) {
	for _, s := range []string{
		`{"class":"reversible","operation":"github.comments.create","idempotency_key":"01JB","undo":{"kind":"inverse","operation":"github.comments.delete","tool":"github__github_delete_comment","arguments":{"owner":"octo","repo":"hello","comment_id":100}},"deadline_ms":null,"lookup":null}`,
		`{"class":"irreversible","operation":"github.releases.create","idempotency_key":null,"undo":null,"deadline_ms":1735689600000,` +
			`"lookup":{"operation":"github.tags.get","tool":"github__github_get_release","arguments":{"owner":"octo","repo":"hello","tag":"v1.0.0 \u2028 é"},"by":"id"},` +
			`"compensate":{"operation":"o","tool":"t","arguments":{"z":[1,{"b":2,"a":1}],"a":null},"deadline_ms":null},"undo_unavailable":"why",` +
			`"staged":{"draft_operation":"github.releases.create","handle":{"id":500},` +
			`"promote":{"operation":"github.releases.update","tool":"github__github_update_release","arguments":{"owner":"octo","repo":"hello","release_id":500,"draft":false}},` +
			`"discard":null,"unavailable":"gone"}}`,
	} {
		r, err := DecodeReport([]byte(s))
		if err != nil {
			t.Fatalf("decode %s: %v", s, err)
		}
		if got := string(r.AppendJSON(nil)); got != s {
			t.Errorf("round trip:\n got %s\nwant %s", got, s)
		}
	}
	for _, bad := range []string{``, `[]`, `{"class":1}`, `{"nope":1}`, `{"undo":{"kind":"x","extra":1}}`, `{"deadline_ms":"x"}`} {
		if _, err := DecodeReport([]byte(bad)); err == nil {
			t.Errorf("DecodeReport(%s) accepted", bad)
		}
	}
}

// FuzzReportRoundTrip checks encode → decode → encode: a report built from
// any strings and any argument value re-encodes to the same bytes, and any
// input DecodeReport accepts re-encodes to a fixed point.
func FuzzReportRoundTrip(f *testing.F) {
	f.Add("reversible", "svc.op", "01JB", "name", `{"b":[1,2.50,"x"],"a":null}`, int64(1735689600000), []byte(`{"class":"c","operation":"o","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":null}`))
	f.Add("", "\u2028é", "\x00\xff", "a\nb", `1e400`, int64(-1), []byte(`{"undo":{"kind":"inverse","operation":"o","tool":"t","arguments":{"a\nb":1,"c":2,"a\u0062":3}}}`))
	f.Fuzz(func(t *testing.T, class, op, key, arg, raw string, ms int64, in []byte) {
		var v any = json.RawMessage(raw)
		if !json.Valid([]byte(raw)) {
			v = raw
		}
		args := Args{{Name: arg, Value: v}, {Name: "z" + arg, Value: 1.5}, {Name: "a", Value: map[string]any{arg: []any{v, nil}}}}
		r := &Report{Class: class, Operation: op, IdempotencyKey: key,
			Undo:       &Undo{Kind: KindInverse, FollowUp: FollowUp{Operation: op, Tool: arg, Arguments: args}},
			DeadlineMs: &ms, Lookup: &Lookup{FollowUp: FollowUp{Operation: op, Arguments: Args{}}, By: key},
			Compensate:      &Compensation{FollowUp: FollowUp{Operation: arg, Arguments: args[:1]}},
			UndoUnavailable: op,
			Staged:          &Staged{DraftOperation: op, Handle: v, Promote: &FollowUp{Tool: class, Arguments: args}, Unavailable: arg}}
		want := r.AppendJSON(nil)
		back, err := DecodeReport(want)
		if err != nil {
			t.Fatalf("DecodeReport(%s): %v", want, err)
		}
		if got := back.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("round trip:\n got %s\nwant %s", got, want)
		}
		if r, err := DecodeReport(in); err == nil {
			once := r.AppendJSON(nil)
			again, err := DecodeReport(once)
			if err != nil {
				t.Fatalf("DecodeReport(%s) accepted, its encoding %s not: %v", in, once, err)
			}
			if twice := again.AppendJSON(nil); !bytes.Equal(twice, once) {
				t.Fatalf("not a fixed point:\n%s\n%s", once, twice)
			}
		}
	})
}
