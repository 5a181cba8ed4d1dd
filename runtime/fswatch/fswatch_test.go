package fswatch

import (
	"path/filepath"
	"testing"
)

func TestNilAndInert(t *testing.T) {
	var h *Handle
	if h.Stamp() != 0 {
		t.Error("nil handle: Stamp != 0")
	}
	dir := t.TempDir()
	for name, w := range map[string]*Watcher{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			w.Poll()
			if s := w.File(filepath.Join(dir, "f"), true).Stamp(); s != 0 {
				t.Errorf("File stamp = %d, want 0", s)
			}
			if s := w.Dir(dir, false).Stamp(); s != 0 {
				t.Errorf("Dir stamp = %d, want 0", s)
			}
			if err := w.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

func TestAncestors(t *testing.T) {
	if filepath.Separator != '/' {
		t.Skip("POSIX paths")
	}
	tests := map[string][]string{
		"/":         nil,
		"/a":        nil,
		"/a/b":      {"/a"},
		"/a/b/c/d":  {"/a", "/a/b", "/a/b/c"},
		"/tmp/x/yy": {"/tmp", "/tmp/x"},
	}
	for dir, want := range tests {
		got := ancestors(dir)
		if len(got) != len(want) {
			t.Errorf("ancestors(%q) = %q, want %q", dir, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("ancestors(%q) = %q, want %q", dir, got, want)
				break
			}
		}
	}
}
