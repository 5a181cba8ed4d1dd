package realspec

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestServiceID(t *testing.T) {
	for in, want := range map[string]string{
		"github":                            "github",
		"msgraph-beta":                      "msgraph",
		"github-old":                        "github",
		"examples/github-mini/openapi.yaml": "openapi",
		"Stripe.json":                       "stripe",
		"3scale_v2.json":                    "scalev2",
		"-":                                 "api",
	} {
		if got := ServiceID(in); got != want {
			t.Errorf("ServiceID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"github.json", "x.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "stripe.json"), 0o755); err != nil { // not a file
		t.Fatal(err)
	}
	other := filepath.Join(dir, "x.yaml")
	specs, missing := Resolve(dir, "github, ,msgraph-beta,stripe,"+other)
	want := []Spec{
		{Name: "github", Path: filepath.Join(dir, "github.json"), Service: "github"},
		{Name: other, Path: other, Service: "x"},
	}
	if !reflect.DeepEqual(specs, want) {
		t.Errorf("specs = %+v, want %+v", specs, want)
	}
	wantMissing := []string{filepath.Join(dir, "msgraph-beta.json"), filepath.Join(dir, "stripe.json")}
	if !reflect.DeepEqual(missing, wantMissing) {
		t.Errorf("missing = %v, want %v", missing, wantMissing)
	}
	for name, want := range map[string]string{"msgraph-beta": "msgraph beta (full)", "a-b/c-d.json": "a-b/c-d.json (full)"} {
		if l := (Spec{Name: name}).Label(); l != want {
			t.Errorf("Label of %q = %q, want %q", name, l, want)
		}
	}
}

func TestSize(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "schemas"), 0o755); err != nil {
		t.Fatal(err)
	}
	for f, n := range map[string]int{"air.json": 10, "schemas/a.json": 5, "schemas/b.json": 0} {
		if err := os.WriteFile(filepath.Join(dir, f), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("air.json", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	b, n, err := Size(dir)
	if err != nil || b != 15 || n != 3 {
		t.Errorf("Size = %d, %d, %v; want 15 bytes in 3 files", b, n, err)
	}
	if _, _, err := Size(filepath.Join(dir, "absent")); err == nil {
		t.Error("Size of an absent directory: no error")
	}
}
