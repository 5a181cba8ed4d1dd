package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDeriveListsCopiesOfSourcesOnly(t *testing.T) {
	files := map[string][]byte{"a.py": []byte("same"), "b.py": []byte("own"), "c.ts": []byte("same")}
	got := formatDerived(derive(files, []Sources{{"templates/z.py": []byte("same"), "templates/y.py": []byte("same")}}))
	want := "a.py <- templates/y.py\nc.ts <- templates/y.py\n"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	back, err := parseDerived(got)
	if err != nil || len(back) != 2 || back["a.py"] != "templates/y.py" {
		t.Errorf("parse: %v %v", back, err)
	}
	if _, err := parseDerived([]byte("a.py templates/y.py\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a malformed line: %v", err)
	}
}

// A derived file that no longer equals its source, and a source the list
// names that no longer exists, both fail the check.
func TestCheckTreeComparesDerivedFilesWithTheirSource(t *testing.T) {
	if Updating() {
		t.Skip("compares only")
	}
	dir := t.TempDir()
	writeGolden(t, dir, map[string]string{DerivedList: "x.py <- templates/x.py\n", "own.txt": "own"})
	for _, c := range []struct {
		name    string
		files   map[string][]byte
		sources Sources
		want    string
	}{
		{"equal", map[string][]byte{"x.py": []byte("v1"), "own.txt": []byte("own")}, Sources{"templates/x.py": []byte("v1")}, ""},
		{"edited", map[string][]byte{"x.py": []byte("v2"), "own.txt": []byte("own")}, Sources{"templates/x.py": []byte("v1")}, "differs from its source templates/x.py: x.py"},
		{"gone source", map[string][]byte{"x.py": []byte("v1"), "own.txt": []byte("own")}, Sources{}, "unknown source templates/x.py"},
		{"not produced", map[string][]byte{"own.txt": []byte("own")}, Sources{"templates/x.py": []byte("v1")}, "derived golden file not produced: x.py"},
		{"new file", map[string][]byte{"x.py": []byte("v1"), "own.txt": []byte("own"), "extra.txt": []byte("e")}, Sources{"templates/x.py": []byte("v1")}, "produced but not in golden: extra.txt"},
		{"own file edited", map[string][]byte{"x.py": []byte("v1"), "own.txt": []byte("own2")}, Sources{"templates/x.py": []byte("v1")}, "differs: own.txt"},
		{"own file gone", map[string][]byte{"x.py": []byte("v1")}, Sources{"templates/x.py": []byte("v1")}, "in golden but not produced: own.txt"},
	} {
		rec := &recorder{TB: t}
		CheckTree(rec, dir, c.files, c.sources)
		if (c.want == "") != (rec.msg == "") || !strings.Contains(rec.msg, c.want) {
			t.Errorf("%s: reported %q, want %q", c.name, rec.msg, c.want)
		}
	}
}

// recorder is a testing.TB that keeps what CheckTree reports.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Errorf(format string, args ...any) { r.msg += fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.msg += fmt.Sprintf(format, args...) }

func writeGolden(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
