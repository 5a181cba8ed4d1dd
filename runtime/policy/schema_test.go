package policy

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/anvil-dev/anvil/schemas"
)

// schemaDefs is the policy schema's $defs.
func schemaDefs(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(schemas.Policy, &doc); err != nil {
		t.Fatal(err)
	}
	return doc["$defs"].(map[string]any)
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestSchemaAgreesWithDecoder: every block of the decoder's grammar is a
// $defs entry of the schema with the same keys, the same required keys
// and, for enumerated keys, the same values; the schema forbids other keys.
func TestSchemaAgreesWithDecoder(t *testing.T) {
	defs := schemaDefs(t)
	for block, keys := range blockKeys {
		def, ok := defs[block].(map[string]any)
		if !ok {
			t.Errorf("the schema has no $defs/%s", block)
			continue
		}
		if def["additionalProperties"] != false {
			t.Errorf("$defs/%s allows other keys", block)
		}
		props := def["properties"].(map[string]any)
		if got, want := keysOf(props), sorted(keys); !slices.Equal(got, want) {
			t.Errorf("$defs/%s keys %v, the decoder's %v", block, got, want)
		}
		var req []string
		if r, ok := def["required"]; ok {
			req = strs(r)
		}
		if got, want := sorted(req), sorted(requiredKeys[block]); !slices.Equal(got, want) {
			t.Errorf("$defs/%s requires %v, the decoder %v", block, got, want)
		}
	}
	for path, want := range enums {
		var block, key string
		for i := range path {
			if path[i] == '.' {
				block, key = path[:i], path[i+1:]
			}
		}
		prop := defs[block].(map[string]any)["properties"].(map[string]any)[key].(map[string]any)
		if items, ok := prop["items"].(map[string]any); ok {
			prop = items
		}
		if got := strs(prop["enum"]); !slices.Equal(got, want) {
			t.Errorf("%s: the schema's enum %v, the decoder's %v", path, got, want)
		}
	}
}

// validate reports whether a YAML policy validates against the schema.
func validate(t *testing.T, sch *jsonschema.Schema, doc []byte) error {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

// TestSchemaJudgesAlike: a policy the decoder takes validates, and
// policies it refuses for their shape fail the schema too.
func TestSchemaJudgesAlike(t *testing.T) {
	sch, err := schemas.CompilePolicy()
	if err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, sch, full); err != nil {
		t.Errorf("testdata/full.yaml: %v", err)
	}
	issuer := "issuers: [{issuer: \"https://idp.example\"}]\n"
	for _, doc := range []string{
		"version: 1\n" + issuer + "rules: []\nextra: 1\n",
		"version: 2\n" + issuer + "rules: []\n",
		"version: 1\nrules: []\n",
		"version: 1\nissuers: [{issuer: \"http://idp.example\"}]\nrules: []\n",
		"version: 1\nissuers: [{issuer: \"https://i\", algorithms: [HS256]}]\nrules: []\n",
		"version: 1\n" + issuer + "rules: [{name: r, match: {}}]\n",
		"version: 1\n" + issuer + "rules: [{name: r, match: {groups: []}, connect: true}]\n",
		"version: 1\n" + issuer + "rules: [{name: r, match: {}, grants: [{connector: g, operations: [\"*\"], mode: admin}]}]\n",
		"version: 1\n" + issuer + "rules: []\nupstreams: {g: {token_exchange: {client_id: c, client_secret_env: \"a b\", audience: a}}}\n",
	} {
		if _, err := Decode("p.yaml", []byte(doc)); err == nil {
			t.Errorf("the decoder takes\n%s", doc)
		}
		if err := validate(t, sch, []byte(doc)); err == nil {
			t.Errorf("the schema takes\n%s", doc)
		}
	}
}
