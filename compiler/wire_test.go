package compiler

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// TestRecordedWireReadsAsBefore: lowering records each parameter's style
// and explode and each body's encoding and Content-Type; a document that
// predates those fields is read with air.ParamWire / air.BodyWire. For
// every operation of the example (and the real-world descriptions under
// ANVIL_SPECS_DIR), the upstream request built from the recorded document
// and from the same document with the fields stripped is byte-identical.
func TestRecordedWireReadsAsBefore(t *testing.T) {
	specs := []string{exampleSpec}
	if dir := os.Getenv("ANVIL_SPECS_DIR"); dir != "" {
		for _, n := range []string{"stripe.json", "jira.json"} {
			if p := filepath.Join(dir, n); fileExists(p) {
				specs = append(specs, p)
			}
		}
	}
	for _, spec := range specs {
		t.Run(filepath.Base(spec), func(t *testing.T) {
			doc, l := Compile(Inputs{Spec: spec}, Options{})
			if doc == nil {
				t.Fatalf("%s", codes(l))
			}
			recorded := 0
			for i := range doc.Operations {
				op := &doc.Operations[i]
				legacy := stripWire(op)
				for _, p := range op.Input.Params {
					if p.Style == "" || p.Explode == nil {
						t.Fatalf("%s: parameter %s has no recorded style", op.ID, p.Name)
					}
					recorded++
				}
				if bd := op.Input.Body; bd != nil && bd.Encoding == "" {
					t.Fatalf("%s: body has no recorded encoding", op.ID)
				}
				args := sampleArgs(op)
				a := requestBytes(t, op, args)
				b := requestBytes(t, legacy, args)
				if a != b {
					t.Errorf("%s: recorded and legacy documents build different requests:\n%s\n---\n%s", op.ID, a, b)
				}
			}
			if recorded == 0 {
				t.Fatal("no parameters compared")
			}
		})
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// stripWire is op as a document that predates the recorded wire fields
// holds it: the description's own style words are gone too (lowering used
// to copy them; a missing one reads the same).
func stripWire(op *air.Operation) *air.Operation {
	c := *op
	c.Input.Params = append([]air.Param(nil), op.Input.Params...)
	for i := range c.Input.Params {
		c.Input.Params[i].Style, c.Input.Params[i].Explode = "", nil
	}
	if op.Input.Body != nil {
		bd := *op.Input.Body
		bd.Encoding, bd.SendContentType = "", ""
		c.Input.Body = &bd
	}
	return &c
}

// sampleArgs gives every input a value that exercises its serialisation:
// arrays for parameters (joined or exploded by style), an object for a
// whole body.
func sampleArgs(op *air.Operation) map[string]any {
	args := map[string]any{}
	for _, p := range op.Input.Params {
		key := p.Key
		if key == "" {
			key = p.Name
		}
		if p.In == "path" {
			args[key] = "a b/c"
			continue
		}
		args[key] = []any{"x y", "z"}
	}
	if bd := op.Input.Body; bd != nil {
		for _, f := range bd.Fields {
			args[f.Key] = map[string]any{"k": []any{1, "v"}}
		}
		if bd.Projection == air.ProjectionWhole && len(bd.Fields) == 0 {
			args["body"] = map[string]any{"k": "v", "n": 1}
		}
	}
	return args
}

func requestBytes(t *testing.T, op *air.Operation, args map[string]any) string {
	t.Helper()
	req, err := upstream.BuildRequest(context.Background(), "https://api.example.test/base", op, args)
	if err != nil {
		return "error: " + err.Error()
	}
	var buf bytes.Buffer
	buf.WriteString(req.Method + " " + req.URL.String() + "\n")
	req.Header.Write(&buf)
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		buf.Write(b)
	}
	return buf.String()
}
