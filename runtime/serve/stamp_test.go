package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// stampWorkspace is a workspace of n copies of the fixture bundle.
func stampWorkspace(t testing.TB, n int) string {
	ws := t.TempDir()
	for i := 0; i < n; i++ {
		dir := filepath.Join(ws, fmt.Sprintf("b%02d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"air.json", "generation.json"} {
			b, err := os.ReadFile(filepath.Join("testdata/workspace/github", name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ws
}

// TestWorkspaceStamp: every change fleet.Load would see changes the stamp.
func TestWorkspaceStamp(t *testing.T) {
	ws := stampWorkspace(t, 2)
	s0 := workspaceStamp(ws)
	if workspaceStamp(ws) != s0 {
		t.Fatal("the stamp of an unchanged workspace changed")
	}
	gen := filepath.Join(ws, "b00", "generation.json")
	b, _ := os.ReadFile(gen)
	tmp := gen + ".tmp"
	_ = os.WriteFile(tmp, b, 0o644)
	if err := os.Rename(tmp, gen); err != nil { // same bytes, another inode
		t.Fatal(err)
	}
	s1 := workspaceStamp(ws)
	if s1 == s0 {
		t.Error("replacing generation.json did not change the stamp")
	}
	if err := os.RemoveAll(filepath.Join(ws, "b01")); err != nil {
		t.Fatal(err)
	}
	if workspaceStamp(ws) == s1 {
		t.Error("removing a bundle did not change the stamp")
	}
}

func BenchmarkWorkspaceStamp50(b *testing.B) {
	ws := stampWorkspace(b, 50)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		workspaceStamp(ws)
	}
}
