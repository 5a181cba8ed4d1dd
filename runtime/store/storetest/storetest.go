// Package storetest is the behavioural suite every store.Store
// implementation must pass: runtime/store/embedded and runtime/store/pgstore
// run it from their tests. It drives the store only through the interface,
// with a settable clock, and checks the invariants store.Store documents.
package storetest

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// Backend opens the implementation under test.
type Backend interface {
	// Open returns n handles onto one fresh, empty state: separate
	// connections (as separate replicas would have) where the backend
	// allows several processes, else the same handle n times. They are
	// closed by the test's cleanup.
	Open(t *testing.T, opts store.Options, n int) []store.Store
	// Raw returns every byte the state holds (files, tables), to check
	// that no secret is stored in the clear.
	Raw(t *testing.T, s store.Store) []byte
	// OpenNewerSchema creates a state, marks it with a schema version
	// newer than the implementation's, and returns the error of opening it.
	OpenNewerSchema(t *testing.T, opts store.Options) error
	// Unreachable returns a store whose backend cannot be reached (or the
	// error opening it).
	Unreachable(t *testing.T, opts store.Options) (store.Store, error)
}

// Clock is a settable clock for Options.Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts at a fixed instant.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestKey is the vault key the suite uses.
func TestKey() []byte {
	k := make([]byte, vault.KeySize)
	for i := range k {
		k[i] = byte(0xA0 + i)
	}
	return k
}

// Options returns the suite's options on clock.
func Options(clock *Clock) store.Options {
	return store.Options{
		Key: TestKey(), Now: clock.Now, LeaseTTL: time.Minute, Retention: time.Hour,
		SessionIdle: 15 * time.Minute, MaxFlows: 5,
	}
}

// Run runs the suite against b.
func Run(t *testing.T, b Backend) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"VaultRecords", testVault},
		{"CiphertextOnly", testCiphertextOnly},
		{"LedgerNewReplayConflict", testLedgerBasic},
		{"LedgerInFlightWaitsThenReplays", testLedgerWait},
		{"LedgerLeaseExpiryAfterCrash", testLedgerCrash},
		{"LedgerWaitIsBounded", testLedgerWaitBound},
		{"LedgerReleaseAndRenew", testLedgerReleaseRenew},
		{"LedgerConcurrentSameID", testLedgerConcurrent},
		{"RetentionPurge", testRetention},
		{"FlowsTakeOnce", testFlows},
		{"SessionsBoundToFingerprint", testSessions},
		{"RefreshExclusion", testRefresh},
		{"BoundedInput", testBounds},
		{"NewerSchemaRefused", testSchema},
		{"UnavailableIsCoded", testUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, b) })
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func testVault(t *testing.T, b Backend) {
	clock := NewClock()
	st := b.Open(t, Options(clock), 2)
	c := ctx(t)
	_, err := st[0].GetConnection(c, "alice", "github", "default")
	wantErr(t, err, vault.ErrNotFound)
	conn := &vault.Connection{Sub: "alice", Connector: "github", Account: "default", Kind: vault.KindStatic, Secret: "k1"}
	must(t, st[0].PutConnection(c, conn))
	must(t, st[0].PutConnection(c, &vault.Connection{Sub: "alice", Connector: "github", Account: "b", Kind: vault.KindStatic, Secret: "k2"}))
	must(t, st[0].PutConnection(c, &vault.Connection{Sub: "alice", Connector: "Jira", Account: "z", Kind: vault.KindStatic, Secret: "k3"}))
	must(t, st[0].PutConnection(c, &vault.Connection{Sub: "bob", Connector: "github", Account: "default", Kind: vault.KindStatic, Secret: "k4"}))
	got, err := st[1].GetConnection(c, "alice", "github", "default")
	must(t, err)
	if got.Secret != "k1" || got.Status != vault.StatusActive || got.CreatedAt == "" {
		t.Fatalf("read back %v (secret ok=%v)", got, got.Secret == "k1")
	}
	// Replacing (reconnecting) keeps CreatedAt and is seen by the other handle.
	created := got.CreatedAt
	clock.Advance(time.Second)
	must(t, st[0].PutConnection(c, &vault.Connection{Sub: "alice", Connector: "github", Account: "default", Kind: vault.KindStatic, Secret: "k1b"}))
	got, err = st[1].GetConnection(c, "alice", "github", "default")
	must(t, err)
	if got.Secret != "k1b" || got.CreatedAt != created {
		t.Fatalf("replaced record: secret ok=%v created %s want %s", got.Secret == "k1b", got.CreatedAt, created)
	}
	list, err := st[1].ListConnections(c, "alice")
	must(t, err)
	var names []string
	for _, l := range list {
		names = append(names, l.Connector+"/"+l.Account)
	}
	if fmt.Sprint(names) != "[Jira/z github/b github/default]" {
		t.Fatalf("list = %v", names)
	}
	up, err := st[1].SetConnectionStatus(c, "alice", "github", "b", vault.StatusNeedsReconnect)
	must(t, err)
	if up.Status != vault.StatusNeedsReconnect || up.Secret != "k2" {
		t.Fatalf("status update: %v", up)
	}
	_, err = st[0].SetConnectionStatus(c, "alice", "github", "nope", vault.StatusActive)
	wantErr(t, err, vault.ErrNotFound)
	must(t, st[0].DeleteConnection(c, "alice", "github", "b"))
	wantErr(t, st[1].DeleteConnection(c, "alice", "github", "b"), vault.ErrNotFound)
	wantErr(t, st[0].PutConnection(c, &vault.Connection{Sub: "alice", Connector: "github", Account: "x", Kind: "bogus"}), vault.ErrInvalid)
}

func testCiphertextOnly(t *testing.T, b Backend) {
	clock := NewClock()
	st := b.Open(t, Options(clock), 1)[0]
	c := ctx(t)
	const secret, token, verifier, answer = "sk_live_SECRETVALUE", "gho_ACCESSTOKENVALUE", "PKCEVERIFIERVALUE", "ANSWERBODYVALUE"
	must(t, st.PutConnection(c, &vault.Connection{Sub: "u", Connector: "gh", Account: "a", Kind: vault.KindStatic, Secret: secret}))
	exp := clock.Now().Add(time.Hour).UnixMilli()
	must(t, st.PutConnection(c, &vault.Connection{Sub: "u", Connector: "gh", Account: "o", Kind: vault.KindOAuth, AccessToken: token, ExpiresAt: &exp}))
	must(t, st.PutFlow(c, "state-1", store.Flow{Sub: "u", ExpiresAt: clock.Now().Add(time.Minute), Payload: []byte(verifier)}))
	bg, err := st.Begin(c, store.LedgerKey{Subject: "u", ID: "k", Tool: "t", InputHash: "h"})
	must(t, err)
	must(t, st.Complete(c, bg.Lease, store.Answer{Status: 200, Result: []byte(answer)}))
	must(t, st.CreateSession(c, "session-id-plain", "fp"))
	raw := b.Raw(t, st)
	for _, s := range []string{secret, token, verifier, answer, "session-id-plain", "state-1"} {
		if bytes.Contains(raw, []byte(s)) || bytes.Contains(bytes.ToLower(raw), []byte(hex.EncodeToString([]byte(s)))) {
			t.Errorf("%q is stored in the clear", s)
		}
	}
}

func key(id, input string) store.LedgerKey {
	return store.LedgerKey{Subject: "alice", ID: id, Tool: "github.issues.create", InputHash: input}
}

func testLedgerBasic(t *testing.T, b Backend) {
	st := b.Open(t, Options(NewClock()), 2)
	c := ctx(t)
	bg, err := st[0].Begin(c, key("k1", "h1"))
	must(t, err)
	if bg.Outcome != store.OutcomeNew || bg.Lease.Owner == "" || bg.Waited || bg.TookOver {
		t.Fatalf("first Begin = %+v", bg)
	}
	ans := store.Answer{Status: 201, Result: []byte(`{"number":7}`), Effect: []byte(`{"undo":"close"}`)}
	must(t, st[0].Complete(c, bg.Lease, ans))
	wantErr(t, st[0].Complete(c, bg.Lease, ans), store.ErrLeaseLost) // completes once
	for i, s := range st {
		r, err := s.Begin(c, key("k1", "h1"))
		must(t, err)
		if r.Outcome != store.OutcomeReplay || r.Answer == nil || r.Answer.Status != 201 ||
			string(r.Answer.Result) != `{"number":7}` || string(r.Answer.Effect) != `{"undo":"close"}` {
			t.Fatalf("replica %d replay = %+v", i, r)
		}
	}
	r, err := st[1].Begin(c, key("k1", "h2"))
	must(t, err)
	if r.Outcome != store.OutcomeConflict {
		t.Fatalf("other input = %v", r.Outcome)
	}
	other := key("k1", "h1")
	other.Tool = "github.issues.close"
	r, err = st[1].Begin(c, other)
	must(t, err)
	if r.Outcome != store.OutcomeConflict {
		t.Fatalf("other tool = %v", r.Outcome)
	}
	// The same id under another subject is another entry.
	bob := key("k1", "h9")
	bob.Subject = "bob"
	r, err = st[1].Begin(c, bob)
	must(t, err)
	if r.Outcome != store.OutcomeNew {
		t.Fatalf("other subject = %v", r.Outcome)
	}
	// An in-flight entry conflicts at once on other input, without waiting.
	r, err = st[0].Begin(c, func() store.LedgerKey { k := bob; k.InputHash = "zz"; return k }())
	must(t, err)
	if r.Outcome != store.OutcomeConflict || r.Waited {
		t.Fatalf("in-flight other input = %+v", r)
	}
}

func testLedgerWait(t *testing.T, b Backend) {
	st := b.Open(t, Options(NewClock()), 2)
	c := ctx(t)
	first, err := st[0].Begin(c, key("w", "h"))
	must(t, err)
	got := make(chan store.Begun, 1)
	errs := make(chan error, 1)
	go func() {
		r, err := st[1].Begin(c, key("w", "h"))
		errs <- err
		got <- r
	}()
	select {
	case <-errs:
		t.Fatal("Begin on an in-flight entry returned before it completed")
	case <-time.After(150 * time.Millisecond):
	}
	must(t, st[0].Complete(c, first.Lease, store.Answer{Status: 200, Result: []byte("one")}))
	must(t, <-errs)
	r := <-got
	if r.Outcome != store.OutcomeReplay || !r.Waited || string(r.Answer.Result) != "one" {
		t.Fatalf("waiter = %+v", r)
	}
}

func testLedgerCrash(t *testing.T, b Backend) {
	clock := NewClock()
	st := b.Open(t, Options(clock), 2)
	c := ctx(t)
	dead, err := st[0].Begin(c, key("crash", "h"))
	must(t, err)
	if !dead.Began.Equal(clock.Now()) {
		t.Fatalf("Began = %v, want %v", dead.Began, clock.Now())
	}
	// The owner dies (kill -9): it never completes. A retry within the
	// lease waits; with a short deadline it says in flight.
	short, cancel := context.WithTimeout(c, 80*time.Millisecond)
	defer cancel()
	_, err = st[1].Begin(short, key("crash", "h"))
	wantErr(t, err, store.ErrInFlight)
	// After the lease the owner's outcome is unknown: a retry that cannot
	// resolve it is told so, and the entry stays as it was.
	began := clock.Now()
	clock.Advance(time.Minute + time.Second)
	r, err := st[1].Begin(c, key("crash", "h"))
	must(t, err)
	if r.Outcome != store.OutcomeUnknown || !r.Began.Equal(began) {
		t.Fatalf("retry after lease = %+v", r)
	}
	// The old owner's answer, arriving late (or replayed from its spool
	// once the store is back), is still recorded, and replays.
	must(t, st[0].Complete(c, dead.Lease, store.Answer{Result: []byte("late")}))
	again, err := st[1].Begin(c, key("crash", "h"))
	must(t, err)
	if again.Outcome != store.OutcomeReplay || string(again.Answer.Result) != "late" {
		t.Fatalf("after the late answer = %+v", again)
	}

	// A retry that can resolve the unknown outcome takes the entry over.
	dead2, err := st[0].Begin(c, key("crash-resolvable", "h"))
	must(t, err)
	clock.Advance(time.Minute + time.Second)
	k := key("crash-resolvable", "h")
	k.TakeOver = true
	r, err = st[1].Begin(c, k)
	must(t, err)
	if r.Outcome != store.OutcomeNew || !r.TookOver || r.Lease.Owner == dead2.Lease.Owner {
		t.Fatalf("resolvable retry after lease = %+v", r)
	}
	// A late answer from the dead owner is not recorded.
	wantErr(t, st[0].Complete(c, dead2.Lease, store.Answer{Result: []byte("late")}), store.ErrLeaseLost)
	must(t, st[1].Complete(c, r.Lease, store.Answer{Result: []byte("retry")}))
	again, err = st[0].Begin(c, key("crash-resolvable", "h"))
	must(t, err)
	if again.Outcome != store.OutcomeReplay || string(again.Answer.Result) != "retry" {
		t.Fatalf("after takeover = %+v", again)
	}
	// A waiter blocked on a lease that then expires resolves it too:
	// takes it over when it may, is told the outcome is unknown otherwise.
	for _, takeOver := range []bool{true, false} {
		id := fmt.Sprintf("crash-wait-%v", takeOver)
		_, err := st[0].Begin(c, key(id, "h"))
		must(t, err)
		done := make(chan store.Begun, 1)
		go func() {
			k := key(id, "h")
			k.TakeOver = takeOver
			r, err := st[1].Begin(c, k)
			if err != nil {
				t.Error(err)
			}
			done <- r
		}()
		time.Sleep(50 * time.Millisecond)
		clock.Advance(2 * time.Minute)
		select {
		case r := <-done:
			want := store.OutcomeUnknown
			if takeOver {
				want = store.OutcomeNew
			}
			if r.Outcome != want || r.TookOver != takeOver || !r.Waited {
				t.Fatalf("waiter (take over %v) after lease expiry = %+v", takeOver, r)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("waiter did not see an expired lease")
		}
	}
}

// testLedgerWaitBound: a repeat of an in-flight call waits at most
// Options.Wait, then answers ErrInFlight (the gateway: 409, Retry-After),
// however long the first call takes; it never hangs for the lease.
func testLedgerWaitBound(t *testing.T, b Backend) {
	opts := Options(NewClock())
	opts.Wait = 300 * time.Millisecond
	st := b.Open(t, opts, 2)
	c := ctx(t)
	_, err := st[0].Begin(c, key("slow", "h"))
	must(t, err)
	began := time.Now()
	_, err = st[1].Begin(c, key("slow", "h"))
	took := time.Since(began)
	wantErr(t, err, store.ErrInFlight)
	if took < 250*time.Millisecond || took > 5*time.Second {
		t.Fatalf("in-flight answer after %v, want about the 300ms wait", took)
	}
	// A negative wait answers at once.
	opts.Wait = -1
	now := b.Open(t, opts, 1)[0]
	_, err = now.Begin(c, key("slow2", "h"))
	must(t, err)
	began = time.Now()
	_, err = now.Begin(c, key("slow2", "h"))
	wantErr(t, err, store.ErrInFlight)
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("no-wait in-flight answer after %v", d)
	}
}

func testLedgerReleaseRenew(t *testing.T, b Backend) {
	clock := NewClock()
	st := b.Open(t, Options(clock), 2)
	c := ctx(t)
	r, err := st[0].Begin(c, key("rel", "h"))
	must(t, err)
	must(t, st[0].Release(c, r.Lease))
	wantErr(t, st[0].Release(c, r.Lease), store.ErrLeaseLost)
	r2, err := st[1].Begin(c, key("rel", "other-input-is-fine-after-release"))
	must(t, err)
	if r2.Outcome != store.OutcomeNew || r2.TookOver {
		t.Fatalf("after release = %+v", r2)
	}
	clock.Advance(50 * time.Second)
	l, err := st[1].Renew(c, r2.Lease)
	must(t, err)
	if !l.Until.Equal(clock.Now().Add(time.Minute)) {
		t.Fatalf("renewed until %v", l.Until)
	}
	clock.Advance(50 * time.Second) // past the first lease, within the renewed one
	short, cancel := context.WithTimeout(c, 60*time.Millisecond)
	defer cancel()
	_, err = st[0].Begin(short, key("rel", "other-input-is-fine-after-release"))
	wantErr(t, err, store.ErrInFlight)
	must(t, st[1].Complete(c, l, store.Answer{Result: []byte("ok")}))
	_, err = st[1].Renew(c, l)
	wantErr(t, err, store.ErrLeaseLost)
	wantErr(t, st[1].Abandon(c, l), store.ErrLeaseLost)

	// Abandon: the owner gives up without an outcome; the next look sees
	// the outcome as unknown at once (no lease to wait out).
	a, err := st[0].Begin(c, key("abandoned", "h"))
	must(t, err)
	must(t, st[0].Abandon(c, a.Lease))
	r3, err := st[1].Begin(c, key("abandoned", "h"))
	must(t, err)
	if r3.Outcome != store.OutcomeUnknown {
		t.Fatalf("after Abandon = %+v", r3)
	}
}

func testLedgerConcurrent(t *testing.T, b Backend) {
	st := b.Open(t, Options(NewClock()), 3)
	c := ctx(t)
	var upstream atomic.Int32
	const per = 8
	results := make(chan store.Begun, per*len(st))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, s := range st {
		for range per {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r, err := s.Begin(c, key("same", "h"))
				if err != nil {
					t.Error(err)
					return
				}
				if r.Outcome == store.OutcomeNew {
					upstream.Add(1)
					time.Sleep(30 * time.Millisecond) // the upstream call
					r.Answer = &store.Answer{Status: 201, Result: []byte("the one answer")}
					if err := s.Complete(c, r.Lease, *r.Answer); err != nil {
						t.Error(err)
					}
				}
				results <- r
			}()
		}
	}
	close(start)
	wg.Wait()
	close(results)
	if n := upstream.Load(); n != 1 {
		t.Fatalf("%d upstream calls, want exactly 1", n)
	}
	for r := range results {
		if r.Answer == nil || string(r.Answer.Result) != "the one answer" || r.Answer.Status != 201 {
			t.Fatalf("answer = %+v", r)
		}
	}
}

func testRetention(t *testing.T, b Backend) {
	clock := NewClock()
	st := b.Open(t, Options(clock), 2)
	c := ctx(t)
	r, err := st[0].Begin(c, key("old", "h"))
	must(t, err)
	must(t, st[0].Complete(c, r.Lease, store.Answer{Result: []byte("x")}))
	_, err = st[0].Begin(c, key("abandoned", "h")) // never completed
	must(t, err)
	must(t, st[0].PutFlow(c, "s-old", store.Flow{Sub: "u", ExpiresAt: clock.Now().Add(time.Minute)}))
	must(t, st[0].CreateSession(c, "sess-old", "fp"))
	clock.Advance(30 * time.Minute)
	r2, err := st[0].Begin(c, key("fresh", "h"))
	must(t, err)
	must(t, st[0].Complete(c, r2.Lease, store.Answer{Result: []byte("y")}))
	must(t, st[0].CreateSession(c, "sess-new", "fp"))
	p, err := st[1].Purge(c)
	must(t, err)
	if p != (store.Purged{Flows: 1, Sessions: 1}) {
		t.Fatalf("purge at 30m = %+v", p)
	}
	// Within retention: still a replay.
	rr, err := st[1].Begin(c, key("old", "h"))
	must(t, err)
	if rr.Outcome != store.OutcomeReplay {
		t.Fatalf("within retention = %v", rr.Outcome)
	}
	clock.Advance(31*time.Minute + 2*time.Minute) // "old" completed 61m+ ago, abandoned lease expired 62m ago
	p, err = st[1].Purge(c)
	must(t, err)
	if p.Ledger != 2 {
		t.Fatalf("purge at 63m = %+v, want 2 ledger entries", p)
	}
	// After retention the id is free: other input is new, not a conflict.
	rr, err = st[0].Begin(c, key("old", "other"))
	must(t, err)
	if rr.Outcome != store.OutcomeNew {
		t.Fatalf("after retention = %v", rr.Outcome)
	}
	rr, err = st[0].Begin(c, key("fresh", "h"))
	must(t, err)
	if rr.Outcome != store.OutcomeReplay {
		t.Fatalf("fresh entry purged too early: %v", rr.Outcome)
	}
	// An entry past retention that Purge has not reached yet is absent too.
	clock.Advance(2 * time.Hour)
	rr, err = st[0].Begin(c, key("fresh", "zzz"))
	must(t, err)
	if rr.Outcome != store.OutcomeNew {
		t.Fatalf("unpurged expired entry = %v", rr.Outcome)
	}
}

func testFlows(t *testing.T, b Backend) {
	clock := NewClock()
	st := b.Open(t, Options(clock), 3)
	c := ctx(t)
	exp := clock.Now().Add(10 * time.Minute)
	must(t, st[0].PutFlow(c, "st-1", store.Flow{Sub: "alice", ExpiresAt: exp, Payload: []byte("verifier+redirect")}))
	wantErr(t, st[1].PutFlow(c, "st-1", store.Flow{Sub: "eve", ExpiresAt: exp}), store.ErrExists)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := st[i%len(st)].TakeFlow(c, "st-1")
			switch {
			case err == nil:
				wins.Add(1)
				if f.Sub != "alice" || string(f.Payload) != "verifier+redirect" || !f.ExpiresAt.Equal(exp) {
					t.Errorf("taken flow = %+v", f)
				}
			case !errors.Is(err, store.ErrNotFound):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d takers won, want 1", wins.Load())
	}
	// Expired: not returned (and gone).
	must(t, st[0].PutFlow(c, "st-2", store.Flow{Sub: "alice", ExpiresAt: clock.Now().Add(time.Minute)}))
	clock.Advance(time.Minute)
	_, err := st[1].TakeFlow(c, "st-2")
	wantErr(t, err, store.ErrNotFound)
	_, err = st[1].TakeFlow(c, "")
	wantErr(t, err, store.ErrNotFound)
	// Bounded: MaxFlows (5) unexpired flows, then full; expired ones make room.
	for i := range 5 {
		must(t, st[i%3].PutFlow(c, fmt.Sprint("full-", i), store.Flow{Sub: "a", ExpiresAt: clock.Now().Add(time.Minute)}))
	}
	wantErr(t, st[0].PutFlow(c, "full-x", store.Flow{Sub: "a", ExpiresAt: clock.Now().Add(time.Minute)}), store.ErrFull)
	clock.Advance(2 * time.Minute)
	must(t, st[0].PutFlow(c, "full-x", store.Flow{Sub: "a", ExpiresAt: clock.Now().Add(time.Minute)}))
}

func testSessions(t *testing.T, b Backend) {
	clock := NewClock()
	st := b.Open(t, Options(clock), 2)
	c := ctx(t)
	must(t, st[0].CreateSession(c, "sid-1", "fp-alice"))
	wantErr(t, st[1].CreateSession(c, "sid-1", "fp-eve"), store.ErrExists)
	must(t, st[1].CheckSession(c, "sid-1", "fp-alice"))
	wantErr(t, st[1].CheckSession(c, "sid-1", "fp-eve"), store.ErrForbidden)
	wantErr(t, st[0].CheckSession(c, "sid-unknown", "fp-alice"), store.ErrNotFound)
	// Use keeps it alive; idleness ends it.
	clock.Advance(10 * time.Minute)
	must(t, st[0].CheckSession(c, "sid-1", "fp-alice"))
	clock.Advance(10 * time.Minute)
	must(t, st[1].CheckSession(c, "sid-1", "fp-alice"))
	clock.Advance(16 * time.Minute)
	wantErr(t, st[0].CheckSession(c, "sid-1", "fp-alice"), store.ErrNotFound)
	must(t, st[0].CreateSession(c, "sid-2", "fp-alice"))
	must(t, st[1].DeleteSession(c, "sid-2"))
	wantErr(t, st[0].CheckSession(c, "sid-2", "fp-alice"), store.ErrNotFound)
	wantErr(t, st[0].DeleteSession(c, "sid-2"), store.ErrNotFound)
}

func testRefresh(t *testing.T, b Backend) {
	clock := NewClock()
	st := b.Open(t, Options(clock), 3)
	c := ctx(t)
	expired := clock.Now().Add(-time.Second).UnixMilli()
	must(t, st[0].PutConnection(c, &vault.Connection{Sub: "u", Connector: "gh", Account: "default", Kind: vault.KindOAuth,
		AccessToken: "old", RefreshToken: "r", ExpiresAt: &expired}))
	var refreshes, inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	tokens := make(chan string, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := st[i%len(st)]
			<-start
			err := s.RefreshExclusive(c, "u", "gh", "default", func(ctx context.Context) error {
				n := inside.Add(1)
				defer inside.Add(-1)
				for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
				}
				cur, err := s.GetConnection(ctx, "u", "gh", "default")
				if err != nil {
					return err
				}
				if cur.NeedsRefresh(clock.Now()) {
					refreshes.Add(1)
					time.Sleep(20 * time.Millisecond) // the token endpoint
					exp := clock.Now().Add(time.Hour).UnixMilli()
					cur.AccessToken, cur.ExpiresAt = "new", &exp
					if err := s.PutConnection(ctx, cur); err != nil {
						return err
					}
				}
				tokens <- cur.AccessToken
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(tokens)
	if n := refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes, want exactly 1", n)
	}
	if m := maxInside.Load(); m != 1 {
		t.Fatalf("%d holders at once, want 1", m)
	}
	for tok := range tokens {
		if tok != "new" {
			t.Fatalf("a caller used token %q", tok)
		}
	}
	// fn's error comes back unchanged.
	sentinel := errors.New("token endpoint said no")
	if err := st[1].RefreshExclusive(c, "u", "gh", "default", func(context.Context) error { return sentinel }); err != sentinel {
		t.Fatalf("fn error = %v", err)
	}
}

func testBounds(t *testing.T, b Backend) {
	st := b.Open(t, Options(NewClock()), 1)[0]
	c := ctx(t)
	long := string(bytes.Repeat([]byte("x"), store.MaxKeyLen+1))
	_, err := st.Begin(c, key(long, "h"))
	wantErr(t, err, store.ErrInvalid)
	_, err = st.Begin(c, key("", "h"))
	wantErr(t, err, store.ErrInvalid)
	// Keys that a backend could not hold as given are the caller's error
	// on every store (PostgreSQL refuses NUL and invalid UTF-8 in text).
	for _, bad := range []string{"nul\x00key", "bad\xffutf8"} {
		_, err = st.Begin(c, key(bad, "h"))
		wantErr(t, err, store.ErrInvalid)
		k := key("fine", "h")
		k.Subject = bad
		_, err = st.Begin(c, k)
		wantErr(t, err, store.ErrInvalid)
		wantErr(t, st.CreateSession(c, "sid", bad), store.ErrInvalid)
	}
	wantErr(t, st.CreateSession(c, long, "fp"), store.ErrInvalid)
	wantErr(t, st.PutFlow(c, "s", store.Flow{Sub: "u", Payload: make([]byte, store.MaxPayloadLen+1)}), store.ErrInvalid)
	r, err := st.Begin(c, key("big", "h"))
	must(t, err)
	wantErr(t, st.Complete(c, r.Lease, store.Answer{Result: make([]byte, store.MaxPayloadLen+1)}), store.ErrInvalid)
}

func testSchema(t *testing.T, b Backend) {
	err := b.OpenNewerSchema(t, Options(NewClock()))
	wantErr(t, err, store.ErrSchema)
	if !bytes.Contains([]byte(err.Error()), []byte("newer")) {
		t.Fatalf("refusal does not say why: %v", err)
	}
}

func testUnavailable(t *testing.T, b Backend) {
	clock := NewClock()
	s, err := b.Unreachable(t, Options(clock))
	if err != nil {
		wantErr(t, err, store.ErrUnavailable)
		return
	}
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	began := time.Now()
	wantErr(t, s.Ping(c), store.ErrUnavailable)
	_, err = s.GetConnection(c, "u", "gh", "a")
	wantErr(t, err, store.ErrUnavailable)
	wantErr(t, s.PutConnection(c, &vault.Connection{Sub: "u", Connector: "gh", Account: "a", Kind: vault.KindStatic, Secret: "s"}), store.ErrUnavailable)
	_, err = s.Begin(c, key("k", "h"))
	wantErr(t, err, store.ErrUnavailable)
	_, err = s.TakeFlow(c, "state")
	wantErr(t, err, store.ErrUnavailable)
	wantErr(t, s.CheckSession(c, "sid", "fp"), store.ErrUnavailable)
	err = s.RefreshExclusive(c, "u", "gh", "a", func(context.Context) error { t.Error("fn ran without the store"); return nil })
	wantErr(t, err, store.ErrUnavailable)
	if d := time.Since(began); d > 15*time.Second {
		t.Fatalf("unavailable answers took %v", d)
	}
}
