package files

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeUser(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSyncKeepsEveryFileItDidNotGenerate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pkg")
	first := Tree{}
	first.Add("harness.json", []byte("{}\n"))
	first.Add("typescript/src/index.ts", []byte("export {};\n"))
	first.Add("schemas/old_op.schema.json", []byte("{}\n"))
	first.Add("python/anvil_x/_methods/m01.py", []byte("# m01\n"))
	first.AddMode("bin/x", []byte("#!/bin/sh\n"), 0o755)
	if err := first.Sync(dir, "anvil-generated.json"); err != nil {
		t.Fatal(err)
	}
	// What a person does with a package: install, build, add their own files,
	// some beside generated ones.
	user := map[string]string{
		"typescript/node_modules/dep/index.js": "module.exports = 1;\n",
		"typescript/dist/index.js":             "export {};\n",
		"typescript/src/my_test.ts":            "// mine\n",
		"test.mjs":                             "// my test script\n",
		"schemas/notes.md":                     "my notes\n",
	}
	for name, data := range user {
		writeUser(t, dir, name, data)
	}
	indexStat, _ := os.Stat(filepath.Join(dir, "typescript/src/index.ts"))
	time.Sleep(10 * time.Millisecond)

	second := Tree{}
	second.Add("harness.json", []byte("{\"v\":2}\n"))
	second.Add("typescript/src/index.ts", []byte("export {};\n")) // unchanged: not rewritten
	second.Add("schemas/new_op.schema.json", []byte("{}\n"))
	second.AddMode("bin/x", []byte("#!/bin/sh\necho 2\n"), 0o755)
	if err := second.Sync(dir, "anvil-generated.json"); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range got.Names() {
		names = append(names, n)
	}
	want := []string{"anvil-generated.json", "bin/x", "harness.json", "schemas/new_op.schema.json", "schemas/notes.md",
		"test.mjs", "typescript/dist/index.js", "typescript/node_modules/dep/index.js", "typescript/src/index.ts", "typescript/src/my_test.ts"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("after the second Sync:\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	for name, data := range user {
		if string(got[name].Data) != data {
			t.Errorf("%s changed: %q", name, got[name].Data)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "python")); !os.IsNotExist(err) {
		t.Errorf("the directories the removed python/anvil_x/_methods/m01.py leaves empty are still there (%v)", err)
	}
	if string(got["harness.json"].Data) != "{\"v\":2}\n" || got["bin/x"].Mode != 0o755 {
		t.Errorf("generated files not replaced: %q %v", got["harness.json"].Data, got["bin/x"].Mode)
	}
	if st, _ := os.Stat(filepath.Join(dir, "typescript/src/index.ts")); !st.ModTime().Equal(indexStat.ModTime()) {
		t.Errorf("an unchanged generated file was rewritten")
	}
	m, err := ReadManifest(filepath.Join(dir, "anvil-generated.json"))
	if err != nil || m == nil || len(m.Files) != 4 || m.Files[0].Path != "bin/x" || m.Files[0].Mode != "0755" {
		t.Errorf("manifest %+v, %v", m, err)
	}
}

func TestSyncRefusesBeforeWritingAnything(t *testing.T) {
	for name, setup := range map[string]func(t *testing.T, dir, outside string){
		"symlinked directory": func(t *testing.T, dir, outside string) {
			if err := os.Symlink(outside, filepath.Join(dir, "python")); err != nil {
				t.Fatal(err)
			}
		},
		"directory at a file's path": func(t *testing.T, dir, outside string) {
			writeUser(t, dir, "harness.json/inside", "x")
		},
		"file at a directory's path": func(t *testing.T, dir, outside string) {
			writeUser(t, dir, "python", "x")
		},
		"malformed manifest": func(t *testing.T, dir, outside string) {
			writeUser(t, dir, "anvil-generated.json", `{"schema":"anvil.generated/v1","files":[{"path":"../escape"}]}`)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			setup(t, dir, outside)
			before, _ := Read(dir)
			tree := Tree{}
			tree.Add("a.txt", []byte("a"))
			tree.Add("harness.json", []byte("{}"))
			tree.Add("python/pkg/__init__.py", []byte(""))
			if err := tree.Sync(dir, "anvil-generated.json"); err == nil {
				t.Fatal("Sync succeeded")
			}
			after, _ := Read(dir)
			if !reflect.DeepEqual(before, after) {
				t.Errorf("a refused Sync changed the directory: %v → %v", before.Names(), after.Names())
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("wrote through the link")
			}
		})
	}
}

func TestSyncTreatsAPackageWithoutManifestAsTheUsers(t *testing.T) {
	dir := t.TempDir()
	writeUser(t, dir, "harness.json", "old")
	writeUser(t, dir, "schemas/gone.schema.json", "old")
	tree := Tree{}
	tree.Add("harness.json", []byte("new"))
	if err := tree.Sync(dir, "anvil-generated.json"); err != nil {
		t.Fatal(err)
	}
	got, _ := Read(dir)
	if string(got["harness.json"].Data) != "new" || string(got["schemas/gone.schema.json"].Data) != "old" {
		t.Errorf("%v", got.Names())
	}
}
