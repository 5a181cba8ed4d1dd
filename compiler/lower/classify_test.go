package lower

import (
	"testing"

	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

func boolp(b bool) *bool { return &b }

func TestDefaultEffect(t *testing.T) {
	for _, c := range []struct {
		method, action string
		kind           air.EffectKind
		act            string
		risk           air.Risk
		reversible     bool
	}{
		{"GET", "list", air.KindRead, "list", air.RiskNone, true},
		{"HEAD", "get", air.KindRead, "get", air.RiskNone, true},
		{"GET", "search", air.KindRead, "search", air.RiskNone, true},
		{"POST", "create", air.KindMutation, "create", air.RiskLow, true},
		{"POST", "delete", air.KindMutation, "delete", air.RiskDestructive, false},
		{"PUT", "replace", air.KindMutation, "replace", air.RiskLow, true},
		{"PUT", "upsert", air.KindMutation, "replace", air.RiskLow, true},
		{"PATCH", "upsert", air.KindMutation, "update", air.RiskLow, true},
		{"PATCH", "update", air.KindMutation, "update", air.RiskLow, true},
		{"DELETE", "delete", air.KindMutation, "delete", air.RiskDestructive, false},
		{"POST", "post_message", air.KindMutation, "send", air.RiskLow, true},
		{"POST", "annotate", air.KindMutation, "other", air.RiskLow, true},
		{"POST", "cancel", air.KindMutation, "cancel", air.RiskLow, true},
	} {
		e := defaultEffect(c.method, c.action, "thing")
		if e.Kind != c.kind || e.Action != c.act || e.Risk != c.risk || e.Reversible != c.reversible || e.Resource != "thing" {
			t.Errorf("%s %s: %+v", c.method, c.action, e)
		}
	}
}

func TestIdempotencyDefaults(t *testing.T) {
	plain := &openapi.Operation{}
	keyed := &openapi.Operation{Params: []*openapi.Param{{Name: "X-Idempotency-Key", In: "header"}}}
	natural := air.Idempotency{Mode: air.IdemNatural, Mechanism: "none", KeyDerivation: "none"}
	none := air.Idempotency{Mode: air.IdemNone, Mechanism: "none", KeyDerivation: "none"}
	keySupported := air.Idempotency{Mode: air.IdemKeySupported, Mechanism: "header", Key: "X-Idempotency-Key", KeyDerivation: "request_fingerprint"}
	for _, c := range []struct {
		kind   air.EffectKind
		method string
		op     *openapi.Operation
		want   air.Idempotency
	}{
		{air.KindRead, "GET", plain, natural},
		{air.KindRead, "GET", keyed, natural},
		{air.KindRead, "POST", plain, natural}, // a POST reclassified as a read
		{air.KindMutation, "PUT", plain, natural},
		{air.KindMutation, "DELETE", plain, natural},
		{air.KindMutation, "POST", plain, none},
		{air.KindMutation, "PATCH", plain, none},
		{air.KindMutation, "GET", plain, none}, // a GET reclassified as a mutation
		{air.KindMutation, "POST", keyed, keySupported},
		{air.KindMutation, "PUT", keyed, keySupported},
	} {
		if got := defaultIdempotency(c.kind, c.method, c.op); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.kind, c.method, got, c.want)
		}
	}
	for _, n := range []string{"Idempotency-Key", "idempotency_key", "X-Idempotency-Key", "IdempotencyKey"} {
		if !isIdempotencyHeaderName(n) {
			t.Errorf("%s is an idempotency header", n)
		}
	}
	if isIdempotencyHeaderName("X-Request-Id") {
		t.Error("X-Request-Id is not an idempotency header")
	}
}

func TestIdempotencyStrategies(t *testing.T) {
	op := &openapi.Operation{Params: []*openapi.Param{{Name: "Idempotency-Key", In: "header"}}}
	bare := &openapi.Operation{}
	for _, c := range []struct {
		name string
		m    manifest.Idempotency
		op   *openapi.Operation
		want air.Idempotency
	}{
		{"natural", manifest.Idempotency{Strategy: "natural"}, op, air.Idempotency{Mode: "natural", Mechanism: "none", KeyDerivation: "none"}},
		{"none", manifest.Idempotency{Strategy: "none"}, op, air.Idempotency{Mode: "none", Mechanism: "none", KeyDerivation: "none"}},
		{"none ignores a location", manifest.Idempotency{Strategy: "none", KeyLocation: "header", Header: "K"}, op, air.Idempotency{Mode: "none", Mechanism: "none", KeyDerivation: "none"}},
		{"key_supported header", manifest.Idempotency{Strategy: "key_supported", KeyLocation: "header", Header: "Idempotency-Key"}, op,
			air.Idempotency{Mode: "key_supported", Mechanism: "header", Key: "Idempotency-Key", KeyDerivation: "request_fingerprint"}},
		{"key_supported, spec header", manifest.Idempotency{Strategy: "key_supported"}, op,
			air.Idempotency{Mode: "key_supported", Mechanism: "header", Key: "Idempotency-Key", KeyDerivation: "request_fingerprint"}},
		{"key_supported, no carrier", manifest.Idempotency{Strategy: "key_supported"}, bare,
			air.Idempotency{Mode: "key_supported", Mechanism: "none", KeyDerivation: "request_fingerprint"}},
		{"required query", manifest.Idempotency{Strategy: "required_request_key", KeyLocation: "query", Parameter: "request_id"}, bare,
			air.Idempotency{Mode: "required", Mechanism: "query", Key: "request_id", KeyDerivation: "client_supplied"}},
		{"client_id body", manifest.Idempotency{Strategy: "client_id", KeyLocation: "body", Field: "client_token"}, bare,
			air.Idempotency{Mode: "client_id", Mechanism: "body", Key: "client_token", KeyDerivation: "none"}},
		{"path", manifest.Idempotency{Strategy: "required_request_key", KeyLocation: "path", Parameter: "id"}, bare,
			air.Idempotency{Mode: "required", Mechanism: "path", Key: "id", KeyDerivation: "client_supplied"}},
	} {
		m := c.m
		if got := manifestIdempotency(&m, air.Idempotency{}, c.op); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestRetries(t *testing.T) {
	for _, c := range []struct {
		idem air.Idempotency
		mode air.RetryMode
	}{
		{air.Idempotency{Mode: "natural", Mechanism: "none"}, "safe"},
		{air.Idempotency{Mode: "key_supported", Mechanism: "header", Key: "K"}, "safe"},
		{air.Idempotency{Mode: "key_supported", Mechanism: "none"}, "none"},
		{air.Idempotency{Mode: "required", Mechanism: "query", Key: "k"}, "safe"},
		{air.Idempotency{Mode: "required", Mechanism: "none"}, "none"},
		{air.Idempotency{Mode: "client_id", Mechanism: "body", Key: "k"}, "none"},
		{air.Idempotency{Mode: "none", Mechanism: "none"}, "none"},
	} {
		r := computeRetries(c.idem)
		if r.Mode != c.mode || r.MaxAttempts > 5 || r.MaxDelayMs > 20000 || r.RetryOn == nil {
			t.Errorf("%+v: %+v", c.idem, r)
		}
		if (r.Mode == "safe") != (r.MaxAttempts > 1) {
			t.Errorf("%+v: attempts %d for mode %s", c.idem, r.MaxAttempts, r.Mode)
		}
	}
	safe := computeRetries(air.Idempotency{Mode: "natural"})
	none := computeRetries(air.Idempotency{Mode: "none"})
	if r := manifestRetries(&manifest.Retries{Enabled: boolp(false)}, safe); r.Mode != "none" || r.MaxAttempts != 1 {
		t.Errorf("disable: %+v", r)
	}
	if r := manifestRetries(&manifest.Retries{Enabled: boolp(true), MaxAttempts: 5, OnlyOn: []string{"503"}}, none); r.Mode != "safe" || r.Basis != "manifest" || r.MaxAttempts != 5 || len(r.RetryOn) != 1 {
		t.Errorf("enable: %+v", r)
	}
	if r := manifestRetries(&manifest.Retries{MaxAttempts: 9}, safe); r.MaxAttempts != 5 {
		t.Errorf("cap: %+v", r)
	}
}

func TestClassifyConfirmation(t *testing.T) {
	natural := air.Idempotency{Mode: air.IdemNatural}
	keyed := air.Idempotency{Mode: air.IdemKeySupported, Mechanism: "header", Key: "K"}
	none := air.Idempotency{Mode: air.IdemNone}
	mut := func(risk air.Risk, rev bool) air.Effect {
		return air.Effect{Kind: air.KindMutation, Risk: risk, Reversible: rev}
	}
	for _, c := range []struct {
		name string
		e    air.Effect
		i    air.Idempotency
		want bool
	}{
		{"read", air.Effect{Kind: air.KindRead, Risk: air.RiskHigh}, none, false},
		{"low keyed", mut(air.RiskLow, true), keyed, false},
		{"medium natural", mut(air.RiskMedium, true), natural, false},
		{"high", mut(air.RiskHigh, true), natural, true},
		{"financial", mut(air.RiskFinancial, true), keyed, true},
		{"destructive", mut(air.RiskDestructive, true), natural, true},
		{"irreversible", mut(air.RiskLow, false), keyed, true},
		{"no idempotency", mut(air.RiskNone, true), none, true},
	} {
		if got, _ := classifyConfirmation(c.e, c.i); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	base := computeConfirmation(mut(air.RiskLow, true), none)
	if !base.Required || base.Risk != air.RiskLow || base.Reason == "" {
		t.Errorf("computed: %+v", base)
	}
	for _, c := range []struct {
		name string
		m    manifest.Confirmation
		want air.Confirmation
	}{
		{"off", manifest.Confirmation{Required: boolp(false)}, air.Confirmation{}},
		{"reason", manifest.Confirmation{Reason: "Why."}, air.Confirmation{Required: true, Risk: air.RiskLow, Reason: "Why."}},
		{"risk", manifest.Confirmation{Risk: air.RiskMedium}, air.Confirmation{Required: true, Risk: air.RiskMedium, Reason: base.Reason}},
		{"human approval forces", manifest.Confirmation{Required: boolp(false), HumanApproval: boolp(true)}, air.Confirmation{Required: true, HumanApproval: true}},
	} {
		m := c.m
		if got := manifestConfirmation(&m, base); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := manifestConfirmation(&manifest.Confirmation{Required: boolp(true)}, air.Confirmation{}); !got.Required {
		t.Errorf("on: %+v", got)
	}
}

// TestSideEffectOverride: side_effect reclassifies and resets idempotency;
// a declared class sets reversible unless the entry does.
func TestSideEffectOverride(t *testing.T) {
	spec := &openapi.Spec{Kind: openapi.KindOpenAPI30, File: "api.yaml", Title: "Q", Version: "1",
		Operations: []*openapi.Operation{
			{Path: "/query", Method: "POST", OperationID: "runQuery"},
			{Path: "/ping", Method: "GET", OperationID: "pingServer"},
			{Path: "/things", Method: "POST", OperationID: "makeThing"},
		}}
	man := &manifest.Manifest{File: "anvil.yaml", Operations: []*manifest.OperationEntry{
		{Key: "runQuery", Op: &manifest.Operation{SideEffect: "read"}},
		{Key: "pingServer", Op: &manifest.Operation{SideEffect: "mutation", Risk: "high", Action: "execute"}},
		{Key: "makeThing", Op: &manifest.Operation{Effect: &manifest.Effect{Class: "irreversible"}, DisplayName: "Make", Description: "Makes.", IntentExamples: []string{"make one"}}},
	}}
	doc, ds := Lower(spec, man, nil)
	if ds.HasErrors() {
		t.Fatal(text(ds))
	}
	q, p, m := doc.Operations[0], doc.Operations[1], doc.Operations[2]
	if q.Effect.Kind != air.KindRead || q.Effect.Risk != air.RiskNone || q.Idempotency.Mode != air.IdemNatural || q.Confirmation.Required || q.Retries.Mode != "safe" {
		t.Errorf("POST as read: %+v %+v %+v", q.Effect, q.Idempotency, q.Confirmation)
	}
	if p.Effect.Kind != air.KindMutation || p.Effect.Risk != air.RiskHigh || p.Effect.Action != "execute" || p.Idempotency.Mode != air.IdemNone || !p.Confirmation.Required {
		t.Errorf("GET as mutation: %+v %+v %+v", p.Effect, p.Idempotency, p.Confirmation)
	}
	if m.Effect.Class != air.ClassIrreversible || m.Effect.Reversible || m.DisplayName != "Make" || m.Description != "Makes." || len(m.Skill.IntentExamples) != 1 {
		t.Errorf("class sets reversible: %+v %q %q %v", m.Effect, m.DisplayName, m.Description, m.Skill)
	}
}
