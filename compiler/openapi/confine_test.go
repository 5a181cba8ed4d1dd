package openapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refTree lays out, under a fresh directory d:
//
//	d/secret.yaml               outside the spec's directory
//	d/outdir/x.yaml             outside too
//	d/spec/openapi.yaml         the entry document, with the $ref given
//	d/spec/ok.yaml              inside
//	d/spec/sub/deep.yaml        inside
//	d/spec/alias.yaml -> ok.yaml           a link that stays inside
//	d/spec/leak.yaml -> ../secret.yaml     a link that leaves
//	d/spec/linkdir -> ../outdir            a directory link that leaves
//
// and returns d.
func refTree(t testing.TB, ref string) string {
	t.Helper()
	d := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(d, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	obj := "description: p\ncontent:\n  application/json:\n    schema: {type: object}\n"
	write("secret.yaml", obj)
	write("outdir/x.yaml", obj)
	write("spec/ok.yaml", obj)
	write("spec/sub/deep.yaml", obj)
	write("spec/openapi.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          $ref: '"+strings.ReplaceAll(ref, "'", "''")+"'\n")
	for link, target := range map[string]string{"spec/alias.yaml": "ok.yaml", "spec/leak.yaml": "../secret.yaml", "spec/linkdir": "../outdir"} {
		if err := os.Symlink(target, filepath.Join(d, filepath.FromSlash(link))); err != nil {
			t.Skipf("symbolic links unavailable: %v", err)
		}
	}
	return d
}

// loadRecording loads d/spec/openapi.yaml with base and returns the names
// of the files read besides the entry document.
func loadRecording(d, base string) ([]string, error) {
	var read []string
	entry := filepath.Join(d, "spec", "openapi.yaml")
	_, err := Load(entry, &Options{Base: base, OnRead: func(name string, _ []byte) {
		if name != filepath.ToSlash(entry) {
			read = append(read, name)
		}
	}})
	return read, err
}

// TestRefOutsideBaseRefused is the regression test for finding 1 of issue
// 15: a relative $ref that leaves the spec's directory (lexically or through
// a symbolic link) is a coded error with its position, and nothing outside is
// read.
func TestRefOutsideBaseRefused(t *testing.T) {
	for _, ref := range []string{
		"../secret.yaml",
		"sub/../../secret.yaml",
		"%2e%2e/secret.yaml",
		"./../outdir/x.yaml",
		"leak.yaml",
		"linkdir/x.yaml",
		"../../../../../../../../etc/passwd",
	} {
		t.Run(ref, func(t *testing.T) {
			d := refTree(t, ref)
			read, err := loadRecording(d, "")
			assertFailure(t, err, CodeRefOutsideBase, filepath.ToSlash(filepath.Join(d, "spec", "openapi.yaml"))+":8:17", "refused")
			if len(read) != 0 {
				t.Errorf("read %v", read)
			}
		})
	}
}

func TestRefInsideBaseAccepted(t *testing.T) {
	for _, ref := range []string{"ok.yaml", "./sub/../ok.yaml", "sub/deep.yaml", "alias.yaml", "%6fk.yaml"} {
		t.Run(ref, func(t *testing.T) {
			d := refTree(t, ref)
			if read, err := loadRecording(d, ""); err != nil || len(read) != 1 {
				t.Errorf("read %v, err %v", read, err)
			}
		})
	}
}

// TestSpecBaseWidens checks that Options.Base (the --spec-base flag) admits
// files under it, still refuses what leaves it, and must hold the entry.
func TestSpecBaseWidens(t *testing.T) {
	for _, ref := range []string{"../secret.yaml", "leak.yaml", "linkdir/x.yaml"} {
		d := refTree(t, ref)
		if read, err := loadRecording(d, d); err != nil || len(read) != 1 {
			t.Errorf("%s with base %s: read %v, err %v", ref, d, read, err)
		}
	}
	d := refTree(t, "../../x.yaml")
	_, err := loadRecording(d, d)
	assertFailure(t, err, CodeRefOutsideBase, filepath.ToSlash(filepath.Join(d, "spec", "openapi.yaml"))+":8:17", "outside the base directory")
	_, err = loadRecording(d, filepath.Join(d, "outdir"))
	assertFailure(t, err, CodeRefOutsideBase, filepath.ToSlash(filepath.Join(d, "spec", "openapi.yaml")), "the entry document")
}

// TestFSRefusesSymlinks: a file system (a source snapshot) never holds
// symbolic links, so the loader follows none.
func TestFSRefusesSymlinks(t *testing.T) {
	d := refTree(t, "alias.yaml")
	_, err := Load("spec/openapi.yaml", &Options{FS: os.DirFS(d)})
	assertFailure(t, err, CodeRefOutsideBase, "spec/openapi.yaml:8:17", "spec/alias.yaml is a symbolic link")
	d = refTree(t, "../secret.yaml")
	if _, err := Load("spec/openapi.yaml", &Options{FS: os.DirFS(d)}); err != nil {
		t.Errorf("the FS root is the default base: %v", err)
	}
	_, err = Load("spec/openapi.yaml", &Options{FS: os.DirFS(d), Base: "spec"})
	assertFailure(t, err, CodeRefOutsideBase, "spec/openapi.yaml:8:17", "outside the base directory spec")
}

// FuzzRefConfinement: whatever the $ref, every file read lies inside the
// base once symbolic links are resolved.
func FuzzRefConfinement(f *testing.F) {
	for _, s := range []string{"ok.yaml", "../secret.yaml", "leak.yaml", "linkdir/x.yaml", "sub/../../secret.yaml",
		"%2e%2e/secret.yaml", "sub/%2E%2E/%2e%2e/secret.yaml", "alias.yaml#/description", ".//../spec/../secret.yaml", "sub/..%2f..%2fsecret.yaml",
		"linkdir/../spec/ok.yaml", "spec/../../secret.yaml", "\\..\\secret.yaml", "file:../secret.yaml"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		if len(ref) > 200 || strings.ContainsAny(ref, "\x00\n\r") {
			return
		}
		d := refTree(t, ref)
		base, err := filepath.EvalSymlinks(filepath.Join(d, "spec"))
		if err != nil {
			t.Fatal(err)
		}
		read, _ := loadRecording(d, "")
		for _, name := range read {
			real, err := filepath.EvalSymlinks(filepath.FromSlash(name))
			if err != nil || !withinOS(base, real) {
				t.Fatalf("$ref %q read %s (%s), outside %s", ref, name, real, base)
			}
		}
	})
}
