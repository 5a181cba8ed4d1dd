package effect

import (
	"encoding/json"
	"testing"
)

func TestContract(t *testing.T) {
	ops := loadOps(t)
	tests := []struct{ op, want string }{
		{"github.issues.list", ""},
		{"github.comments.delete", ""},
		{"github.comments.create", `{"class":"reversible","inverse":{"operation":"github.comments.delete","arguments":{"owner":"request.owner","repo":"request.repo","comment_id":"response.id"}}}`},
		{"github.issues.create", `{"class":"compensable","compensate":{"operation":"github.issues.update","arguments":{"owner":"request.owner","repo":"request.repo","issue_number":"response.number","state":{"const":"closed"}}}}`},
		{"github.releases.create", `{"class":"irreversible","lookup":{"operation":"github.tags.get","by":"id","arguments":{"owner":"request.owner","repo":"request.repo","tag":"request.tag_name"}},` +
			`"draft":{"operation":"github.releases.create","arguments":{"owner":"request.owner","repo":"request.repo","tag_name":"request.tag_name","name":"request.name?","body":"request.body?","draft":{"const":true}},"handle":"response.id",` +
			`"promote":{"operation":"github.releases.update","arguments":{"owner":"request.owner","repo":"request.repo","release_id":"response.id","draft":{"const":false}}},` +
			`"discard":{"operation":"github.releases.delete","arguments":{"owner":"request.owner","repo":"request.repo","release_id":"response.id"}}}}`},
	}
	for _, tc := range tests {
		got := Contract(ops[tc.op])
		if tc.want == "" {
			if got != nil {
				t.Errorf("%s: %s, want nil", tc.op, got)
			}
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.op, got, tc.want)
		}
	}

	op := custom(t, `{"kind":"mutation","class":"reversible",
		"inverse":{"operation":"svc.things.delete","arguments":{"id":"response.id"},"deadline":{"withinMs":86400000}},
		"compensate":{"operation":"svc.things.close","arguments":{"n":{"const":{"b":1,  "a":[ 2 ]}}},"deadline":{"at":"response.expires"}}}`)
	want := `{"class":"reversible","inverse":{"operation":"svc.things.delete","arguments":{"id":"response.id"},"deadline":{"within_ms":86400000}},"compensate":{"operation":"svc.things.close","arguments":{"n":{"const":{"b":1,"a":[2]}}},"deadline":{"at":"response.expires"}}}`
	got := Contract(op)
	if string(got) != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	// As a tools/list _meta value it stays verbatim.
	b, _ := json.Marshal(map[string]any{MetaEffectContract: Contract(ops["github.comments.create"])})
	if !json.Valid(b) {
		t.Errorf("%s", b)
	}
}
