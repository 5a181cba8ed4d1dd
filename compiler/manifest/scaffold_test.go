package manifest

import (
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// TestScaffoldQuoting: whatever text a description holds, the scaffold
// decodes back to the same service name, display name, operation keys and
// carrier, and comments never break out of their line.
func TestScaffoldQuoting(t *testing.T) {
	odd := []string{"yes", "No", "null", "a: b", "#x", "1.0", "-x", "über", "x #y", "[a]", "{b}", "*c", "&d", "!e", "%f", "@g", "`h", "'i'", `"j"`, "k?", "l:", " m", "n ", "true", "0x1F", "~", "a\tb", "p|q", ">r"}
	doc := &air.Document{Service: air.Service{ID: "svc", DisplayName: "Pets: \"the\" store #1",
		Description: "line one\nline two\u2028# not a key: x",
		Auth:        air.Auth{Type: air.AuthAPIKey, Carrier: &air.Carrier{In: "header", Name: "X-Key: odd"}, Scopes: []string{"read:pets", "yes"}}}}
	for i, id := range odd {
		doc.Operations = append(doc.Operations, air.Operation{ID: "svc.r" + string(rune('a'+i)) + ".get",
			DisplayName: "sum\nmary " + id, SourceRef: air.SourceRef{Method: "GET", Path: "/x\n" + id, OperationID: id},
			Effect: air.Effect{Kind: air.KindRead, Risk: "none"}, Idempotency: air.Idempotency{Mode: air.IdemNatural}})
	}
	out := Scaffold(doc, ScaffoldOptions{SchemaRef: "s.json\nversion: 2", SpecName: "x\ny"})
	m, diags := Decode("anvil.yaml", out)
	if diags.HasErrors() {
		t.Fatalf("%s\n%s", out, diagText(diags))
	}
	if m.Version != "1" || m.Service.Name != "svc" || m.Service.DisplayName != doc.Service.DisplayName || m.Service.Description != "" {
		t.Errorf("service %+v version %q", m.Service, m.Version)
	}
	if m.Auth == nil || m.Auth.Carrier.Name != "X-Key: odd" || strings.Join(m.Auth.Scopes, ",") != "read:pets,yes" {
		t.Errorf("auth %+v", m.Auth)
	}
	if len(m.Operations) != len(odd) {
		t.Fatalf("%d operations", len(m.Operations))
	}
	for i, e := range m.Operations {
		if e.Key != odd[i] || e.Op.State != air.StateReviewRequired {
			t.Errorf("operation %d: key %q state %q, want %q", i, e.Key, e.Op.State, odd[i])
		}
	}
	if !strings.HasPrefix(string(out), "# yaml-language-server: $schema=s.json version: 2\n") {
		t.Errorf("first line: %q", strings.SplitN(string(out), "\n", 2)[0])
	}
}

// TestScaffoldKeys: an operationId that another operation answers to (as
// its canonical name or AIR id) is not a key; the AIR id is.
func TestScaffoldKeys(t *testing.T) {
	doc := &air.Document{Service: air.Service{ID: "s"}, Operations: []air.Operation{
		{ID: "s.a.get", CanonicalName: "get_a", SourceRef: air.SourceRef{OperationID: "get_b"}},
		{ID: "s.b.get", CanonicalName: "get_b", SourceRef: air.SourceRef{OperationID: "getB"}},
		{ID: "s.c.get", CanonicalName: "get_c"},
	}}
	keys := scaffoldKeys(doc)
	if strings.Join(keys, ",") != "s.a.get,getB,s.c.get" {
		t.Errorf("keys %v", keys)
	}
}
