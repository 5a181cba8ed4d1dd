package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/fswatch"
)

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 891_234_567, time.FixedZone("CET", 3600))

func TestFullLine(t *testing.T) {
	grant, err := GrantWithIndex(0, map[string]any{"connector": "github", "operations": []string{"*"}, "mode": "write"})
	if err != nil {
		t.Fatal(err)
	}
	status := 201
	l := Line{
		Time: t0, Sub: "local:e2e-person", ByTenant: Optional("e2e"), ByBranch: Optional("main"), ByTurn: Optional("1"),
		Connector: "github", Account: Optional("default"), Operation: "github.comments.create",
		Decision: DecisionAllowed, Grant: grant, UpstreamStatus: &status, LatencyMs: 17,
		InputSHA256: "sha256:abc", DryRun: false, TraceID: "trace_1",
		EffectClass: "reversible", LedgerID: Optional("01JBRANCHYARDLEDGER00000001"),
	}
	got, err := l.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2025-03-04T04:06:07.891Z","sub":"local:e2e-person","by_tenant":"e2e","by_branch":"main","by_turn":"1",` +
		`"connector":"github","account":"default","operation":"github.comments.create","decision":"allowed",` +
		`"grant":{"index":0,"connector":"github","mode":"write","operations":["*"]},"upstream_status":201,"latency_ms":17,` +
		`"input_sha256":"sha256:abc","error_code":null,"rule":null,"dry_run":false,"trace_id":"trace_1",` +
		`"effect_class":"reversible","ledger_id":"01JBRANCHYARDLEDGER00000001","staged_for":null}`
	if string(got) != want {
		t.Fatalf("line\n got %s\nwant %s", got, want)
	}
}

func TestDeniedLine(t *testing.T) {
	type entry struct {
		Connector  string   `json:"connector"`
		Operations []string `json:"operations"`
		Mode       string   `json:"mode"`
	}
	grant, err := GrantWithIndex(0, entry{"github", []string{"*"}, "read"})
	if err != nil {
		t.Fatal(err)
	}
	l := Line{
		Time: t0, Sub: "local:e2e-person", ByTenant: Optional("e2e"), ByBranch: Optional(""), Connector: "github",
		Operation: "github.issues.create", Decision: DecisionDenied, Grant: grant,
		InputSHA256: "sha256:def", ErrorCode: Optional("policy_denied"), Rule: Optional("policy/grant_denied"),
		TraceID: "trace_2", EffectClass: "compensable", DryRun: true,
	}
	got, err := l.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2025-03-04T04:06:07.891Z","sub":"local:e2e-person","by_tenant":"e2e","by_branch":null,"by_turn":null,` +
		`"connector":"github","account":null,"operation":"github.issues.create","decision":"denied",` +
		`"grant":{"index":0,"connector":"github","operations":["*"],"mode":"read"},"upstream_status":null,"latency_ms":0,` +
		`"input_sha256":"sha256:def","error_code":"policy_denied","rule":"policy/grant_denied","dry_run":true,"trace_id":"trace_2",` +
		`"effect_class":"compensable","ledger_id":null,"staged_for":null}`
	if string(got) != want {
		t.Fatalf("line\n got %s\nwant %s", got, want)
	}
	// No grant at all.
	l.Grant = nil
	got, _ = l.MarshalJSON()
	if !strings.Contains(string(got), `"decision":"denied","grant":null,"upstream_status":null`) {
		t.Fatalf("null grant: %s", got)
	}
	// Key order, checked by decoding as a token stream.
	keys := topKeys(t, got)
	wantKeys := "time sub by_tenant by_branch by_turn connector account operation decision grant upstream_status latency_ms input_sha256 error_code rule dry_run trace_id effect_class ledger_id staged_for"
	if strings.Join(keys, " ") != wantKeys {
		t.Fatalf("keys %v", keys)
	}
}

func topKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v", err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestLineEscaping(t *testing.T) {
	l := Line{Time: t0, Sub: "a<b>&\"\u2028", Grant: json.RawMessage(" { \"index\" : 1 } ")}
	got, err := l.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "\"sub\":\"a<b>&\\\"\u2028\"") || !strings.Contains(string(got), `"grant":{"index":1}`) {
		t.Fatalf("escaping: %s", got)
	}
	l.Grant = json.RawMessage("{bad")
	if _, err := l.MarshalJSON(); err == nil {
		t.Fatal("invalid grant JSON accepted")
	}
}

func TestGrantWithIndex(t *testing.T) {
	for _, tt := range []struct {
		entry any
		want  string
	}{
		{map[string]any{}, `{"index":3}`},
		{json.RawMessage(`{"connector":"x","account":"a&b"}`), `{"index":3,"connector":"x","account":"a&b"}`},
	} {
		got, err := GrantWithIndex(3, tt.entry)
		if err != nil || string(got) != tt.want {
			t.Errorf("GrantWithIndex(%v) = %s, %v; want %s", tt.entry, got, err, tt.want)
		}
	}
	if _, err := GrantWithIndex(0, []int{1}); err == nil {
		t.Error("a non-object entry was accepted")
	}
}

// Hashes computed by Node: sha256 of a sorted-key JSON.stringify over the
// redacted input, as the earlier gateway hashed inputs.
var nodeHashes = []struct{ in, canon, hash string }{
	{`{"owner":"octo","repo":"hello","issue_number":2,"body":"Looks good."}`,
		`{"body":"Looks good.","issue_number":2,"owner":"octo","repo":"hello"}`,
		"sha256:34ef12373586ece0c8dd41dd8471c3d224bf2ca722d54a49a92ce369bca7652b"},
	{`{"b":1.0,"a":[1e21,0.000001,1e-7,-0,123456789012345678901234,0.1],"z":{"Password":"x","nested":[{"API-Key":"k","apikey":1,"ok":true}],"AccessToken":{"deep":1}}}`,
		`{"a":[1e+21,0.000001,1e-7,0,1.2345678901234569e+23,0.1],"b":1,"z":{"AccessToken":"***","Password":"***","nested":[{"API-Key":"***","apikey":"***","ok":true}]}}`,
		"sha256:5104faf2e6cf2cb3286cb3c060f0cfa6fe8cf4b0dfe15e5d40a7a608aa5f3aee"},
	{`{"é":1,"e":2,"\ud83d\ude00":3,"\uffff":4,"E":5,"<&>":"<&>\u2028"}`,
		"{\"<&>\":\"<&>\u2028\",\"E\":5,\"e\":2,\"é\":1,\"😀\":3,\"\uffff\":4}",
		"sha256:7d50bc47f8e4c619adaa2fb415f11b81d5767f0733030169d912d4fd9e626471"},
	{`{"Authorisation":"a","privateKey":"p","private-key":"q","sessionId":"s","cookies":"c","credentials":"c","passphrase":"p","secretive":"s","tok":"visible","sskey":"v"}`,
		`{"Authorisation":"***","cookies":"***","credentials":"***","passphrase":"***","private-key":"***","privateKey":"***","secretive":"***","sessionId":"***","sskey":"v","tok":"visible"}`,
		"sha256:b74ec7136231e68127aa1963999f9587a829cff37ff957141bd833084c8d005e"},
	{`null`, `null`, "sha256:74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"},
	{`[]`, `[]`, "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"},
	{`"x\u0001\n"`, `"x\u0001\n"`, "sha256:2bac06d5e971a9cc8959c66c86a9d5a4463043a2a85bc3624744d8f5c5f1352f"},
	{`1e400`, `null`, "sha256:74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"},
	{`-1e-400`, `0`, "sha256:5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9"},
}

func TestInputSHA256MatchesNode(t *testing.T) {
	for _, tt := range nodeHashes {
		// Decoded with json.Number, and with float64 where it fits.
		dec := json.NewDecoder(strings.NewReader(tt.in))
		dec.UseNumber()
		var withNumber any
		if err := dec.Decode(&withNumber); err != nil {
			t.Fatal(err)
		}
		inputs := []any{withNumber, json.RawMessage(tt.in)}
		var withFloat any
		if err := json.Unmarshal([]byte(tt.in), &withFloat); err == nil {
			inputs = append(inputs, withFloat)
		}
		for i, in := range inputs {
			if got := InputSHA256(in); got != tt.hash {
				t.Errorf("%s (form %d): InputSHA256 = %s, want %s", tt.in, i, got, tt.hash)
			}
		}
		if got := string(appendCanonical(nil, withNumber, true)); got != tt.canon {
			t.Errorf("%s: canonical\n got %s\nwant %s", tt.in, got, tt.canon)
		}
	}
}

func TestRedaction(t *testing.T) {
	in := map[string]any{
		"name": "x",
		"Headers": map[string]any{
			"Authorization": "Bearer abc",
			"X-API_KEY":     "k",
			"list":          []any{map[string]any{"TOKEN": []any{1, 2}, "keep": "y"}},
		},
		"pass": map[string]any{"whole": "object"},
	}
	want := map[string]any{
		"name": "x",
		"Headers": map[string]any{
			"Authorization": canon.Redacted,
			"X-API_KEY":     canon.Redacted,
			"list":          []any{map[string]any{"TOKEN": canon.Redacted, "keep": "y"}},
		},
		"pass": canon.Redacted,
	}
	if InputSHA256(in) != InputSHA256(want) {
		t.Fatal("redaction differs from the explicitly redacted input")
	}
	canon := string(appendCanonical(nil, in, true))
	for _, secret := range []string{"Bearer abc", `"k"`, "object"} {
		if strings.Contains(canon, secret) {
			t.Fatalf("canonical form keeps %s: %s", secret, canon)
		}
	}
	// Without redaction the values stay.
	if !strings.Contains(string(CanonicalJSON(in)), "Bearer abc") {
		t.Fatal("CanonicalJSON redacted")
	}
}

func TestCanonicalGoValues(t *testing.T) {
	type s struct {
		B int    `json:"b"`
		A string `json:"a"`
	}
	got := string(CanonicalJSON(map[string]any{"x": s{B: 1, A: "<"}, "n": nil, "i": 42, "f": float32(0.5), "p": (*s)(nil)}))
	want := `{"f":0.5,"i":42,"n":null,"p":null,"x":{"a":"<","b":1}}`
	if got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func TestLoggerConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o, want 0600", fi.Mode().Perm())
	}
	const writers = 200
	big := strings.Repeat("x", 5000) // lines larger than a pipe buffer's atomic size
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := l.Write(Line{Sub: "s", Operation: fmt.Sprintf("op.%d", i), Decision: DecisionAllowed,
				InputSHA256: InputSHA256(map[string]any{"i": i, "big": big}), TraceID: NewTraceID(),
				EffectClass: "read", ByTurn: &big})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	seen := map[string]bool{}
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("invalid line: %v", err)
		}
		if _, err := time.Parse(time.RFC3339, m["time"].(string)); err != nil {
			t.Fatalf("time: %v", err)
		}
		seen[m["operation"].(string)] = true
	}
	if len(seen) != writers {
		t.Fatalf("%d distinct lines, want %d", len(seen), writers)
	}
	raw, _ := os.ReadFile(path)
	if n := bytes.Count(raw, []byte("\n")); n != writers || raw[len(raw)-1] != '\n' {
		t.Fatalf("%d newlines, want %d", n, writers)
	}
}

func TestLoggerRecreatesRemovedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Line{Sub: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Line{Sub: "b"}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"sub":"b"`) || strings.Count(string(raw), "\n") != 1 {
		t.Fatalf("after removal: %s", raw)
	}
}

func TestLoggerErrorsAndNil(t *testing.T) {
	var nilLogger *Logger
	if err := nilLogger.Write(Line{}); err != nil {
		t.Fatal(err)
	}
	if nilLogger.Path() != "" {
		t.Fatal("nil Path")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing", "audit.jsonl")); !errors.Is(err, ErrWrite) {
		t.Fatalf("Open in a missing dir: %v", err)
	}
	if _, err := Open(""); !errors.Is(err, ErrWrite) {
		t.Fatalf("Open(\"\"): %v", err)
	}
	dir := t.TempDir()
	l, err := Open(filepath.Join(dir, "a.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Line{}); !errors.Is(err, ErrWrite) {
		t.Fatalf("Write into a removed dir: %v", err)
	}
}

func TestLoggerSetsTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := Open(path)
	l.now = func() time.Time { return t0 }
	if err := l.Write(Line{}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(raw), `{"time":"2025-03-04T04:06:07.891Z","sub":""`) {
		t.Fatalf("line %s", raw)
	}
}

func TestNewTraceID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewTraceID()
		if !strings.HasPrefix(id, "trace_") || len(id) != len("trace_")+32 || seen[id] {
			t.Fatalf("trace id %q", id)
		}
		seen[id] = true
	}
}

func BenchmarkWriteLine(b *testing.B) {
	l, _ := Open(filepath.Join(b.TempDir(), "audit.jsonl"))
	line := Line{Sub: "s", Connector: "github", Operation: "github.issues.list", Decision: DecisionAllowed,
		InputSHA256: InputSHA256(map[string]any{"owner": "octo", "repo": "hello"}), TraceID: NewTraceID(), EffectClass: "read"}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Write(line); err != nil {
			b.Fatal(err)
		}
	}
}

func TestEmptyStringIsNotNull(t *testing.T) {
	empty := ""
	got, _ := Line{Time: t0, Account: &empty, StagedFor: &empty}.MarshalJSON()
	if !strings.Contains(string(got), `"account":""`) || !strings.Contains(string(got), `"staged_for":""`) {
		t.Fatalf("non-nil empty string: %s", got)
	}
	if Optional("") != nil || *Optional("x") != "x" {
		t.Fatal("Optional")
	}
}

func TestDecisionFor(t *testing.T) {
	for code, want := range map[string]string{
		"": DecisionAllowed, "policy_denied": DecisionDenied, "confirmation_required": DecisionConfirmationRequired,
		"auth_required": DecisionAllowed, "upstream_unavailable": DecisionAllowed, "validation_error": DecisionAllowed,
	} {
		if got := DecisionFor(code); got != want {
			t.Errorf("DecisionFor(%q) = %s, want %s", code, got, want)
		}
	}
}

// TestLoggerFollowsRename: after the log is moved aside (rotation), the next
// line goes to a new file at the path, never to the moved one.
func TestLoggerFollowsRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Write(Line{Sub: "a"}); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(dir, "audit.jsonl.1")
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"b", "c"} {
		if err := l.Write(Line{Sub: sub}); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := os.ReadFile(moved)
	cur, _ := os.ReadFile(path)
	if strings.Count(string(old), "\n") != 1 || !strings.Contains(string(old), `"sub":"a"`) {
		t.Fatalf("moved log: %s", old)
	}
	if strings.Count(string(cur), "\n") != 2 || !strings.Contains(string(cur), `"sub":"b"`) || !strings.Contains(string(cur), `"sub":"c"`) {
		t.Fatalf("new log: %s", cur)
	}
}

// TestWatchedLogger: with a watcher the logger skips the per-line stat while
// nothing touched its path, and still follows a removal, a rotation and a
// file put in place by someone else on the very next line when the watcher
// was polled after the change (a gateway polls at the start of every
// request), or when the change is older than WatchFreshness.
func TestWatchedLogger(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := fswatch.New()
	defer w.Close()
	l.Watch(w)
	if l.watch.Stamp() == 0 {
		t.Skip("the audit directory cannot be watched here")
	}
	write := func(sub string) {
		t.Helper()
		w.Poll() // the request's own poll
		if err := l.Write(Line{Sub: sub}); err != nil {
			t.Fatal(err)
		}
	}
	lines := func(p string) string {
		t.Helper()
		raw, _ := os.ReadFile(p)
		return string(raw)
	}
	write("a")
	write("b")
	if l.stamp == 0 || l.stamp != l.watch.Stamp() {
		t.Fatal("an unchanged log path is not trusted from its stamp")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	write("c")
	if got := lines(path); strings.Count(got, "\n") != 1 || !strings.Contains(got, `"sub":"c"`) {
		t.Fatalf("after removal: %s", got)
	}
	moved := path + ".1"
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	write("d")
	if got := lines(path); strings.Count(got, "\n") != 1 || !strings.Contains(got, `"sub":"d"`) {
		t.Fatalf("after rotation: %s", got)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	write("e")
	if got := lines(path); got != "{}\n"+lines(path)[3:] || !strings.Contains(got, `"sub":"e"`) || strings.Count(got, "\n") != 2 {
		t.Fatalf("after replacement: %s", got)
	}
	if got := lines(moved); strings.Contains(got, `"sub":"e"`) {
		t.Fatalf("a line went to the rotated file: %s", got)
	}
	// No poll in between: a removal older than WatchFreshness is still seen.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * WatchFreshness)
	if err := l.Write(Line{Sub: "f"}); err != nil {
		t.Fatal(err)
	}
	if got := lines(path); strings.Count(got, "\n") != 1 || !strings.Contains(got, `"sub":"f"`) {
		t.Fatalf("after a removal without a poll: %s", got)
	}
}

// TestIssuerLine: an OIDC caller's line ends with its issuer (before a
// replay's mark); a line without one has no iss key at all.
func TestIssuerLine(t *testing.T) {
	l := Line{Time: t0, Sub: "okta:ada", Connector: "github", Operation: "github.issues.list", Decision: DecisionAllowed,
		InputSHA256: "sha256:abc", TraceID: "trace_3", EffectClass: "read", Issuer: "https://idp.example/", Replay: true}
	got, err := l.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(got), `,"staged_for":null,"iss":"https://idp.example/","replay":true}`) {
		t.Errorf("%s", got)
	}
	l.Issuer = ""
	if got, _ := l.MarshalJSON(); strings.Contains(string(got), `"iss"`) {
		t.Errorf("%s", got)
	}
}
