package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/effect"
)

// TestRESTLargeEffectReport: a 20 KB argument echoed into the effect report
// (the undo call's arguments) keeps X-Anvil-Effect at most 8 KiB with the
// truncation marker, says so in X-Anvil-Effect-Truncated, and the caller
// that asks with Prefer: anvil-effect=body gets the full report in the body
// beside the data (a 200) or the error. Without the preference the 200's
// body stays the response data, as the seed shows it.
func TestRESTLargeEffectReport(t *testing.T) {
	f := newFleetFixture(t, nil)
	write := f.turn(fxWriteGrant)
	owner := strings.Repeat("o", 20<<10)
	comment := `{"arguments":{"owner":"` + owner + `","repo":"hello","issue_number":2,"body":"big"}}`

	plain := f.call(write, "github__github_create_comment", comment, nil)
	if plain.status != 200 || plain.json(t)["body"] != "big" {
		t.Fatalf("create: %d %.200s", plain.status, plain.body)
	}
	if v := plain.header.Get("X-Anvil-Effect"); len(v) > effect.MaxHeaderBytes || !strings.Contains(v, `"truncated":true`) {
		t.Errorf("X-Anvil-Effect is %d bytes: %.200s", len(v), v)
	}
	if plain.header.Get("X-Anvil-Effect-Truncated") != "true" || plain.header.Get("Preference-Applied") != "" {
		t.Errorf("headers without the preference: %v", plain.header)
	}

	asked := f.call(write, "github__github_create_comment", comment, http.Header{"Prefer": {`respond-async, Anvil-Effect="body"; x=1`}})
	var got struct {
		Data   map[string]any `json:"data"`
		Effect struct {
			Undo struct {
				Arguments map[string]any `json:"arguments"`
			} `json:"undo"`
			Truncated bool `json:"truncated"`
		} `json:"effect"`
	}
	if asked.status != 200 || json.Unmarshal([]byte(asked.body), &got) != nil || got.Data["body"] != "big" {
		t.Fatalf("create with the preference: %d %.300s", asked.status, asked.body)
	}
	if got.Effect.Truncated || got.Effect.Undo.Arguments["owner"] != owner {
		t.Errorf("the body's report is not the full one: %.300s", asked.body)
	}
	if asked.header.Get("X-Anvil-Effect-Truncated") != "true" || asked.header.Get("Preference-Applied") != "anvil-effect=body" {
		t.Errorf("headers with the preference: %v", asked.header)
	}

	// A small report is not marked; an error keeps its envelope and adds the report.
	small := f.call(write, "github__github_create_comment", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"s"}}`,
		http.Header{"Prefer": {"anvil-effect=body"}})
	if small.status != 200 || small.header.Get("X-Anvil-Effect-Truncated") != "" || !strings.HasPrefix(small.body, `{"data":{`) ||
		!strings.Contains(small.body, `"effect":{"class":"reversible"`) {
		t.Errorf("small report: %d %v %s", small.status, small.header, small.body)
	}
	refused := f.call(f.turn(fxReadGrant), "github__github_delete_comment",
		`{"arguments":{"owner":"octo","repo":"hello","comment_id":100,"confirm":true}}`, http.Header{"Prefer": {"anvil-effect=body"}})
	var env struct {
		Error  struct{ Code string }  `json:"error"`
		Effect struct{ Class string } `json:"effect"`
	}
	if refused.status != 403 || json.Unmarshal([]byte(refused.body), &env) != nil || env.Error.Code != "policy_denied" || env.Effect.Class != "irreversible" {
		t.Errorf("refusal with the preference: %d %s", refused.status, refused.body)
	}
}
