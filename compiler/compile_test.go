package compiler

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

const exampleSpec = "../examples/github-mini/openapi.yaml"

// write creates files under a temporary directory and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const splitSpec = `openapi: 3.0.3
info: {title: Split, version: "1"}
paths:
  /things:
    $ref: "../shared/things.yaml"
`

const splitPaths = `get:
  operationId: listThings
  responses:
    "200": {description: ok}
`

func codes(l diag.List) string {
	var out []string
	for _, d := range l {
		out = append(out, string(d.Level)+" "+d.Code)
	}
	return strings.Join(out, ", ")
}

func TestCompileNamesSourcesRelativeToTheSpec(t *testing.T) {
	dir := write(t, map[string]string{"api/openapi.yaml": splitSpec, "shared/things.yaml": splitPaths})
	entry := filepath.Join(dir, "api", "openapi.yaml")
	// Outside the entry's directory a $ref is refused unless a wider base is named.
	if doc, l := Compile(Inputs{Spec: entry}, Options{}); doc != nil || !strings.Contains(codes(l), "error spec/ref_outside_base") {
		t.Fatalf("without a base: doc %v, diagnostics %s", doc, codes(l))
	}
	doc, l := Compile(Inputs{Spec: entry}, Options{Base: dir})
	if doc == nil || l.HasErrors() {
		t.Fatalf("doc %v, diagnostics %s", doc, codes(l))
	}
	if got := doc.Service.Source.URI; got != "openapi.yaml" {
		t.Errorf("source uri %q, want openapi.yaml", got)
	}
	// The operation lives in a file outside the spec's directory: its base name.
	if got := doc.Operations[0].SourceRef.File; got != "things.yaml" {
		t.Errorf("sourceRef.file %q, want things.yaml", got)
	}
	for _, d := range doc.Diagnostics {
		if strings.Contains(d.Path(), dir) {
			t.Errorf("a recorded diagnostic names an absolute path: %+v", d)
		}
	}
}

func TestCompileSameBytesFromAnyDirectory(t *testing.T) {
	abs, err := filepath.Abs(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	render := func(spec string, in fs.FS) []byte {
		t.Helper()
		doc, l := Compile(Inputs{Spec: spec, FS: in, Manifest: "../examples/github-mini/anvil.yaml"}, Options{})
		if doc == nil {
			t.Fatalf("%s: %s", spec, codes(l))
		}
		files, err := air.Files(doc)
		if err != nil {
			t.Fatal(err)
		}
		return files[air.DocumentFile]
	}
	data, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	rel, byAbs := render(exampleSpec, nil), render(abs, nil)
	inFS := render("openapi.yaml", fstest.MapFS{"openapi.yaml": {Data: data}})
	if string(rel) != string(byAbs) || string(rel) != string(inFS) {
		t.Error("the same description compiled from a relative path, an absolute path and a file system gives different AIR")
	}
}

func TestCompileRefusals(t *testing.T) {
	dangling := strings.Replace(splitSpec, "../shared/things.yaml", "./shared/missing.yaml", 1)
	dir := write(t, map[string]string{"openapi.yaml": dangling, "bad.yaml": "service: [", "ok.yaml": "{}\n"})
	for _, tc := range []struct {
		name string
		in   Inputs
		opts Options
		code string
	}{
		{"unreadable spec", Inputs{Spec: filepath.Join(dir, "missing.yaml")}, Options{}, "spec/unreadable"},
		{"dangling $ref", Inputs{Spec: filepath.Join(dir, "openapi.yaml")}, Options{}, "spec/dangling_ref"},
		{"bad manifest", Inputs{Spec: exampleSpec, Manifest: filepath.Join(dir, "bad.yaml")}, Options{}, "manifest/parse_error"},
		{"missing manifest", Inputs{Spec: exampleSpec, Manifest: filepath.Join(dir, "none.yaml")}, Options{}, "manifest/read_error"},
		{"bad endpoint", Inputs{Spec: exampleSpec}, Options{Endpoint: "ftp://x"}, CodeInvalidEndpoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, l := Compile(tc.in, tc.opts)
			if doc != nil {
				t.Fatalf("compiled despite %s", tc.code)
			}
			if !strings.Contains(codes(l), "error "+tc.code) {
				t.Errorf("diagnostics %q lack error %s", codes(l), tc.code)
			}
		})
	}
}

func TestCompileOptions(t *testing.T) {
	var read []string
	loaded := 0
	doc, l := Compile(Inputs{Spec: exampleSpec}, Options{
		ServiceID: "gh",
		Endpoint:  "https://api.example.test/v3",
		OnRead:    func(name string, _ []byte) { read = append(read, name) },
		OnLoaded:  func(*openapi.Spec) { loaded++ },
	})
	if doc == nil || l.HasErrors() {
		t.Fatalf("%s", codes(l))
	}
	if doc.Service.ID != "gh" || len(doc.Service.Servers) != 1 || doc.Service.Servers[0].URL != "https://api.example.test/v3" {
		t.Errorf("service %+v", doc.Service)
	}
	if len(read) != 1 || loaded != 1 {
		t.Errorf("read %v, loaded %d times", read, loaded)
	}
}
