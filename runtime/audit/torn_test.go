package audit

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// shortWrites makes l's writes short: cut(i, b) is how many bytes of the
// i-th write (counting from 0) reach the file before ENOSPC, or -1 for a
// full write; after(i) runs after a short one (another writer, say).
func shortWrites(l *Logger, cut func(i int, b []byte) int, after func(i int)) {
	i := 0
	l.writeFile = func(f *os.File, b []byte) (int, error) {
		defer func() { i++ }()
		n := cut(i, b)
		if n < 0 {
			return f.Write(b)
		}
		w, err := f.Write(b[:n])
		if err == nil {
			err = syscall.ENOSPC
		}
		if after != nil {
			after(i)
		}
		return w, err
	}
}

// records returns the file's non-empty lines and checks that each parses as
// one JSON object.
func records(t *testing.T, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(string(raw), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			out = append(out, nil) // a fragment: its own line, not a record
			continue
		}
		out = append(out, m)
	}
	return out
}

// TestShortWriteDoesNotSwallowNextRecord is the regression test for finding
// 6 of issue 15: after a short write the fragment is truncated away and the
// next record is its own parseable line.
func TestShortWriteDoesNotSwallowNextRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	shortWrites(l, func(i int, b []byte) int {
		if i == 0 {
			return len(b) / 2
		}
		return -1
	}, nil)
	if err := l.Write(Line{Operation: "first"}); err == nil {
		t.Fatal("a short write reported success")
	}
	if err := l.Write(Line{Operation: "second"}); err != nil {
		t.Fatal(err)
	}
	got := records(t, path)
	if len(got) != 1 || got[0] == nil || got[0]["operation"] != "second" {
		t.Fatalf("records %v", got)
	}
}

// TestShortWriteAfterAnotherWriter: when the file no longer ends with the
// fragment (another writer appended to it), it cannot be truncated away; it
// is terminated instead and the next record is a line of its own. (The other
// writer's bytes are glued to the fragment: nothing in this process can undo
// that.)
func TestShortWriteAfterAnotherWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	shortWrites(l, func(i int, b []byte) int {
		if i == 0 {
			return 10
		}
		return -1
	}, func(int) { _, _ = other.WriteString("xyz") })
	_ = l.Write(Line{Operation: "first"})
	raw, _ := os.ReadFile(path)
	if string(raw) != `{"time":"2`+"xyz\n" {
		t.Fatalf("after recovery the file holds %q", raw)
	}
	if err := l.Write(Line{Operation: "second"}); err != nil {
		t.Fatal(err)
	}
	got := records(t, path)
	if len(got) != 2 || got[0] != nil || got[1]["operation"] != "second" {
		t.Fatalf("records %v", got)
	}
}

// TestOpenFindsTornFile: a log left ending in a fragment (a crash, another
// writer) gets the next record on a line of its own.
func TestOpenFindsTornFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(`{"time":"2026-`), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Line{Operation: "next"}); err != nil {
		t.Fatal(err)
	}
	got := records(t, path)
	if len(got) != 2 || got[0] != nil || got[1]["operation"] != "next" {
		t.Fatalf("records %v", got)
	}
}

// TestShortWritesProperty: under any pattern of short writes (including
// short writes of the newline that terminates an earlier fragment), every
// record whose Write succeeded is exactly one parseable line, in order, and
// no record is split or glued to another.
func TestShortWritesProperty(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		l, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		shortWrites(l, func(_ int, b []byte) int {
			if r.IntN(3) == 0 {
				return r.IntN(len(b)) // 0 .. len-1 bytes
			}
			return -1
		}, nil)
		var want []string
		for i := range 20 {
			op := strings.Repeat("x", r.IntN(50)) + string(rune('a'+i))
			if l.Write(Line{Operation: op}) == nil {
				want = append(want, op)
			}
		}
		var got []string
		for _, m := range records(t, path) {
			if m != nil {
				got = append(got, m["operation"].(string))
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("seed %d: records %v, want %v", seed, got, want)
		}
	}
}
