package executor_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/anvil-dev/anvil/gen/github-mini/workspace"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// canned answers every upstream request with one JSON object.
type canned struct{}

func (canned) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"number":7,"title":"t"}`)), Request: r}, nil
}

func newExecutor(t *testing.T, f *fleet.Fleet) *executor.Executor {
	t.Helper()
	allow := upstream.ParseAllowlist("api.github.example", "")
	return &executor.Executor{Fleet: f, Allowlist: allow,
		Upstream: upstream.NewClient(&upstream.ClientOptions{Allowlist: allow, Transport: canned{}})}
}

// TestOneExecutorTwoHandlers runs the same calls through one executor
// holding AIR-driven handlers and one holding generated handlers: the
// outcomes (refusals, plans, answers, effect reports) are the same.
func TestOneExecutorTwoHandlers(t *testing.T) {
	generic, err := fleet.Load("../serve/testdata/workspace")
	if err != nil {
		t.Fatal(err)
	}
	generated, err := fleet.FromWorkspace(workspace.Workspace())
	if err != nil {
		t.Fatal(err)
	}
	readOnly := grant.List{{Connector: "github", Operations: []string{"*"}, Mode: "read"}}
	write := grant.List{{Connector: "github", Operations: []string{"*"}, Mode: "write"}}
	calls := []struct {
		name string
		call executor.Call
		code string // the envelope code, "" for success
	}{
		{"unknown tool", executor.Call{Tool: "github__nope"}, "not_found"},
		{"list", executor.Call{Tool: "github__github_list_issue", Args: json.RawMessage(`{"owner":"o","repo":"r"}`)}, ""},
		{"dry run", executor.Call{Tool: "github__github_list_issue", Args: json.RawMessage(`{"owner":"o","repo":"r","anvil_dry_run":true}`)}, ""},
		{"not an object", executor.Call{Tool: "github__github_list_issue", Args: json.RawMessage(`[1]`)}, "validation_error"},
		{"schema", executor.Call{Tool: "github__github_list_issue", Args: json.RawMessage(`{"owner":"o","repo":"r","state":"x"}`)}, "validation_error"},
		{"confirm false", executor.Call{Tool: "github__github_create_issue", Args: json.RawMessage(`{"owner":"o","repo":"r","title":"t","confirm":false}`)}, "confirmation_required"},
		{"grant without confirm", executor.Call{Tool: "github__github_create_issue", Args: json.RawMessage(`{"owner":"o","repo":"r","title":"t","confirm":true}`),
			Principal: &identity.Principal{Sub: "p", Grants: write}}, "confirmation_required"},
		{"write", executor.Call{Tool: "github__github_create_comment", Args: json.RawMessage(`{"owner":"o","repo":"r","issue_number":7,"body":"b"}`),
			Meta: map[string]any{"idempotency_key": "k1"}, Principal: &identity.Principal{Sub: "p", Grants: write}}, ""},
		// A key sent only as an argument becomes the ledger id: it has the same 255-byte cap as a _meta key.
		{"argument key too long", executor.Call{Tool: "github__github_create_comment",
			Args:      json.RawMessage(`{"owner":"o","repo":"r","issue_number":7,"body":"b","idempotency_key":"` + strings.Repeat("k", 256) + `"}`),
			Principal: &identity.Principal{Sub: "p", Grants: write}}, "validation_error"},
		{"argument key at the cap", executor.Call{Tool: "github__github_create_comment",
			Args:      json.RawMessage(`{"owner":"o","repo":"r","issue_number":7,"body":"b","idempotency_key":"` + strings.Repeat("k", 255) + `"}`),
			Principal: &identity.Principal{Sub: "p", Grants: write}}, ""},
		{"grant", executor.Call{Tool: "github__github_create_issue", Args: json.RawMessage(`{"owner":"o","repo":"r","title":"t","confirm":true}`),
			Principal: &identity.Principal{Sub: "p", Grants: readOnly}}, "policy_denied"},
		{"no draft form", executor.Call{Tool: "github__github_list_issue", Args: json.RawMessage(`{"owner":"o","repo":"r"}`), Meta: map[string]any{"stage": true}}, "unsupported_operation"},
	}
	gx, ax := newExecutor(t, generic), newExecutor(t, generated)
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			want, got := gx.Call(context.Background(), c.call), ax.Call(context.Background(), c.call)
			code := ""
			if want.Err != nil {
				code = want.Err.Code
				want.Err.TraceID, got.Err.TraceID = "", ""
			}
			if code != c.code {
				t.Fatalf("code %q, want %q (%v)", code, c.code, want.Err)
			}
			if diff := cmp.Diff(summary(want), summary(got)); diff != "" {
				t.Errorf("generic and generated outcomes differ (-generic +generated):\n%s", diff)
			}
		})
	}
}

// summary is what a caller sees of an outcome, without times.
func summary(o *executor.Outcome) map[string]any {
	m := map[string]any{"raw": string(o.Raw), "invalid": o.InvalidParams, "plan": o.Plan}
	if o.Err != nil {
		m["err"] = string(o.Err.Marshal())
	}
	if o.Effect != nil {
		r := *o.Effect
		r.DeadlineMs = nil
		m["effect"] = string(r.AppendJSON(nil))
	}
	return m
}
