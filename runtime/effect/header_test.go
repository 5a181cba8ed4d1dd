package effect

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHeaderValueBounded is the regression test for finding 9 of issue 15:
// a 20 KB argument echoed into the report made an X-Anvil-Effect header that
// Node clients refuse. The header now stays within MaxHeaderBytes and carries
// a cut-down report with a marker, while the report's JSON (_meta.effect)
// stays whole.
func TestHeaderValueBounded(t *testing.T) {
	big := strings.Repeat("ø", 10_000) // 20 KB of UTF-8, 60 KB escaped
	dl := int64(1700000000000)
	r := &Report{Class: "reversible", Operation: "github.comments.create", IdempotencyKey: "01JKEY",
		Undo:       &Undo{Kind: KindInverse, FollowUp: FollowUp{Operation: "github.comments.delete", Tool: "gh__delete", Arguments: Args{{Name: "body", Value: big}}}},
		DeadlineMs: &dl}
	h, cut := HeaderValueBounded(r)
	if len(h) > MaxHeaderBytes || !cut || HeaderValue(r) != h {
		t.Fatalf("header of %d bytes (cut %v)", len(h), cut)
	}
	if want := `{"class":"reversible","operation":"github.comments.create","idempotency_key":"01JKEY","undo":null,"deadline_ms":1700000000000,"lookup":null,"undo_unavailable":"` + TruncatedReason + `","truncated":true}`; h != want {
		t.Errorf("header\n%s\nwant\n%s", h, want)
	}
	full, _ := r.MarshalJSON()
	if !strings.Contains(string(full), big) {
		t.Error("the report's JSON lost the argument")
	}

	// A report that fits is untouched.
	r.Undo.Arguments[0].Value = "short"
	if h, cut := HeaderValueBounded(r); cut || strings.Contains(h, "truncated") {
		t.Errorf("small report cut: %s", h)
	}

	// Even a huge key and operation give a bounded, parseable header.
	r = &Report{Class: "irreversible", Operation: strings.Repeat("o", 20_000), IdempotencyKey: strings.Repeat("k", 20_000)}
	h, cut = HeaderValueBounded(r)
	var m map[string]any
	if len(h) > MaxHeaderBytes || !cut || json.Unmarshal([]byte(h), &m) != nil || m["truncated"] != true || m["idempotency_key"] != nil {
		t.Errorf("huge key: %d bytes, %v", len(h), m)
	}
}
