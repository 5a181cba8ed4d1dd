package embed

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// variant makes a model directory whose files link to the fetched model's,
// except those edit replaces (name → new contents).
func variant(t *testing.T, edit map[string][]byte) string {
	t.Helper()
	src := modelDir(t)
	abs, err := filepath.Abs(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	entries, err := os.ReadDir(abs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := edit[e.Name()]; ok {
			continue
		}
		if err := os.Symlink(filepath.Join(abs, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range edit {
		if b == nil {
			continue // removed
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// editModel returns model.json with edit applied to its decoded form.
func editModel(t *testing.T, edit func(g map[string]any)) []byte {
	t.Helper()
	var g map[string]any
	if err := json.Unmarshal(read(t, "model.json"), &g); err != nil {
		t.Fatal(err)
	}
	edit(g)
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// node returns the graph's node i and weight i of the manifest's group.
func nodeAt(g map[string]any, i int) map[string]any {
	return g["modelTopology"].(map[string]any)["node"].([]any)[i].(map[string]any)
}

func weightAt(g map[string]any, i int) map[string]any {
	return g["weightsManifest"].([]any)[0].(map[string]any)["weights"].([]any)[i].(map[string]any)
}

// weightNamed returns the manifest entry of the weight name.
func weightNamed(g map[string]any, name string) map[string]any {
	for _, w := range g["weightsManifest"].([]any)[0].(map[string]any)["weights"].([]any) {
		if w.(map[string]any)["name"] == name {
			return w.(map[string]any)
		}
	}
	panic("no weight " + name)
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(modelDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadRejects: every damaged or foreign model is a coded *Error, never
// a panic or a model that computes something else.
func TestLoadRejects(t *testing.T) {
	model := read(t, "model.json")
	vocabJSON := read(t, "vocab.json")
	shard := read(t, "group1-shard7of7")
	cases := []struct {
		name string
		edit map[string][]byte
		code string
	}{
		{"no model.json", map[string][]byte{"model.json": nil}, CodeRead},
		{"no vocab.json", map[string][]byte{"vocab.json": nil}, CodeRead},
		{"a missing shard", map[string][]byte{"group1-shard3of7": nil}, CodeRead},
		{"a truncated shard", map[string][]byte{"group1-shard7of7": shard[:len(shard)-4]}, CodeManifest},
		{"a longer shard", map[string][]byte{"group1-shard7of7": append(bytes.Clone(shard), 0, 0, 0, 0)}, CodeManifest},
		{"model.json not JSON", map[string][]byte{"model.json": model[:1000]}, CodeSyntax},
		{"model.json too large", map[string][]byte{"model.json": bytes.Repeat([]byte(" "), MaxModelJSONBytes+1)}, CodeTooLarge},
		{"an op the forward pass lacks", map[string][]byte{"model.json": editModel(t, func(g map[string]any) { nodeAt(g, 5)["op"] = "Sigmoid" })}, CodeGraph},
		{"no nodes", map[string][]byte{"model.json": []byte(`{"modelTopology": {"node": []}}`)}, CodeGraph},
		{"a shard path outside the directory", map[string][]byte{"model.json": editModel(t, func(g map[string]any) {
			g["weightsManifest"].([]any)[0].(map[string]any)["paths"].([]any)[0] = "../group1-shard1of7"
		})}, CodeManifest},
		{"a quantized weight", map[string][]byte{"model.json": editModel(t, func(g map[string]any) {
			weightAt(g, 0)["quantization"] = map[string]any{"dtype": "uint8"}
		})}, CodeManifest},
		{"an int64 weight", map[string][]byte{"model.json": editModel(t, func(g map[string]any) { weightAt(g, 0)["dtype"] = "int64" })}, CodeManifest},
		{"a huge dimension", map[string][]byte{"model.json": editModel(t, func(g map[string]any) {
			weightNamed(g, nEmbeddings)["shape"] = []any{8002000000, 256}
		})}, CodeManifest},
		{"a negative dimension", map[string][]byte{"model.json": editModel(t, func(g map[string]any) {
			weightNamed(g, nEmbeddings)["shape"] = []any{-8002, -256}
		})}, CodeManifest},
		{"a transposed kernel", map[string][]byte{"model.json": editModel(t, func(g map[string]any) {
			weightNamed(g, nTanhW)["shape"] = []any{256, 1024}
		})}, CodeShape},
		{"a renamed weight", map[string][]byte{"model.json": editModel(t, func(g map[string]any) { weightNamed(g, nTanhB)["name"] = "other" })}, CodeShape},
		{"a float head count", map[string][]byte{"model.json": editModel(t, func(g map[string]any) { weightNamed(g, nHeads)["dtype"] = "float32" })}, CodeShape},
		{"vocab.json not pairs", map[string][]byte{"vocab.json": []byte(`{"a": 1}`)}, CodeSyntax},
		{"vocab.json larger than the table", map[string][]byte{"vocab.json": []byte(`[` + strings.Repeat(`["a", -1],`, 9000) + `["b", -1]]`)}, CodeVocab},
		{"vocab.json too large", map[string][]byte{"vocab.json": append(bytes.Repeat([]byte(" "), MaxVocabBytes), vocabJSON...)}, CodeTooLarge},
		{"a non-finite score", map[string][]byte{"vocab.json": []byte(`[["a",0],["b",0],["c",0],["d",0],["e",0],["f",0],["g", "x"]]`)}, CodeVocab},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Load(variant(t, c.edit))
			var e *Error
			if m != nil || !errors.As(err, &e) || e.Code != c.code || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Load = %T, %v; want a *Error coded %s", m, err, c.code)
			}
		})
	}
}

// TestLoadShapes: the shipped model binds with the sizes of USE lite.
func TestLoadShapes(t *testing.T) {
	m := loadShared(t)
	if m.vocabRows != 8002 || m.width != 256 || m.maxLen != 128 || m.layers[0].heads != 4 ||
		m.layers[0].headDim != 64 || m.layers[1].headDim != 128 || m.layers[0].hidden != 1536 || len(m.vocab.scores) != 8000 {
		t.Fatalf("rows %d width %d maxLen %d heads %d headDims %d/%d hidden %d pieces %d",
			m.vocabRows, m.width, m.maxLen, m.layers[0].heads, m.layers[0].headDim, m.layers[1].headDim, m.layers[0].hidden, len(m.vocab.scores))
	}
}

// BenchmarkLoad reports Load's time and the heap a loaded model keeps
// (retained-B).
func BenchmarkLoad(b *testing.B) {
	dir := modelDir(b)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(m)
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "retained-B")
}
