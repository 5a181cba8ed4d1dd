package executor_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/embedded"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// commentsAPI is a stateful upstream of comments: POST creates comment
// 100+n, DELETE removes one (404 when it is gone). It counts requests.
type commentsAPI struct {
	mu      sync.Mutex
	posts   atomic.Int32
	deletes atomic.Int32
	live    map[string]bool
	delay   time.Duration
	// hold, when set, holds each request until it is closed; entered
	// receives a value as each request arrives.
	hold    chan struct{}
	entered chan struct{}
}

func (c *commentsAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.delay > 0 {
		time.Sleep(c.delay)
	}
	if c.hold != nil {
		c.entered <- struct{}{}
		<-c.hold
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	status, body := 200, `{}`
	switch r.Method {
	case http.MethodPost:
		n := c.posts.Add(1)
		id := json.Number(string(rune('0' + n%10)))
		c.live["10"+string(id)] = true
		status, body = 201, `{"id":10`+string(id)+`,"body":"b"}`
	case http.MethodDelete:
		c.deletes.Add(1)
		id := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		if c.live[id] {
			delete(c.live, id)
			status, body = 204, ``
		} else {
			status, body = 404, `{"message":"Not Found"}`
		}
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

type ledgerRig struct {
	x     *executor.Executor
	api   *commentsAPI
	st    store.Store
	audit string
}

func newLedgerRig(t *testing.T) *ledgerRig {
	t.Helper()
	return newLedgerRigWith(t, store.Options{})
}

func newLedgerRigWith(t *testing.T, opts store.Options) *ledgerRig {
	t.Helper()
	f, err := fleet.Load("../serve/testdata/workspace")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	opts.Key = key
	st, err := embedded.Open(embedded.Config{VaultDir: filepath.Join(dir, "vault"), Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	auditPath := filepath.Join(dir, "audit.jsonl")
	al, err := audit.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { al.Close() })
	api := &commentsAPI{live: map[string]bool{}}
	allow := upstream.ParseAllowlist("api.github.example", "")
	x := &executor.Executor{Fleet: f, Allowlist: allow, Audit: al, Ledger: st,
		Upstream:     upstream.NewClient(&upstream.ClientOptions{Allowlist: allow, Transport: api}),
		LedgerFailed: func(err error) { t.Errorf("ledger: %v", err) }}
	return &ledgerRig{x: x, api: api, st: st, audit: auditPath}
}

var writer = &identity.Principal{Sub: "p", Grants: grant.List{{Connector: "github", Operations: []string{"*"}, Mode: "write", Confirm: "allow"}}}

func (r *ledgerRig) call(tool, args, key string) *executor.Outcome {
	c := executor.Call{Tool: tool, Args: json.RawMessage(args), Principal: writer}
	if key != "" {
		c.Meta = map[string]any{"idempotency_key": key}
	}
	return r.x.Call(context.Background(), c)
}

func (r *ledgerRig) auditLines(t *testing.T) []map[string]any {
	t.Helper()
	f, err := os.Open(r.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

const createArgs = `{"owner":"o","repo":"r","issue_number":7,"body":"b"}`

func answer(o *executor.Outcome) string {
	s := string(o.Raw)
	if o.Err != nil {
		e := *o.Err
		e.TraceID = ""
		s = string(e.Marshal())
	}
	if o.Effect != nil {
		s += " " + string(o.Effect.AppendJSON(nil))
	}
	return s
}

// TestLedgerReplayAndConflict: a repeated write with the same ledger id
// replays the first answer and effect report without going upstream, and
// its audit line says so; the same id with other input is a conflict.
func TestLedgerReplayAndConflict(t *testing.T) {
	r := newLedgerRig(t)
	first := r.call("github__github_create_comment", createArgs, "k1")
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	again := r.call("github__github_create_comment", createArgs, "k1")
	if again.Err != nil || answer(again) != answer(first) {
		t.Fatalf("replay differs:\n got %s\nwant %s", answer(again), answer(first))
	}
	if n := r.api.posts.Load(); n != 1 {
		t.Fatalf("upstream saw %d creates, want 1", n)
	}
	c := r.call("github__github_create_comment", `{"owner":"o","repo":"r","issue_number":7,"body":"other"}`, "k1")
	if c.Err == nil || c.Err.Code != "conflict" {
		t.Fatalf("other input with the same id: %+v", c.Err)
	}
	// Without a ledger id the write goes upstream every time.
	r.call("github__github_create_comment", createArgs, "")
	if n := r.api.posts.Load(); n != 2 {
		t.Fatalf("upstream saw %d creates, want 2", n)
	}
	lines := r.auditLines(t)
	if len(lines) != 4 {
		t.Fatalf("%d audit lines", len(lines))
	}
	if lines[0]["replay"] != nil || lines[1]["replay"] != true || lines[1]["upstream_status"] != nil || lines[1]["ledger_id"] != "k1" {
		t.Errorf("audit lines: first %v, replay %v", lines[0], lines[1])
	}
	if lines[2]["error_code"] != "conflict" {
		t.Errorf("conflict audit line: %v", lines[2])
	}
}

// TestLedgerRepeatedUndo: an undo retried with its ledger id reaches the
// upstream once and answers the same both times (without the ledger the
// second delete answers not_found).
func TestLedgerRepeatedUndo(t *testing.T) {
	r := newLedgerRig(t)
	made := r.call("github__github_create_comment", createArgs, "k1")
	if made.Err != nil || made.Effect == nil || made.Effect.Undo == nil {
		t.Fatalf("create: %+v", made)
	}
	undo := made.Effect.Undo
	args, _ := undo.Arguments.MarshalJSON()
	if undo.Tool != "github__github_delete_comment" {
		t.Fatalf("undo tool %s", undo.Tool)
	}
	args = append(args[:len(args)-1], `,"confirm":true}`...) // the delete needs confirmation
	first := r.call(undo.Tool, string(args), "undo-1")
	second := r.call(undo.Tool, string(args), "undo-1")
	if first.Err != nil || second.Err != nil {
		t.Fatalf("undo: %v / %v", first.Err, second.Err)
	}
	if answer(first) != answer(second) {
		t.Errorf("answers differ:\n%s\n%s", answer(first), answer(second))
	}
	if n := r.api.deletes.Load(); n != 1 {
		t.Errorf("upstream saw %d deletes, want 1", n)
	}
	// The control: a third undo under a new id reaches the upstream and
	// finds nothing to delete.
	if third := r.call(undo.Tool, string(args), "undo-2"); third.Err == nil || third.Err.Code != "not_found" {
		t.Errorf("a fresh undo: %+v", third.Err)
	}
}

// TestLedgerConcurrent: callers of one ledger id at once make one
// upstream write and all get its answer.
func TestLedgerConcurrent(t *testing.T) {
	r := newLedgerRig(t)
	r.api.delay = 50 * time.Millisecond
	const n = 8
	answers := make([]string, n)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = answer(r.call("github__github_create_comment", createArgs, "same"))
		}()
	}
	wg.Wait()
	if got := r.api.posts.Load(); got != 1 {
		t.Fatalf("upstream saw %d creates, want 1", got)
	}
	for _, a := range answers[1:] {
		if a != answers[0] {
			t.Fatalf("answers differ:\n%s\n%s", a, answers[0])
		}
	}
}

// TestLedgerUnavailable: with the store down a keyed write is refused with
// a coded 503 and nothing goes upstream.
func TestLedgerUnavailable(t *testing.T) {
	r := newLedgerRig(t)
	r.st.Close()
	out := r.call("github__github_create_comment", createArgs, "k1")
	if out.Err == nil || out.Err.Code != "idempotency_ledger_unavailable" {
		t.Fatalf("store down: %+v", out.Err)
	}
	if n := r.api.posts.Load(); n != 0 {
		t.Fatalf("upstream saw %d creates with the store down", n)
	}
}

// flakyCreds refuses the first resolve (auth_required), then allows.
type flakyCreds struct{ n atomic.Int32 }

func (c *flakyCreds) Resolve(context.Context, *identity.Principal, *fleet.Connector, *air.Operation, string) (func(*http.Request), *envelope.Error) {
	if c.n.Add(1) == 1 {
		return nil, &envelope.Error{Code: envelope.AuthRequired, Message: "connect first"}
	}
	return nil, nil
}

// TestLedgerReleaseWhenNothingSent: a keyed write refused before anything
// was sent (no credential yet) is not recorded, so its retry goes upstream.
func TestLedgerReleaseWhenNothingSent(t *testing.T) {
	r := newLedgerRig(t)
	r.x.Credentials = &flakyCreds{}
	if out := r.call("github__github_create_comment", createArgs, "k1"); out.Err == nil || out.Err.Code != "auth_required" {
		t.Fatalf("first: %+v", out.Err)
	}
	if out := r.call("github__github_create_comment", createArgs, "k1"); out.Err != nil {
		t.Fatalf("retry: %v", out.Err)
	}
	if n := r.api.posts.Load(); n != 1 {
		t.Fatalf("upstream saw %d creates, want 1", n)
	}
}

// TestLedgerLeaseOutlivesTTL: an upstream call longer than the lease keeps
// its entry (renewed), so a concurrent retry waits and replays instead of
// taking the entry over and writing a second time.
func TestLedgerLeaseOutlivesTTL(t *testing.T) {
	r := newLedgerRigWith(t, store.Options{LeaseTTL: 600 * time.Millisecond})
	r.api.delay = 1500 * time.Millisecond
	answers := make([]string, 2)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 1 {
				time.Sleep(50 * time.Millisecond)
			}
			answers[i] = answer(r.call("github__github_create_comment", createArgs, "slow"))
		}()
	}
	wg.Wait()
	if n := r.api.posts.Load(); n != 1 {
		t.Fatalf("upstream saw %d creates, want 1", n)
	}
	if answers[0] != answers[1] {
		t.Errorf("answers differ:\n%s\n%s", answers[0], answers[1])
	}
}

// TestLedgerBadKeyIsInputError: a key no store can hold as given (NUL,
// invalid UTF-8, another control character) is the caller's error, 400
// validation_error, before the ledger or the upstream sees it.
func TestLedgerBadKeyIsInputError(t *testing.T) {
	r := newLedgerRig(t)
	for _, bad := range []string{"nul\x00key", "bad\xffutf8", "line\nbreak"} {
		out := r.call("github__github_create_comment", createArgs, bad)
		if out.Err == nil || out.Err.Code != envelope.ValidationError || out.Err.Retryable ||
			!strings.Contains(string(out.Err.Details), "effect/invalid_idempotency_key") {
			t.Errorf("key %q: %+v", bad, out.Err)
		}
	}
	if n := r.api.posts.Load(); n != 0 {
		t.Fatalf("upstream saw %d creates for bad keys", n)
	}
}

// TestLedgerInProgressAnswersAtOnce: a repeat of a keyed write still in
// flight (its owner alive, the upstream holding its answer) waits at most
// the ledger's wait, then is answered 409 conflict idempotency/in_progress,
// retryable, with Retry-After; nothing goes upstream twice, and a retry once
// the first finished replays its answer. The upstream holds the first write
// until the repeat has been answered, so the repeat cannot have waited for
// it.
func TestLedgerInProgressAnswersAtOnce(t *testing.T) {
	r := newLedgerRigWith(t, store.Options{Wait: 100 * time.Millisecond})
	r.api.hold, r.api.entered = make(chan struct{}), make(chan struct{}, 1)
	first := make(chan *executor.Outcome, 1)
	go func() { first <- r.call("github__github_create_comment", createArgs, "busy") }()
	<-r.api.entered // the first write is at the upstream
	repeat := make(chan *executor.Outcome, 1)
	go func() { repeat <- r.call("github__github_create_comment", createArgs, "busy") }()
	var out *executor.Outcome
	select {
	case out = <-repeat:
	case <-time.After(30 * time.Second): // a hang guard
		close(r.api.hold)
		t.Fatal("hung: the repeat waited for the first write instead of the ledger's 100ms wait")
	}
	close(r.api.hold)
	if out.Err == nil || out.Err.Code != envelope.Conflict || !out.Err.Retryable || out.Err.RetryAfterSeconds() == "" ||
		envelope.RESTStatus(out.Err.Code) != http.StatusConflict || !strings.Contains(string(out.Err.Details), executor.CodeInProgress) {
		t.Fatalf("repeat in flight: %+v", out.Err)
	}
	f := <-first
	if f.Err != nil {
		t.Fatal(f.Err)
	}
	if again := r.call("github__github_create_comment", createArgs, "busy"); again.Err != nil || answer(again) != answer(f) {
		t.Fatalf("retry after the first finished: %s, want %s", answer(again), answer(f))
	}
	if n := r.api.posts.Load(); n != 1 {
		t.Fatalf("upstream saw %d creates, want 1", n)
	}
}
