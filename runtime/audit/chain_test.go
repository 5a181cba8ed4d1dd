package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// writeChain writes n lines through a logger keyed with key and returns
// the file's lines.
func writeChain(t *testing.T, path string, key []byte, n int) [][]byte {
	t.Helper()
	l, err := OpenWith(path, Options{ChainKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < n; i++ {
		if err := l.Write(Line{Sub: "s", Connector: "c", Operation: "o", Decision: DecisionAllowed, TraceID: NewTraceID(), EffectClass: "read"}); err != nil {
			t.Fatal(err)
		}
	}
	return readLines(t, path)
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

func verifyBytes(b []byte, o VerifyOptions) (Report, error) {
	return Verify(bytes.NewReader(b), o)
}

var chainKey = bytes.Repeat([]byte{7}, 32)

// TestChainVerifies: a file the logger wrote verifies, keyed and unkeyed;
// the head is the last line's link; each record keeps the contract's
// fields and adds seq and prev.
func TestChainVerifies(t *testing.T) {
	for _, key := range [][]byte{chainKey, nil} {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		lines := writeChain(t, path, key, 5)
		all := bytes.Join(lines, nil)
		rep, err := verifyBytes(all, VerifyOptions{Key: key})
		if err != nil || rep.Records != 5 || rep.FirstSeq != 1 || rep.LastSeq != 5 {
			t.Fatalf("key %v: %+v %v", key != nil, rep, err)
		}
		last := bytes.TrimSuffix(lines[4], []byte("\n"))
		if rep.Head != Link(key, last) {
			t.Fatalf("head %s", rep.Head)
		}
		if seq, prev, ok := ParseChained(bytes.TrimSuffix(lines[0], []byte("\n"))); !ok || seq != 1 || prev != Genesis(rep.Alg) {
			t.Fatalf("first line: %s", lines[0])
		}
		if r := Record(bytes.TrimSuffix(lines[0], []byte("\n"))); !bytes.HasSuffix(r, []byte(`"staged_for":null}`)) {
			t.Fatalf("record: %s", r)
		}
	}
	// A keyed chain does not verify without its key, nor under another.
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	all := bytes.Join(writeChain(t, path, chainKey, 3), nil)
	if _, err := verifyBytes(all, VerifyOptions{}); err == nil || !strings.Contains(err.Error(), "vault key") {
		t.Errorf("without the key: %v", err)
	}
	if _, err := verifyBytes(all, VerifyOptions{Key: bytes.Repeat([]byte{8}, 32)}); err == nil {
		t.Error("verified under another key")
	}
}

// TestChainFindsTampering: an edited, removed, reordered, duplicated or
// truncated record is reported at its line, as is a file whose first
// records were removed; records removed from the end are found only
// against an anchored head.
func TestChainFindsTampering(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	lines := writeChain(t, path, chainKey, 6)
	o := VerifyOptions{Key: chainKey}
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	edited := bytes.Replace(lines[2], []byte(`"sub":"s"`), []byte(`"sub":"x"`), 1)
	for _, c := range []struct {
		name string
		file []byte
		line int
		says string
	}{
		{"edited", join(lines[0], lines[1], edited, lines[3], lines[4], lines[5]), 3, "record 3 was edited"},
		{"removed", join(lines[0], lines[1], lines[3], lines[4], lines[5]), 3, "records 3 to 3 are missing"},
		{"reordered", join(lines[0], lines[1], lines[3], lines[2], lines[4], lines[5]), 3, "missing"},
		{"repeated", join(lines[0], lines[1], lines[2], lines[2], lines[3]), 4, "reordered or repeated"},
		{"head removed", join(lines[2], lines[3], lines[4], lines[5]), 1, "records 1 to 2 are missing"},
		{"truncated at the end", join(lines[0], lines[1], lines[2][:len(lines[2])/2]), 3, "truncated"},
		{"truncated inside", join(lines[0], lines[1][:20], []byte("\n"), lines[2]), 2, "not a complete chained record"},
	} {
		_, err := verifyBytes(c.file, o)
		var ve *VerifyError
		if !errors.As(err, &ve) || ve.Line != c.line || !strings.Contains(ve.Problem, c.says) {
			t.Errorf("%s: %v, want line %d saying %q", c.name, err, c.line, c.says)
		}
	}
	// The tail removed: the chain alone cannot tell; the head anchored
	// earlier can.
	rep, _ := verifyBytes(join(lines...), o)
	short := join(lines[0], lines[1], lines[2], lines[3])
	if _, err := verifyBytes(short, o); err != nil {
		t.Fatalf("a shorter file verifies on its own: %v", err)
	}
	if _, err := verifyBytes(short, VerifyOptions{Key: chainKey, Head: rep.Head}); err == nil || !strings.Contains(err.Error(), "removed from its end") {
		t.Errorf("against the anchored head: %v", err)
	}
	mid, _ := verifyBytes(join(lines[0], lines[1], lines[2]), o)
	if _, err := verifyBytes(join(lines...), VerifyOptions{Key: chainKey, Head: mid.Head}); err != nil {
		t.Errorf("a file that grew past its anchored head: %v", err)
	}
}

// TestChainAcrossLoggers: two loggers on one file (two gateway processes,
// or one restarted) append in turns and concurrently: the file is one
// chain, resumed from its last line; lines written before the chain
// existed lead it.
func TestChainAcrossLoggers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(`{"time":"2025-01-01T00:00:00.000Z","sub":"old"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := OpenWith(path, Options{ChainKey: chainKey})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenWith(path, Options{ChainKey: chainKey})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	for _, l := range []*Logger{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if err := l.Write(Line{Sub: "s", TraceID: NewTraceID()}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	all, _ := os.ReadFile(path)
	rep, err := verifyBytes(all, VerifyOptions{Key: chainKey})
	if err != nil || rep.Records != 100 || rep.Leading != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
}

// TestLinkerReusesItsHash: a linker's links are the same whether its hash
// is fresh or reused, so keeping the hash between lines changes no link.
func TestLinkerReusesItsHash(t *testing.T) {
	for _, key := range [][]byte{nil, []byte("chain key")} {
		k := linker{key: key}
		for _, line := range []string{"a", "", `{"seq":1}`, "a"} {
			if got, want := k.link([]byte(line)), Link(key, []byte(line)); got != want {
				t.Fatalf("key %v, %q: reused %s, fresh %s", key != nil, line, got, want)
			}
		}
	}
}
