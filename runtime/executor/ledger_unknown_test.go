package executor_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/embedded"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

const mockToken = "e2e-upstream-pat"

// bearer is the mock upstream's credential.
type bearer struct{}

func (bearer) Resolve(context.Context, *identity.Principal, *fleet.Connector, *air.Operation, string) (func(*http.Request), *envelope.Error) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+mockToken) }, nil
}

// dying is a ledger whose owner "dies" right after Begin: it never renews,
// completes or releases anything, so its entries stay in flight until
// their lease expires, as a killed replica's do.
type dying struct{ store.Store }

func (dying) Renew(_ context.Context, l store.Lease) (store.Lease, error) {
	return l, store.ErrUnavailable
}
func (dying) Complete(context.Context, store.Lease, store.Answer) error { return store.ErrUnavailable }
func (dying) Release(context.Context, store.Lease) error                { return store.ErrUnavailable }
func (dying) Abandon(context.Context, store.Lease) error                { return store.ErrUnavailable }

// mockRig is two executors on one ledger and one mock upstream (the
// github-mini mock: issues, comments honouring Idempotency-Key, releases
// looked up by tag): first, whose owner dies after Begin, and retry.
type mockRig struct {
	first, retry *executor.Executor
	mock         *mockupstream.Server
	st           store.Store
}

func newMockRig(t *testing.T, opts store.Options) *mockRig {
	t.Helper()
	mock, err := mockupstream.Start(mockupstream.Options{Token: mockToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	f, err := fleet.Load("../serve/testdata/workspace")
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.ApplyUpstreamOverrides(f, func(k string) string {
		if k == fleet.UpstreamURLEnv("github") {
			return mock.URL
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	opts.Key = make([]byte, 32)
	st, err := embedded.Open(embedded.Config{VaultDir: filepath.Join(t.TempDir(), "vault"), Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	allow := upstream.ParseAllowlist("127.0.0.1", "")
	mk := func(l store.Store) *executor.Executor {
		return &executor.Executor{Fleet: f, Allowlist: allow, Ledger: l, Credentials: bearer{},
			Upstream: upstream.NewClient(&upstream.ClientOptions{Allowlist: allow})}
	}
	return &mockRig{first: mk(dying{st}), retry: mk(st), mock: mock, st: st}
}

func (r *mockRig) call(x *executor.Executor, tool, args, key string) *executor.Outcome {
	return x.Call(context.Background(), executor.Call{Tool: tool, Args: json.RawMessage(args), Principal: writer,
		Meta: map[string]any{"idempotency_key": key}})
}

// posts counts the mock's requests of method to path.
func (r *mockRig) requests(method, path string) int {
	n := 0
	for _, q := range r.mock.Requests() {
		if q.Method == method && q.Path == path {
			n++
		}
	}
	return n
}

// TestUnknownOutcomeNeverResentBlindly: the owner of a keyed write dies
// after the upstream acted, before the ledger recorded the answer. Once
// its lease is gone a retry resolves what happened, by the operation's
// own means, and never sends the write again blindly:
//   - create_issue (no key carrier, no lookup): refused,
//     unsafe_retry_blocked idempotency/outcome_unknown, nothing sent;
//   - create_comment (sends Idempotency-Key upstream): sent again with the
//     same key, and the upstream, which honours it, acts once;
//   - create_release (declares a lookup by tag): the lookup finds the
//     release, whose data is the answer, recorded and replayed.
func TestUnknownOutcomeNeverResentBlindly(t *testing.T) {
	r := newMockRig(t, store.Options{LeaseTTL: 400 * time.Millisecond, Wait: 50 * time.Millisecond})
	type tc struct{ tool, args, path string }
	issue := tc{"github__github_create_issue", `{"owner":"o","repo":"r","title":"t","confirm":true}`, "/repos/o/r/issues"}
	comment := tc{"github__github_create_comment", `{"owner":"o","repo":"r","issue_number":1,"body":"b"}`, "/repos/o/r/issues/1/comments"}
	release := tc{"github__github_create_release", `{"owner":"o","repo":"r","tag_name":"v1","confirm":true}`, "/repos/o/r/releases"}
	for _, c := range []tc{issue, comment, release} {
		if out := r.call(r.first, c.tool, c.args, "k-"+c.tool); out.Err != nil {
			t.Fatalf("%s first call: %v", c.tool, out.Err)
		}
	}
	// Within the lease a retry is told the call is in progress.
	out := r.call(r.retry, issue.tool, issue.args, "k-"+issue.tool)
	if out.Err == nil || out.Err.Code != envelope.Conflict || !out.Err.Retryable || out.Err.RetryAfterSeconds() != "1" ||
		!strings.Contains(string(out.Err.Details), executor.CodeInProgress) {
		t.Fatalf("retry within the lease: %+v", out.Err)
	}
	time.Sleep(450 * time.Millisecond) // the dead owner's lease expires

	out = r.call(r.retry, issue.tool, issue.args, "k-"+issue.tool)
	if out.Err == nil || out.Err.Code != envelope.UnsafeRetryBlocked || out.Err.Retryable ||
		envelope.RESTStatus(out.Err.Code) != http.StatusConflict ||
		!strings.Contains(string(out.Err.Details), executor.CodeOutcomeUnknown) ||
		!strings.Contains(out.Err.Message, "new idempotency key") {
		t.Fatalf("issue retry: %+v", out.Err)
	}
	if n := r.requests("POST", issue.path); n != 1 {
		t.Fatalf("issue: the upstream saw %d creates, want 1", n)
	}

	out = r.call(r.retry, comment.tool, comment.args, "k-"+comment.tool)
	if out.Err != nil {
		t.Fatalf("comment retry: %v", out.Err)
	}
	keyed := 0
	for _, q := range r.mock.Requests() {
		if q.Method == "POST" && q.Path == comment.path && q.IdempotencyKey == "k-"+comment.tool {
			keyed++
		}
	}
	if keyed != 2 {
		t.Fatalf("comment: %d keyed sends, want 2 (the dead owner's and the retry's, same key)", keyed)
	}

	out = r.call(r.retry, release.tool, release.args, "k-"+release.tool)
	if out.Err != nil || !strings.Contains(string(out.Raw), `"tag_name":"v1"`) || out.Effect == nil {
		t.Fatalf("release retry: %+v %s", out.Err, out.Raw)
	}
	if n := r.requests("POST", release.path); n != 1 {
		t.Fatalf("release: the upstream saw %d creates, want 1", n)
	}
	if n := r.requests("GET", release.path+"/tags/v1"); n != 1 {
		t.Fatalf("release: %d lookups, want 1", n)
	}
	// The lookup's answer is now the key's: replayed, nothing sent.
	again := r.call(r.retry, release.tool, release.args, "k-"+release.tool)
	if again.Err != nil || answer(again) != answer(out) || r.requests("GET", release.path+"/tags/v1") != 1 {
		t.Fatalf("release replay: %s (first %s)", answer(again), answer(out))
	}
}

// TestUnknownOutcomeLookupNotFound: when the lookup finds nothing, the
// earlier attempt did not act, and the retry sends the write.
func TestUnknownOutcomeLookupNotFound(t *testing.T) {
	r := newMockRig(t, store.Options{LeaseTTL: 200 * time.Millisecond})
	const tool, args = "github__github_create_release", `{"owner":"o","repo":"r","tag_name":"v2","confirm":true}`
	// The dying owner began the entry but its write never arrived.
	k := store.LedgerKey{Subject: writer.Sub, ID: tool + " k", Tool: tool, InputHash: inputHashOf(t, r, tool, args)}
	if _, err := r.st.Begin(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	out := r.call(r.retry, tool, args, "k")
	if out.Err != nil {
		t.Fatalf("retry: %v", out.Err)
	}
	if r.requests("GET", "/repos/o/r/releases/tags/v2") != 1 || r.requests("POST", "/repos/o/r/releases") != 1 {
		t.Fatalf("lookup then create expected: %+v", r.mock.Requests())
	}
}

// inputHashOf is the ledger's input hash of a call.
func inputHashOf(t *testing.T, r *mockRig, tool, args string) string {
	t.Helper()
	return executor.LedgerInputHash(t, r.retry.Fleet, tool, args)
}

// TestResetAfterSendIsUnknown: the connection breaks after the request was
// written (the upstream may have acted): the entry is not released for a
// blind resend but left with its outcome unknown, which the retry of an
// operation without a key carrier or lookup is refused with. A connection
// refused before anything was written releases the entry: its retry goes.
func TestResetAfterSendIsUnknown(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close() // acted, then the answer is lost
		}
	}))
	defer srv.Close()
	f, err := fleet.Load("../serve/testdata/workspace")
	if err != nil {
		t.Fatal(err)
	}
	_ = fleet.ApplyUpstreamOverrides(f, func(k string) string {
		if k == fleet.UpstreamURLEnv("github") {
			return srv.URL
		}
		return ""
	})
	st, err := embedded.Open(embedded.Config{VaultDir: filepath.Join(t.TempDir(), "vault"), Options: store.Options{Key: make([]byte, 32)}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	allow := upstream.ParseAllowlist("127.0.0.1", "")
	x := &executor.Executor{Fleet: f, Allowlist: allow, Ledger: st, Credentials: bearer{},
		Upstream: upstream.NewClient(&upstream.ClientOptions{Allowlist: allow})}
	call := func() *executor.Outcome {
		return x.Call(context.Background(), executor.Call{Tool: "github__github_create_issue", Principal: writer,
			Args: json.RawMessage(`{"owner":"o","repo":"r","title":"t","confirm":true}`), Meta: map[string]any{"idempotency_key": "reset"}})
	}
	if out := call(); out.Err == nil {
		t.Fatal("the reset call succeeded")
	}
	out := call()
	if out.Err == nil || out.Err.Code != envelope.UnsafeRetryBlocked || !strings.Contains(string(out.Err.Details), executor.CodeOutcomeUnknown) {
		t.Fatalf("retry after a reset: %+v", out.Err)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("the upstream saw %d writes, want 1", n)
	}
	// Refused before anything was written: released, the retry goes.
	srv.Close()
	k2 := func() *executor.Outcome {
		return x.Call(context.Background(), executor.Call{Tool: "github__github_create_issue", Principal: writer,
			Args: json.RawMessage(`{"owner":"o","repo":"r","title":"t2","confirm":true}`), Meta: map[string]any{"idempotency_key": "refused"}})
	}
	if out := k2(); out.Err == nil {
		t.Fatal("a call to a closed upstream succeeded")
	}
	if out := k2(); out.Err == nil || out.Err.Code == envelope.UnsafeRetryBlocked {
		t.Fatalf("retry after a refused connection: %+v (want it sent again)", out.Err)
	}
}
