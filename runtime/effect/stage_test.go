package effect

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/envelope"
)

func TestResolveDraft(t *testing.T) {
	ops := loadOps(t)
	tools := fleetTools(ops)
	op := ops["github.releases.create"]

	// "?" paths that name nothing are left out; literals are decoded.
	id, args, err := ResolveDraft(op, obj(t, `{"owner":"octo","repo":"hello","tag_name":"v1"}`), tools)
	if err != nil {
		t.Fatal(err)
	}
	if id != "github.releases.create" {
		t.Errorf("draft %s", id)
	}
	b, _ := args.MarshalJSON()
	if want := `{"owner":"octo","repo":"hello","tag_name":"v1","draft":true}`; string(b) != want {
		t.Errorf("arguments %s, want %s", b, want)
	}
	if v, _ := args.Get("draft"); v != true {
		t.Errorf("draft literal decoded as %#v", v)
	}
	if m := args.Map(); len(m) != 4 || m["tag_name"] != "v1" {
		t.Errorf("map %v", m)
	}

	// With the optional inputs present they keep the mapping order.
	_, args, err = ResolveDraft(op, obj(t, `{"body":"b","name":"n","owner":"octo","repo":"hello","tag_name":"v1"}`), tools)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = args.MarshalJSON()
	if want := `{"owner":"octo","repo":"hello","tag_name":"v1","name":"n","body":"b","draft":true}`; string(b) != want {
		t.Errorf("arguments %s, want %s", b, want)
	}
}

func TestResolveDraftRefusals(t *testing.T) {
	ops := loadOps(t)
	tools := fleetTools(ops)
	full := `{"owner":"octo","repo":"hello","tag_name":"v1"}`
	tests := []struct {
		name    string
		op      string
		req     string
		tools   Tools
		code    string
		status  int
		details string
	}{
		{"no draft form", "github.issues.create", full, tools, envelope.UnsupportedOperation, 422, `{"code":"effect/no_draft_form"}`},
		{"draft not served", "github.releases.create", full, fleetTools(ops, "github.releases.create"), envelope.UnsupportedOperation, 422, `{"code":"effect/draft_unavailable"}`},
		{"missing mapped value", "github.releases.create", `{"owner":"octo","repo":"hello"}`, tools, envelope.ValidationError, 400, `{"code":"effect/draft_argument_missing","argument":"tag_name"}`},
		{"null mapped value", "github.releases.create", `{"owner":"octo","repo":"hello","tag_name":null}`, tools, envelope.ValidationError, 400, `{"code":"effect/draft_argument_missing","argument":"tag_name"}`},
		{"nil request", "github.releases.create", `null`, tools, envelope.ValidationError, 400, `{"code":"effect/draft_argument_missing","argument":"owner"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := decode(t, tc.req).(map[string]any)
			_, args, err := ResolveDraft(ops[tc.op], req, tc.tools)
			if err == nil {
				t.Fatalf("no error, draft %+v", args)
			}
			if args != nil || err.Code != tc.code || string(err.Details) != tc.details || envelope.RESTStatus(err.Code) != tc.status {
				t.Errorf("got %s details %s", err.Code, err.Details)
			}
			if err.Operation != tc.op || err.Message == "" {
				t.Errorf("operation %q message %q", err.Operation, err.Message)
			}
			var w map[string]any
			if json.Unmarshal(err.Marshal(), &w) != nil {
				t.Errorf("envelope does not marshal: %s", err.Marshal())
			}
		})
	}
	if _, _, err := ResolveDraft(nil, nil, tools); err == nil || string(err.Details) != `{"code":"effect/no_draft_form"}` {
		t.Errorf("nil op: %v", err)
	}

	// Draft arguments read the request only.
	op := custom(t, `{"kind":"mutation","class":"irreversible","draft":{"operation":"svc.things.delete","arguments":{"id":"response.id","k":"idempotency_key?"},"handle":"response.id","promote":{"operation":"svc.things.get","arguments":{}}}}`)
	if _, _, err := ResolveDraft(op, obj(t, `{"id":1}`), customTools); err == nil || string(err.Details) != `{"code":"effect/draft_argument_missing","argument":"id"}` {
		t.Errorf("response root in a draft: %v", err)
	}

	e := DraftInputInvalid("github.releases.create", "/draft: want boolean")
	if e.Code != envelope.ValidationError || string(e.Details) != `{"code":"effect/draft_input_invalid"}` || !strings.Contains(e.Message, "/draft: want boolean") {
		t.Errorf("%+v %s", e, e.Details)
	}
	e = DraftUnavailable("github.releases.create")
	if e.Code != envelope.UnsupportedOperation || string(e.Details) != `{"code":"effect/draft_unavailable"}` || !strings.Contains(e.Message, "github.releases.create") {
		t.Errorf("%+v %s", e, e.Details)
	}
}

func TestBuildStaged(t *testing.T) {
	ops := loadOps(t)
	op := ops["github.releases.create"]
	req := obj(t, `{"owner":"octo","repo":"hello","tag_name":"v1"}`)

	if BuildStaged(ops["github.issues.create"], req, nil, fleetTools(ops)) != nil {
		t.Error("staged object for an operation without a draft")
	}
	s := BuildStaged(op, req, decode(t, `{"id":500}`), fleetTools(ops, "github.releases.delete"))
	b, _ := s.MarshalJSON()
	want := `{"draft_operation":"github.releases.create","handle":500,"promote":{"operation":"github.releases.update","tool":"github__github_update_release","arguments":{"owner":"octo","repo":"hello","release_id":500,"draft":false}},"discard":null,"unavailable":"discard unavailable: github.releases.delete is not served by this gateway"}`
	if string(b) != want {
		t.Errorf("\n got %s\nwant %s", b, want)
	}
	// A draft response without the handle: everything that reads it is null.
	s = BuildStaged(op, req, decode(t, `{"name":"x"}`), fleetTools(ops))
	b, _ = s.MarshalJSON()
	want = `{"draft_operation":"github.releases.create","handle":null,"promote":null,"discard":null,"unavailable":"promote unavailable: response.id names nothing in this call; discard unavailable: response.id names nothing in this call"}`
	if string(b) != want {
		t.Errorf("\n got %s\nwant %s", b, want)
	}
	// No discard declared: null, and no reason.
	op2 := custom(t, `{"kind":"mutation","class":"irreversible","draft":{"operation":"svc.things.create","arguments":{},"handle":"response.id","promote":{"operation":"svc.things.get","arguments":{"id":"response.id"}}}}`)
	s = BuildStaged(op2, nil, decode(t, `{"id":"h"}`), customTools)
	b, _ = s.MarshalJSON()
	if want := `{"draft_operation":"svc.things.create","handle":"h","promote":{"operation":"svc.things.get","tool":"svc__svc_get_thing","arguments":{"id":"h"}},"discard":null}`; string(b) != want {
		t.Errorf("\n got %s\nwant %s", b, want)
	}
}
