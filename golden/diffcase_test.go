package golden

import (
	"strings"
	"testing"
)

func TestApplyUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\n"
	for _, c := range []struct{ name, diff, want, err string }{
		{"change", "--- a/x\n+++ b/x\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n", "a\nb\nC\nd\ne\n", ""},
		{"two hunks", "@@ -1,1 +1,2 @@\n a\n+a2\n@@ -5,1 +6,1 @@\n-e\n+E\n", "a\na2\nb\nc\nd\nE\n", ""},
		{"insert at top", "@@ -0,0 +1,1 @@\n+top\n", "top\na\nb\nc\nd\ne\n", ""},
		{"delete all", "@@ -1,5 +0,0 @@\n-a\n-b\n-c\n-d\n-e\n", "", ""},
		{"context mismatch", "@@ -2,2 +2,2 @@\n x\n-c\n+C\n", "", `" x" does not match line 2`},
		{"past the end", "@@ -9,1 +9,1 @@\n-z\n+Z\n", "", "past the end"},
		{"out of order", "@@ -4,1 +4,1 @@\n-d\n+D\n@@ -1,1 +1,1 @@\n-a\n+A\n", "", "out of order"},
		{"bad header", "@@ -x +1 @@\n", "", "bad start line"},
		{"stray line", "@@ -1,1 +1,1 @@\n-a\n+A\n?? what\n", "", "not a hunk line"},
		{"no final newline", "@@ -5,1 +5,1 @@\n-e\n+E\n\\ No newline at end of file\n", "", "final newline"},
	} {
		got, err := ApplyUnifiedDiff([]byte(old), []byte(c.diff))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// Every case resolves: its diffs fit its old side and change something.
func TestEveryDiffCaseResolves(t *testing.T) {
	kinds, err := DiffKinds()
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) < 30 {
		t.Fatalf("%d cases", len(kinds))
	}
	for _, k := range kinds {
		c, err := ReadDiffCase(k)
		if err != nil {
			t.Errorf("%s: %v", k, err)
			continue
		}
		if string(c.OldSpec) == string(c.NewSpec) && string(c.OldManifest) == string(c.NewManifest) {
			t.Errorf("%s: both sides are the same", k)
		}
	}
}
