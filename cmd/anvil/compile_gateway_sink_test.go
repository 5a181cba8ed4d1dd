package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/golden"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/canon"
)

// The "sink" bundle exercises what github-mini does not: every parameter
// location and style, array and object inputs, form, raw-text and
// octet-stream bodies, whole bodies, idempotency carriers the inputs do not
// declare (header, query and body), nullable inputs and every scalar
// constraint. runtime/serve's tests serve it generically from
// testdata/sink and link its generated gateway (internal/testgen/sink) to
// compare the two handler by handler; this test keeps both committed trees
// equal to what compile --workspace writes (ANVIL_UPDATE_GOLDEN=1 rewrites
// them).
const (
	sinkWorkspace = "../../runtime/serve/testdata/sink"
	sinkGen       = "../runtime/serve/internal/testgen/sink" // relative to golden/
	sinkImport    = "github.com/anvil-dev/anvil/runtime/serve/internal/testgen"
)

func sinkSchema(t *testing.T, s string) *air.Schema {
	t.Helper()
	var x air.Schema
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return &x
}

// sinkDoc builds the sink bundle.
func sinkDoc(t *testing.T) *air.Document {
	t.Helper()
	b := func(v bool) *bool { return &v }
	op := func(id, tool, method, path string, kind air.EffectKind, params []air.Param, body *air.Body, schema string) air.Operation {
		o := air.Operation{
			ID: id, CanonicalName: tool, DisplayName: tool, Description: "Sink operation " + id + ".", Tags: []string{},
			SourceRef:   air.SourceRef{Kind: "openapi", Path: path, Method: method, OperationID: tool},
			Effect:      air.Effect{Kind: kind, Action: "call", Risk: "low", Reversible: kind == air.KindRead},
			Input:       air.Input{Params: params, Body: body, Schema: sinkSchema(t, schema), Safety: air.Safety{DryRun: air.DryRunKey}},
			Output:      air.Output{Status: 200, ContentType: "application/json"},
			Errors:      []air.ErrorCase{},
			Idempotency: air.Idempotency{Mode: air.IdemNatural, Mechanism: "none", KeyDerivation: "none"},
			Retries:     air.Retries{Mode: "safe", RetryOn: []string{}},
			CLI:         air.CLI{Command: "sink " + tool, Aliases: []string{}},
			MCP:         air.MCP{ToolName: "sink_" + tool},
			Skill:       air.Skill{IntentExamples: []string{}},
			State:       air.StateApproved,
			ReviewNotes: []string{},
		}
		if kind == air.KindMutation {
			o.Retries.Mode = "none"
			o.Idempotency.Mode = air.IdemNone
		}
		return o
	}
	p := func(name string, in air.Location, required bool, style string, explode *bool) air.Param {
		return air.Param{Name: name, Key: name, In: in, Required: required, Style: air.ParamStyle(style), Explode: explode}
	}
	keyed := func(name, key string, in air.Location, required bool) air.Param {
		return air.Param{Name: name, Key: key, In: in, Required: required}
	}
	ops := []air.Operation{
		op("sink.items.search", "search_items", "GET", "/items/{kind}/{ids}", air.KindRead, []air.Param{
			p("kind", "path", true, "", nil), p("ids", "path", true, "", nil),
			p("tags", "query", false, "form", nil), p("labels", "query", false, "form", b(false)),
			p("space", "query", false, "spaceDelimited", nil), p("pipe", "query", false, "pipeDelimited", nil),
			p("filter", "query", false, "deepObject", b(true)), p("opts", "query", false, "form", nil),
			p("limit", "query", false, "", nil), p("ratio", "query", false, "", nil), p("flag", "query", false, "", nil),
			p("q", "query", false, "", nil), p("maybe", "query", false, "", nil), p("need", "query", true, "", nil),
			keyed("X-Trace", "trace", "header", false), keyed("X-List", "xlist", "header", false), keyed("Accept", "accept", "header", false),
			p("session", "cookie", false, "", nil), p("pref", "cookie", false, "", nil),
		}, nil, `{"type":"object","properties":{
			"anvil_dry_run":{"type":"boolean"},
			"kind":{"type":"string","enum":["book","disc","a b"]},
			"ids":{"type":"array","items":{"type":"integer"}},
			"tags":{"type":"array","items":{"type":"string"}},
			"labels":{"type":"array","items":{"type":"string"}},
			"space":{"type":"array","items":{"type":"string"}},
			"pipe":{"type":"array","items":{"type":"string"}},
			"filter":{"type":"object","additionalProperties":{"type":["string","integer","null"]}},
			"opts":{"type":"object"},
			"limit":{"type":"integer","minimum":1,"maximum":100},
			"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
			"flag":{"type":"boolean","enum":[true]},
			"q":{"type":"string","pattern":"^[a-z ]+$","minLength":2,"maxLength":10},
			"maybe":{"type":["string","null"],"enum":["x","y",null]},
			"need":{"type":"integer","enum":[1,2.0,3]},
			"trace":{"type":"string","maxLength":40},
			"xlist":{"type":"array","items":{"type":"string"}},
			"accept":{"type":"string"},
			"session":{"type":"string"},
			"pref":{"type":["integer","null"]}},
			"required":["ids","kind","need"],"additionalProperties":false}`),
		op("sink.labels.get", "get_label", "GET", "/labels/{name}/{m}/{n}.json", air.KindRead, []air.Param{
			p("name", "path", true, "label", nil), p("m", "path", true, "matrix", b(true)), p("n", "path", true, "matrix", nil),
		}, nil, `{"type":"object","properties":{"anvil_dry_run":{"type":"boolean"},"name":{"type":"string"},
			"m":{"type":["string","array","object"]},"n":{"type":"number"}},"required":["m","n","name"],"additionalProperties":false}`),
		op("sink.forms.submit", "submit_form", "POST", "/forms", air.KindMutation, nil,
			&air.Body{Required: true, ContentType: "application/x-www-form-urlencoded", Projection: air.ProjectionFields,
				Fields: []air.BodyField{{Name: "a", Key: "a", Required: true}, {Name: "n", Key: "n"}, {Name: "list", Key: "list"}, {Name: "obj", Key: "obj"}, {Name: "z", Key: "z"}}},
			`{"type":"object","properties":{"anvil_dry_run":{"type":"boolean"},"a":{"type":"string"},"n":{"type":["integer","null"]},
			"list":{"type":"array"},"obj":{"type":"object"},"z":{"type":"boolean"}},"required":["a"],"additionalProperties":false}`),
		op("sink.docs.put", "put_doc", "PUT", "/docs/{id}", air.KindMutation, []air.Param{p("id", "path", true, "", nil)},
			&air.Body{Required: true, ContentType: "application/merge-patch+json", Projection: air.ProjectionWhole, Fields: []air.BodyField{{Name: "body", Key: "body", Required: true}}},
			`{"type":"object","properties":{"anvil_dry_run":{"type":"boolean"},"id":{"type":"string","minLength":1},"body":{"type":"object"},
			"idempotency_key":{"type":"string"}},"required":["body","id"],"additionalProperties":false}`),
		op("sink.notes.create", "create_note", "POST", "/notes", air.KindMutation, nil,
			&air.Body{ContentType: "text/plain; charset=utf-8", Projection: air.ProjectionWhole, Fields: []air.BodyField{{Name: "text", Key: "text"}}},
			`{"type":"object","properties":{"anvil_dry_run":{"type":"boolean"},"text":{}},"additionalProperties":false}`),
		op("sink.blobs.upload", "upload_blob", "POST", "/blobs", air.KindMutation, nil,
			&air.Body{Required: true, ContentType: "application/octet-stream", Projection: air.ProjectionWhole},
			`{"type":"object","properties":{"anvil_dry_run":{"type":"boolean"},"body":{"type":["string","object"]}},"required":["body"],"additionalProperties":false}`),
		op("sink.events.create", "create_event", "POST", "/events", air.KindMutation, []air.Param{p("tenant", "query", false, "", nil)},
			&air.Body{ContentType: "application/json", Projection: air.ProjectionFields, Fields: []air.BodyField{
				{Name: "title", Key: "title", Required: true}, {Name: "when", Key: "when"}, {Name: "score", Key: "score"},
				{Name: "meta", Key: "meta"}, {Name: "draft", Key: "draft"}, {Name: "anvil_dry_run", Key: "anvil_dry_run"}}},
			`{"type":"object","properties":{"anvil_dry_run":{"type":"boolean"},"tenant":{"type":"string"},"title":{"type":"string"},
			"when":{"type":["string","null"]},"score":{"type":"number","minimum":-1.5,"maximum":1e3},"meta":{},"draft":{"type":["boolean","null"]},
			"idempotency_key":{"type":"string"}},"required":["title"]}`),
		op("sink.jobs.run", "run_job", "POST", "/jobs", air.KindMutation, []air.Param{p("job", "query", true, "", nil)}, nil,
			`{"type":"object","properties":{"anvil_dry_run":{"type":"boolean"},"job":{"type":"string"},"idempotency_key":{"type":"string"}},
			"required":["job"],"additionalProperties":false}`),
		// Control inputs declared otherwise than lowering declares them, as
		// a hand-edited bundle may: the generated code then writes their
		// accessors itself.
		op("sink.odd.set", "set_odd", "PUT", "/odd/{id}", air.KindMutation, []air.Param{p("id", "path", true, "", nil)}, nil,
			`{"type":"object","properties":{"anvil_dry_run":{"type":"string"},"id":{"type":"string"},
			"anvil_confirm":{"type":["boolean","null"]},"idempotency_key":{"type":["string","null"]}},
			"required":["anvil_confirm","id"],"additionalProperties":false}`),
		op("sink.odd.tag", "tag_odd", "POST", "/odd", air.KindMutation, []air.Param{keyed("idem", "key", "query", false)}, nil,
			`{"type":"object","properties":{"confirm":{},"key":{"type":"integer"},"note":{"type":"string"}},"required":["note"]}`),
		op("sink.odd.mark", "mark_odd", "POST", "/odd/mark", air.KindMutation, nil, nil,
			`{"type":"object","properties":{"anvil_dry_run":{"type":["boolean","null"]},"flag":{"type":"boolean"},"api_token":{"type":"string"}}}`),
	}
	// Carriers that no input declares: body (docs), header (events), query (jobs).
	ops[3].Idempotency = air.Idempotency{Mode: air.IdemKeySupported, Mechanism: "body", Key: "request_id", KeyDerivation: "client_supplied"}
	ops[3].Input.Safety.IdempotencyKey = "idempotency_key"
	ops[6].Idempotency = air.Idempotency{Mode: air.IdemKeySupported, Mechanism: "header", Key: "Idempotency-Key", KeyDerivation: "client_supplied"}
	ops[6].Input.Safety.IdempotencyKey = "idempotency_key"
	ops[7].Idempotency = air.Idempotency{Mode: air.IdemRequired, Mechanism: "query", Key: "idem", KeyDerivation: "client_supplied"}
	ops[7].Input.Safety.IdempotencyKey = "idempotency_key"
	// A nullable confirm under another name, a string anvil_dry_run and a
	// nullable carrier sent as a header (set); a confirm of any type and an
	// integer carrier declared as a query parameter (tag); a nullable
	// anvil_dry_run (mark).
	ops[8].Confirmation = air.Confirmation{Required: true}
	ops[8].Input.Safety.ConfirmKey = "anvil_confirm"
	ops[8].Idempotency = air.Idempotency{Mode: air.IdemKeySupported, Mechanism: "header", Key: "Idempotency-Key", KeyDerivation: "client_supplied"}
	ops[8].Input.Safety.IdempotencyKey = "idempotency_key"
	ops[9].Confirmation = air.Confirmation{Required: true}
	ops[9].Input.Safety.ConfirmKey = "confirm"
	ops[9].Idempotency = air.Idempotency{Mode: air.IdemKeySupported, Mechanism: "query", Key: "idem", KeyDerivation: "client_supplied"}
	ops[9].Input.Safety.IdempotencyKey = "key"
	// Lowering records which inputs the audit hash redacts.
	for i := range ops {
		for k := range ops[i].Input.Schema.Properties {
			if canon.SensitiveKey(k) {
				ops[i].Input.Sensitive = append(ops[i].Input.Sensitive, k)
			}
		}
		sort.Strings(ops[i].Input.Sensitive)
	}
	return &air.Document{
		Schema: air.SchemaVersion, AnvilVersion: air.AnvilVersion,
		Service: air.Service{ID: "sink", Version: "1.0.0", DisplayName: "Sink", Source: air.Source{Kind: "openapi-3.1"},
			Auth:    air.Auth{Type: air.AuthAPIKey, Scheme: "key", Carrier: &air.Carrier{In: "header", Name: "X-Api-Key"}},
			Servers: []air.Server{{URL: "https://sink.example/api/v2/"}}},
		Operations: ops, Capabilities: []air.Capability{}, Workflows: []air.Workflow{},
		Schemas: map[string]*air.Schema{}, Diagnostics: []air.Diagnostic{},
	}
}

// TestGeneratedSinkGolden keeps runtime/serve's sink bundle and its
// generated gateway equal to what this test and compile --workspace write.
func TestGeneratedSinkGolden(t *testing.T) {
	rendered, err := air.Files(sinkDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(sinkWorkspace, "sink")
	if golden.Updating() {
		if err := files.FromBytes(rendered).WriteTo(bundle); err != nil {
			t.Fatal(err)
		}
	} else {
		for name, want := range rendered {
			got, err := os.ReadFile(filepath.Join(bundle, filepath.FromSlash(name)))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s/%s differs from sinkDoc (run `make golden`): %v", bundle, name, err)
			}
		}
	}
	ws := t.TempDir()
	if err := files.FromBytes(rendered).WriteTo(filepath.Join(ws, "sink")); err != nil {
		t.Fatal(err)
	}
	gen := t.TempDir()
	code, stdout, stderr := runCLI(t, "", "compile", "--workspace", ws, "--yard", "sink", "--gen", gen, "--import-path", sinkImport)
	if code != 0 {
		t.Fatalf("compile --workspace: exit %d\n%s%s", code, stdout, stderr)
	}
	tree, err := files.Read(filepath.Join(gen, "sink"))
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckTree(t, sinkGen, tree.Bytes())
}
