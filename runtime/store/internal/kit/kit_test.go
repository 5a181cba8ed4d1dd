package kit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := store.LedgerKey{Subject: "s", ID: "i", Tool: "t", InputHash: "h"}
	ret := time.Hour
	inflight := func(lease time.Time) *Entry {
		return &Entry{Tool: "t", InputHash: "h", State: StateInFlight, Owner: "o", LeaseUntil: lease}
	}
	done := func(at time.Time) *Entry { return &Entry{Tool: "t", InputHash: "h", State: StateDone, Done: at} }
	for _, tc := range []struct {
		name string
		e    *Entry
		k    store.LedgerKey
		want Action
	}{
		{"absent", nil, k, Claim},
		{"done", done(now.Add(-time.Minute)), k, Replay},
		{"done other input", done(now.Add(-time.Minute)), store.LedgerKey{Subject: "s", ID: "i", Tool: "t", InputHash: "x"}, Conflict},
		{"done other tool", done(now.Add(-time.Minute)), store.LedgerKey{Subject: "s", ID: "i", Tool: "u", InputHash: "h"}, Conflict},
		{"done past retention", done(now.Add(-ret)), store.LedgerKey{Subject: "s", ID: "i", Tool: "t", InputHash: "x"}, Claim},
		{"in flight", inflight(now.Add(time.Second)), k, Wait},
		{"in flight other input", inflight(now.Add(time.Second)), store.LedgerKey{Subject: "s", ID: "i", Tool: "t", InputHash: "x"}, Conflict},
		{"lease expired", inflight(now), k, Unknown},
		{"lease expired, resolvable", inflight(now), store.LedgerKey{Subject: "s", ID: "i", Tool: "t", InputHash: "h", TakeOver: true}, TakeOver},
		{"abandoned past retention", inflight(now.Add(-ret)), store.LedgerKey{Subject: "s", ID: "i", Tool: "t", InputHash: "x"}, Claim},
	} {
		if got := Decide(tc.e, tc.k, now, ret); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBoxBindsAAD(t *testing.T) {
	b, err := NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := b.SealAnswer("s", "i", store.Answer{Status: 200, Result: []byte("r")})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := b.OpenAnswer("s", "i", sealed); err != nil || string(a.Result) != "r" {
		t.Fatalf("%v %v", a, err)
	}
	if _, err := b.OpenAnswer("s", "j", sealed); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("moved row opened: %v", err)
	}
	if _, err := b.Open([]byte("short"), "x"); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("short: %v", err)
	}
	if _, err := NewBox(nil); !errors.Is(err, store.ErrConfig) {
		t.Fatalf("no key: %v", err)
	}
}

func TestKeyedMutex(t *testing.T) {
	var k KeyedMutex
	unlock, err := k.Lock(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	other, err := k.Lock(context.Background(), "b") // another key is independent
	if err != nil {
		t.Fatal(err)
	}
	other()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := k.Lock(ctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("held key: %v", err)
	}
	unlock()
	unlock() // idempotent
	again, err := k.Lock(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	again()
	if len(k.m) != 0 || len(k.n) != 0 {
		t.Fatalf("entries left: %v %v", k.m, k.n)
	}
}
