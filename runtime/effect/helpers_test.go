package effect

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// loadOps reads the github-mini operations fixture (AIR shape, the fields
// this package reads) by AIR id.
func loadOps(t testing.TB) map[string]*air.Operation {
	t.Helper()
	b, err := os.ReadFile("testdata/github-mini.operations.json")
	if err != nil {
		t.Fatal(err)
	}
	var ops []air.Operation
	if err := json.Unmarshal(b, &ops); err != nil {
		t.Fatal(err)
	}
	out := map[string]*air.Operation{}
	for i := range ops {
		out[ops[i].ID] = &ops[i]
	}
	return out
}

// fleetTools serves every fixture operation as github__<toolName>, except
// the ids in hidden.
func fleetTools(ops map[string]*air.Operation, hidden ...string) ToolMap {
	m := ToolMap{}
	for id, op := range ops {
		m[id] = "github__" + op.MCP.ToolName
	}
	for _, h := range hidden {
		delete(m, h)
	}
	return m
}

// decode decodes JSON as the gateway does by default (numbers as float64).
func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func decodeNumber(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	m, ok := decode(t, s).(map[string]any)
	if !ok {
		t.Fatalf("%s is not an object", s)
	}
	return m
}

func marshal(t testing.TB, r *Report) string {
	t.Helper()
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("invalid JSON: %s", b)
	}
	return string(b)
}

// objectKeys returns the keys of the JSON object at the top of b, in order.
func objectKeys(t testing.TB, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		t.Fatalf("not an object: %s", b)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
