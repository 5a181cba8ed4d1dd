package storetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// EnvCrashChild marks the child process of Kill9.
const EnvCrashChild = "ANVIL_STORETEST_CRASH_CHILD"

// CrashLease is the lease both sides of Kill9 use: short, on the real clock.
const CrashLease = time.Second

var crashKey = store.LedgerKey{Subject: "alice", ID: "killed-mid-call", Tool: "t.create", InputHash: "h"}

// CrashChild is the child side of Kill9: with s open, it stores a vault
// record, begins a ledger write (as a gateway would before going upstream),
// says "ready" and blocks until killed.
func CrashChild(s store.Store) {
	ctx := context.Background()
	err := s.PutConnection(ctx, &vault.Connection{Sub: "alice", Connector: "gh", Account: "default", Kind: vault.KindStatic, Secret: "survives"})
	if err == nil {
		var r store.Begun
		r, err = s.Begin(ctx, crashKey)
		if err == nil && r.Outcome != store.OutcomeNew {
			err = fmt.Errorf("child Begin = %v", r.Outcome)
		}
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

// Kill9 runs the test binary again as a child (env set, and EnvCrashChild),
// which calls CrashChild; kills it with SIGKILL mid-call; then opens the
// store with open and checks that the vault record survived and that the
// half-done ledger entry blocks a retry only until its lease expires.
func Kill9(t *testing.T, testName string, env []string, open func() store.Store) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+testName+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), env...), EnvCrashChild+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() //nolint:errcheck // already dead on the normal path
	lines := bufio.NewScanner(out)
	ready := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if l := lines.Text(); l == "ready" || len(l) > 6 && l[:6] == "error:" {
				ready <- l
				return
			}
		}
		ready <- "child exited"
	}()
	select {
	case l := <-ready:
		if l != "ready" {
			t.Fatalf("child: %s", l)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("child never got ready")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()

	s := open()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := s.GetConnection(ctx, "alice", "gh", "default")
	if err != nil || c.Secret != "survives" {
		t.Fatalf("vault record after kill -9: %v", err)
	}
	// The child's write may have reached an upstream: once its lease is
	// gone (at once on the embedded store, whose file lock proves the
	// child dead) a retry is told the outcome is unknown, and one that
	// can resolve it takes the entry over.
	var r store.Begun
	for {
		r, err = s.Begin(ctx, crashKey)
		if errors.Is(err, store.ErrInFlight) && ctx.Err() == nil {
			continue // within the lease: the bounded wait answered in flight
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if r.Outcome != store.OutcomeUnknown {
		t.Fatalf("retry after kill -9 = %+v, want outcome unknown", r)
	}
	k := crashKey
	k.TakeOver = true
	r, err = s.Begin(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != store.OutcomeNew || !r.TookOver {
		t.Fatalf("resolvable retry after kill -9 = %+v", r)
	}
	if time.Since(killed) > 30*time.Second {
		t.Fatal("the retry waited far longer than the lease")
	}
	if err := s.Complete(ctx, r.Lease, store.Answer{Status: 201, Result: []byte("retried")}); err != nil {
		t.Fatal(err)
	}
	again, err := s.Begin(ctx, k)
	if err != nil || again.Outcome != store.OutcomeReplay || string(again.Answer.Result) != "retried" {
		t.Fatalf("after the retry: %+v %v", again, err)
	}
	if errors.Is(err, store.ErrInFlight) {
		t.Fatal("entry still in flight")
	}
}
