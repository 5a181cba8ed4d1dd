package endtoend

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/golden"
)

// The harness's own checks: each would let a broken case pass if it did not
// report what it is there to report.

func TestSplitArgs(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{"compile spec.yaml --out out", []string{"compile", "spec.yaml", "--out", "out"}},
		{"  init\ta  ", []string{"init", "a"}},
		{`approve b 'a b' "c d"e ''`, []string{"approve", "b", "a b", "c de", ""}},
	} {
		got, err := splitArgs(c.line)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q", c.line, got, err, c.want)
		}
	}
	if _, err := splitArgs(`compile 'spec.yaml`); err == nil {
		t.Error("an unclosed quote was accepted")
	}
}

func TestCompareTreesReportsEachDifference(t *testing.T) {
	want := map[string][]byte{"same": []byte("x\n"), "missing": []byte("m\n"), "changed": []byte("a\nb\n")}
	got := map[string][]byte{"same": []byte("x\n"), "extra": []byte("e\n"), "changed": []byte("a\nc\n")}
	problems := strings.Join(golden.CompareTrees(want, got, "expected", "written"), "\n")
	for _, p := range []string{"expected but not written: missing", "written but not expected: extra", "differs: changed", `"b\n"`, `"c\n"`} {
		if !strings.Contains(problems, p) {
			t.Errorf("the report lacks %q:\n%s", p, problems)
		}
	}
	if strings.Contains(problems, "same") {
		t.Errorf("an equal file is reported:\n%s", problems)
	}
}

func TestChangedFilesSeesWritesRemovalsAndEmptyDirectories(t *testing.T) {
	src, work := t.TempDir(), t.TempDir()
	for name, data := range map[string]string{"cmd": "compile x\n", "kept.yaml": "k\n", "changed.yaml": "c\n", "gone.yaml": "g\n", "in/dir.yaml": "d\n", "expected/x": "ignored\n"} {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inputs, err := copyInputs(src, work)
	if err != nil {
		t.Fatal(err)
	}
	if before, err := snapshot(work); err != nil || !reflect.DeepEqual(before, inputs) {
		t.Errorf("snapshot %v, %v; copyInputs %v", before, err, inputs)
	}
	if _, ok := inputs["cmd"]; ok {
		t.Error("the case's cmd was copied as an input")
	}
	if _, ok := inputs["expected/x"]; ok {
		t.Error("expected/ was copied as an input")
	}
	// What a command might do: write, change, remove, leave an empty directory.
	os.WriteFile(filepath.Join(work, "changed.yaml"), []byte("c2\n"), 0o644)
	os.Remove(filepath.Join(work, "gone.yaml"))
	os.MkdirAll(filepath.Join(work, "out", "new"), 0o755)
	os.MkdirAll(filepath.Join(work, "empty", "nested"), 0o755)
	os.WriteFile(filepath.Join(work, "out", "new", "f"), []byte("f\n"), 0o644)
	written, problems, err := changedFiles(work, inputs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range written {
		names = append(names, n)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"changed.yaml", "out/new/f"}) {
		t.Errorf("written %v", names)
	}
	if want := []string{"a file was removed: gone.yaml", "an empty directory was left behind: empty/nested"}; !slices.Equal(problems, want) {
		t.Errorf("problems %q, want %q", problems, want)
	}
}

func TestNormalizerReplacesPaths(t *testing.T) {
	norm := normalizer("/tmp/case1/001", "/src/anvil")
	got := string(norm([]byte("/tmp/case1/001/out: error; /src/anvil/examples/x.yaml\n")))
	if got != "$WORK/out: error; $ROOT/examples/x.yaml\n" {
		t.Errorf("got %q", got)
	}
}

func TestCrashIsSeen(t *testing.T) {
	if !crash([]byte("panic: runtime error: index out of range\n\ngoroutine 1 [running]:\n")) {
		t.Error("a panic's trace is not seen")
	}
	if crash([]byte("anvil: the spec says panic: no\n")) {
		t.Error("a message naming panic counts as a crash")
	}
}
