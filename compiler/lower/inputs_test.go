package lower

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

func str() *air.Schema         { return &air.Schema{Type: air.Types{"string"}} }
func integer() *air.Schema     { return &air.Schema{Type: air.Types{"integer"}} }
func ref(n string) *air.Schema { return &air.Schema{Ref: "#/$defs/" + n} }
func obj(req []string, props map[string]*air.Schema) *air.Schema {
	return &air.Schema{Type: air.Types{"object"}, Properties: props, Required: req}
}

func schemaJSON(t *testing.T, s *air.Schema) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func inputSpec() *openapi.Spec {
	return &openapi.Spec{
		Kind: openapi.KindOpenAPI31, File: "api.yaml", Title: "Shop", Version: "1",
		SecuritySchemes: map[string]*openapi.SecurityScheme{"key": {Name: "key", Type: "apiKey", In: "query", ParamName: "api_key"}},
		Security:        []openapi.SecurityRequirement{{{Scheme: "key"}}},
		Schemas: map[string]*air.Schema{
			"Order":   obj([]string{"id"}, map[string]*air.Schema{"id": integer(), "items": {Type: air.Types{"array"}, Items: ref("Item")}, "confirm": {Type: air.Types{"boolean"}}}),
			"Item":    obj(nil, map[string]*air.Schema{"sku": str(), "money": ref("Money")}),
			"Money":   obj(nil, map[string]*air.Schema{"amount": integer()}),
			"Unused":  str(),
			"Receipt": obj(nil, map[string]*air.Schema{"n": integer()}),
		},
		Operations: []*openapi.Operation{
			{Path: "/orders/{id}", Method: "POST", OperationID: "updateOrder",
				Params: []*openapi.Param{
					{Name: "id", In: "path", Required: true, Schema: integer(), Description: "Order id."},
					{Name: "x_trace", In: "query", Schema: str()},
					{Name: "X-Trace", In: "header", Schema: str()},
					{Name: "Accept", In: "header", Schema: str()},
					{Name: "api_key", In: "query", Schema: str()},
				},
				RequestBody: &openapi.RequestBody{Required: true, ContentType: "application/json", Schema: ref("Order")},
				Responses: []*openapi.Response{
					{Status: "2XX", Description: "Updated.", ContentType: "application/json", Schema: ref("Receipt")},
					{Status: "201", Description: "Created."},
					{Status: "404", Description: "Missing."},
					{Status: "default", Description: "Error."},
				}},
			{Path: "/orders/{body}/notes", Method: "POST", OperationID: "addNotes",
				Params:      []*openapi.Param{{Name: "body", In: "path", Required: true, Schema: str()}},
				RequestBody: &openapi.RequestBody{ContentType: "application/json", Description: "The notes.", Schema: &air.Schema{Type: air.Types{"array"}, Items: str()}}},
			{Path: "/forms", Method: "POST", OperationID: "postForm",
				RequestBody: &openapi.RequestBody{Required: true, ContentType: "application/x-www-form-urlencoded", Schema: obj(nil, map[string]*air.Schema{"a": str()})}},
			{Path: "/carts", Method: "POST", OperationID: "createCart"},
			{Path: "/payments", Method: "POST", OperationID: "createPayment",
				RequestBody: &openapi.RequestBody{ContentType: "application/json", Schema: obj(nil, map[string]*air.Schema{"amount": integer()})}},
			{Path: "/uploads", Method: "POST", OperationID: "upload",
				RequestBody: &openapi.RequestBody{ContentType: "application/octet-stream", Schema: &air.Schema{Type: air.Types{"string"}, Format: "binary"}}},
			{Path: "/jobs/{id}", Method: "PUT", OperationID: "putJob",
				Params: []*openapi.Param{{Name: "id", In: "path", Required: true, Schema: str()}}},
		},
	}
}

func TestInputs(t *testing.T) {
	spec := inputSpec()
	man := &manifest.Manifest{File: "anvil.yaml", Operations: []*manifest.OperationEntry{
		{Key: "createCart", Op: &manifest.Operation{Idempotency: &manifest.Idempotency{Strategy: "key_supported", KeyLocation: "header", Header: "X-Request-Id"}}},
		{Key: "createPayment", Op: &manifest.Operation{Idempotency: &manifest.Idempotency{Strategy: "required_request_key", KeyLocation: "body", Field: "client_token"}}},
		{Key: "upload", Op: &manifest.Operation{Idempotency: &manifest.Idempotency{Strategy: "key_supported", KeyLocation: "body", Field: "token"}}},
		{Key: "putJob", Op: &manifest.Operation{Idempotency: &manifest.Idempotency{Strategy: "required_request_key", KeyLocation: "path", Parameter: "job_key"}}},
	}}
	doc, ds := Lower(spec, man, nil)
	if ds.HasErrors() {
		t.Fatal(text(ds))
	}

	// Param keys: the wire name, or snake_case of it; collisions take the
	// location as a prefix; Accept and the api key carrier are not inputs.
	u := doc.Operations[0]
	var keys []string
	for _, p := range u.Input.Params {
		keys = append(keys, string(p.In)+":"+p.Name+"="+p.Key)
	}
	if got := strings.Join(keys, " "); got != "path:id=id query:x_trace=x_trace header:X-Trace=header_x_trace" {
		t.Errorf("params: %s", got)
	}
	// A $ref body with properties is projected; a field colliding with a
	// param becomes body_<key>; a business "confirm" moves the control to
	// anvil_confirm.
	var fields []string
	for _, f := range u.Input.Body.Fields {
		fields = append(fields, f.Name+"="+f.Key)
	}
	if u.Input.Body.Projection != air.ProjectionFields || strings.Join(fields, " ") != "confirm=confirm id=body_id items=items" {
		t.Errorf("body %s: %s", u.Input.Body.Projection, strings.Join(fields, " "))
	}
	if u.Input.Safety != (air.Safety{ConfirmKey: "anvil_confirm", DryRun: "anvil_dry_run"}) {
		t.Errorf("safety %+v", u.Input.Safety)
	}
	wantSchema := `{"$defs":{"Item":{"type":"object","properties":{"money":{"$ref":"#/$defs/Money"},"sku":{"type":"string"}}},"Money":{"type":"object","properties":{"amount":{"type":"integer"}}}},` +
		`"type":"object","properties":{` +
		`"anvil_confirm":{"description":"Must be true to confirm this call. Repeating this operation is not safe: it has no idempotency.","type":"boolean","const":true},` +
		`"anvil_dry_run":{"type":"boolean"},"body_id":{"type":"integer"},"confirm":{"type":"boolean"},` +
		`"header_x_trace":{"type":"string"},"id":{"description":"Order id.","type":"integer"},` +
		`"items":{"type":"array","items":{"$ref":"#/$defs/Item"}},"x_trace":{"type":"string"}},` +
		`"required":["anvil_confirm","body_id","id"],"additionalProperties":false}`
	if got := schemaJSON(t, u.Input.Schema); got != wantSchema {
		t.Errorf("schema\n%s\nwant\n%s", got, wantSchema)
	}
	if u.Output.Status != 200 || u.Output.Description != "Updated." || u.Output.Schema.Ref != "#/$defs/Receipt" {
		t.Errorf("output %+v", u.Output)
	}
	if len(u.Errors) != 2 || u.Errors[0].Status != "404" || u.Errors[1].Status != "default" {
		t.Errorf("errors %+v", u.Errors)
	}
	if got := strings.Join(slices.Sorted(maps.Keys(doc.Schemas)), ","); got != "Item,Money,Order,Receipt" {
		t.Errorf("document schemas %s", got)
	}
	if doc.Service.Auth.Type != air.AuthAPIKey || *doc.Service.Auth.Carrier != (air.Carrier{In: "query", Name: "api_key"}) {
		t.Errorf("auth %+v", doc.Service.Auth)
	}

	// A non-object JSON body is whole, always under "body": a param with that key moves aside.
	n := doc.Operations[1]
	if n.Input.Body.Projection != air.ProjectionWhole || len(n.Input.Body.Fields) != 0 {
		t.Errorf("whole body %+v", n.Input.Body)
	}
	if s := n.Input.Schema.Properties["body"]; s == nil || s.Description != "The notes." || slices.Contains(n.Input.Schema.Required, "body") {
		t.Errorf("whole body input %s", schemaJSON(t, n.Input.Schema))
	}
	if p := n.Input.Params[0]; p.Key != "path_body" || p.Name != "body" {
		t.Errorf("param %+v", p)
	}
	// A form body is whole.
	if f := doc.Operations[2]; f.Input.Body.Projection != air.ProjectionWhole || !slices.Contains(f.Input.Schema.Required, "body") {
		t.Errorf("form body %+v", f.Input.Body)
	}
	// An undeclared header carrier is added as the idempotency_key input.
	c := doc.Operations[3]
	if len(c.Input.Params) != 1 || c.Input.Params[0].Name != "X-Request-Id" || c.Input.Params[0].Key != "idempotency_key" || c.Input.Params[0].In != "header" {
		t.Errorf("added carrier %+v", c.Input.Params)
	}
	if c.Input.Safety.IdempotencyKey != "idempotency_key" || c.Input.Schema.Properties["idempotency_key"] == nil || c.Retries.Mode != "safe" || c.Confirmation.Required {
		t.Errorf("carrier control %+v %+v", c.Input.Safety, c.Retries)
	}
	// An undeclared body carrier is added as a field.
	p := doc.Operations[4]
	if last := p.Input.Body.Fields[len(p.Input.Body.Fields)-1]; last != (air.BodyField{Name: "client_token", Key: "idempotency_key"}) || p.Input.Safety.IdempotencyKey != "idempotency_key" {
		t.Errorf("body carrier %+v %+v", p.Input.Body.Fields, p.Input.Safety)
	}
	// A whole body cannot take a field: the carrier is its own input.
	up := doc.Operations[5]
	if up.Input.Safety.IdempotencyKey != "idempotency_key" || up.Input.Schema.Properties["idempotency_key"] == nil || up.Input.Body.Projection != air.ProjectionWhole {
		t.Errorf("whole-body carrier %+v", up.Input.Safety)
	}
	// A path carrier the path does not have is dropped, with a note.
	j := doc.Operations[6]
	if j.Idempotency.HasCarrier() || j.Input.Safety.IdempotencyKey != "" || len(j.ReviewNotes) != 1 {
		t.Errorf("path carrier %+v %+v %q", j.Idempotency, j.Input.Safety, j.ReviewNotes)
	}
}

func TestSchemaPaths(t *testing.T) {
	l := &lowerer{spec: inputSpec()}
	l.spec.Schemas["Open"] = &air.Schema{}
	l.spec.Schemas["Map"] = &air.Schema{Type: air.Types{"object"}, AdditionalProperties: integer()}
	l.spec.Schemas["Either"] = &air.Schema{OneOf: []*air.Schema{ref("Money"), ref("Receipt")}}
	l.spec.Schemas["Loop"] = ref("Loop")
	for _, c := range []struct {
		root, path string
		kind       resolution
		types      string
	}{
		{"Order", "response.id", resolved, "integer"},
		{"Order", "response.items[0].money.amount", resolved, "integer"},
		{"Order", "response.nope", unresolved, ""},
		{"Order", "response.id.x", unresolved, ""},
		{"Order", "response.items.x", unresolved, ""},
		{"Order", "response[0]", unresolved, ""},
		{"Open", "response.anything.at[3].all", unverified, ""},
		{"Map", "response.any", resolved, "integer"},
		{"Map", "response.any.deeper", unresolved, ""},
		{"Either", "response.n", resolved, "integer"},
		{"Either", "response.amount", resolved, "integer"},
		{"Either", "response.zzz", unresolved, ""},
		{"Loop", "response.x", unverified, ""},
	} {
		p, err := air.ParsePath(c.path)
		if err != nil {
			t.Fatal(err)
		}
		r := l.resolvePath(ref(c.root), p.Segments, "response")
		if r.kind != c.kind {
			t.Errorf("%s in %s: kind %d (%s), want %d", c.path, c.root, r.kind, r.reason, c.kind)
			continue
		}
		if c.kind == resolved {
			if got := strings.Join(l.schemaTypes(r.schema), ","); got != c.types {
				t.Errorf("%s in %s: types %q, want %q", c.path, c.root, got, c.types)
			}
		}
	}
	for _, c := range []struct {
		src, tgt []string
		dropNull bool
		want     bool
	}{
		{[]string{"integer"}, []string{"number"}, false, true},
		{[]string{"number"}, []string{"integer"}, false, false},
		{[]string{"string"}, []string{"integer"}, false, false},
		{[]string{"string", "null"}, []string{"string"}, true, true},
		{[]string{"null"}, []string{"string"}, false, false},
		{nil, []string{"string"}, false, true},
		{[]string{"boolean"}, nil, false, true},
		{[]string{"integer", "string"}, []string{"integer"}, false, false},
	} {
		if got, _ := typesFit(c.src, c.tgt, c.dropNull); got != c.want {
			t.Errorf("typesFit(%v, %v) = %v", c.src, c.tgt, got)
		}
	}
	for lit, want := range map[string]string{`"x"`: "string", `1`: "integer", `-2`: "integer", `1.5`: "number", `1e3`: "number", `true`: "boolean", `null`: "null", `[1]`: "array", `{}`: "object"} {
		if got := jsonType([]byte(lit)); got != want {
			t.Errorf("jsonType(%s) = %s, want %s", lit, got, want)
		}
	}
}

// TestSensitiveInputsAreRecorded: lowering records, sorted, the inputs
// whose values the audit hash redacts (canon.SensitiveKey), so generated
// hashers need not decide it when a gateway starts.
func TestSensitiveInputsAreRecorded(t *testing.T) {
	spec := &openapi.Spec{Kind: openapi.KindOpenAPI31, File: "api.yaml", Title: "Vault", Version: "1",
		Operations: []*openapi.Operation{
			{Path: "/secrets/{owner}", Method: "POST", OperationID: "putSecret",
				Params: []*openapi.Param{
					{Name: "owner", In: "path", Required: true, Schema: str()},
					{Name: "access_token", In: "query", Schema: str()},
					{Name: "X-Session", In: "header", Schema: str()},
				},
				RequestBody: &openapi.RequestBody{Required: true, ContentType: "application/json",
					Schema: obj(nil, map[string]*air.Schema{"Password": str(), "note": str()})},
				Responses: []*openapi.Response{{Status: "204", Description: "Stored."}}},
			{Path: "/notes", Method: "GET", OperationID: "listNotes",
				Params:    []*openapi.Param{{Name: "owner", In: "query", Schema: str()}},
				Responses: []*openapi.Response{{Status: "200", Description: "Notes."}}},
		}}
	doc, ds := Lower(spec, nil, nil)
	if ds.HasErrors() {
		t.Fatal(text(ds))
	}
	if got := strings.Join(doc.Operations[0].Input.Sensitive, " "); got != "Password access_token x_session" {
		t.Errorf("sensitive inputs %q, want Password access_token x_session", got)
	}
	if s := doc.Operations[1].Input.Sensitive; s != nil {
		t.Errorf("an operation without sensitive inputs records %q", s)
	}
}
