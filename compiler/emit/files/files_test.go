package files

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteToReplacesAtomically(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	first := Tree{}
	first.Add("a.txt", []byte("one"))
	first.AddMode("bin/tool", []byte("#!/bin/sh\n"), 0o755)
	if err := first.WriteTo(dir); err != nil {
		t.Fatal(err)
	}
	second := Tree{}
	second.Add("b/c.txt", []byte("two"))
	if err := second.WriteTo(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got["b/c.txt"].Data) != "two" {
		t.Errorf("after replace: %v", got.Names())
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Errorf("left %d entries beside the output (temporary directories)", len(entries))
	}
	first.WriteTo(dir)
	if st, _ := os.Stat(filepath.Join(dir, "bin/tool")); st.Mode().Perm() != 0o755 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestWriteToRefusesBadPathsAndKeepsOld(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ok := Tree{}
	ok.Add("keep.txt", []byte("x"))
	if err := ok.WriteTo(dir); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../escape", "/abs", "a/../../b", "", "a\\b", "./a"} {
		tr := Tree{}
		tr.Add("fine.txt", []byte("y"))
		tr.Add(bad, []byte("z"))
		if err := tr.WriteTo(dir); err == nil {
			t.Errorf("%q accepted", bad)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "keep.txt")); err != nil || string(b) != "x" {
			t.Errorf("%q: the previous tree was damaged", bad)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("failed writes left %d entries", len(entries))
	}
}

func TestWriteFilesKeepsTheRestOfTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pkg", "SKILL.md"), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := Tree{}
	tr.Add("INDEX.md", []byte("one"))
	if err := tr.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	tr.Add("INDEX.md", []byte("two"))
	if err := tr.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got["INDEX.md"].Data) != "two" || string(got["pkg/SKILL.md"].Data) != "other" {
		t.Errorf("after WriteFiles: %v", got.Bytes())
	}
	bad := Tree{}
	bad.Add("fine.txt", []byte("y"))
	bad.Add("../escape", []byte("z"))
	if err := bad.WriteFiles(dir); err == nil {
		t.Error("../escape accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "fine.txt")); err == nil {
		t.Error("a refused tree was partly written")
	}
}
