package executor

import "testing"

// TestDecodeReportRoundTrip: a recorded effect report re-encodes to the
// same bytes, so a replay reports exactly what the first call did.
func TestDecodeReportRoundTrip(t *testing.T) {
	for _, s := range []string{
		`{"class":"reversible","operation":"github.comments.create","idempotency_key":"01JB","undo":{"kind":"inverse","operation":"github.comments.delete","tool":"github__github_delete_comment","arguments":{"owner":"octo","repo":"hello","comment_id":100}},"deadline_ms":null,"lookup":null}`,
		`{"class":"irreversible","operation":"github.releases.create","idempotency_key":null,"undo":null,"deadline_ms":1735689600000,` +
			`"lookup":{"operation":"github.tags.get","tool":"github__github_get_release","arguments":{"owner":"octo","repo":"hello","tag":"v1.0.0 \u2028 é"},"by":"id"},` +
			`"compensate":{"operation":"o","tool":"t","arguments":{"z":[1,{"b":2,"a":1}],"a":null},"deadline_ms":null},"undo_unavailable":"why",` +
			`"staged":{"draft_operation":"github.releases.create","handle":{"id":500},` +
			`"promote":{"operation":"github.releases.update","tool":"github__github_update_release","arguments":{"owner":"octo","repo":"hello","release_id":500,"draft":false}},` +
			`"discard":null,"unavailable":"gone"}}`,
	} {
		r, err := decodeReport([]byte(s))
		if err != nil {
			t.Fatalf("decode %s: %v", s, err)
		}
		if got := string(r.AppendJSON(nil)); got != s {
			t.Errorf("round trip:\n got %s\nwant %s", got, s)
		}
	}
	for _, bad := range []string{``, `[]`, `{"class":1}`, `{"nope":1}`, `{"undo":{"kind":"x","extra":1}}`, `{"deadline_ms":"x"}`} {
		if _, err := decodeReport([]byte(bad)); err == nil {
			t.Errorf("decodeReport(%s) accepted", bad)
		}
	}
}
