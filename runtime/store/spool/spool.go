// Package spool keeps a ledger answer the store could not record. A keyed
// write's answer is recorded with store.Complete after the upstream
// answered; when the store is unavailable at that moment (the database
// stopped, a network partition), the answer must not be lost: the write
// may have acted, and a retry that finds no answer could only refuse it.
// Store wraps a store.Store so that such a Complete is written to a local
// spool directory instead, durably (sealed, fsynced, renamed into place),
// and replayed to the store in the background until it is recorded, or
// until the store says another caller took the entry over. Until then,
// Begin on this process answers a spooled key from the spool.
//
// Any process may replay any spool file: Complete is conditioned on the
// lease owner the file names, so replicas sharing a spool directory record
// each answer at most once.
package spool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/internal/kit"
)

// Replay pacing: the spool is looked at every minRetry while it holds
// anything, backing off to maxRetry while the store stays unavailable.
const (
	minRetry = 200 * time.Millisecond
	maxRetry = 5 * time.Second
)

// suffix names a complete spool file; a file being written has another
// name until it is renamed.
const suffix = ".answer"

// record is one spool file: the lease the answer was for, and the answer
// sealed as the store seals it.
type record struct {
	Subject string    `json:"subject"`
	ID      string    `json:"id"`
	Owner   string    `json:"owner"`
	Until   time.Time `json:"until"`
	Sealed  []byte    `json:"sealed"`
}

// Store is a store.Store whose failed Completes are spooled and replayed.
type Store struct {
	store.Store
	dir  string
	box  *kit.Box
	logf func(string, ...any)

	// held is how many answers the spool held at its last look (a write
	// adds one): Begin looks for a key in the directory only when it may
	// hold something, so a keyed write costs nothing extra while the
	// store answers.
	held atomic.Int64

	mu   sync.Mutex
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// Wrap returns s with a spool in dir (created 0700), sealing with a key
// derived from the vault key, and starts replaying what dir already holds
// (answers a process that died before replaying them left behind). Close
// stops the replay and closes s.
func Wrap(s store.Store, dir string, vaultKey []byte, logf func(string, ...any)) (*Store, error) {
	box, err := kit.NewBox(vaultKey)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: creating the ledger spool %s: %w", store.ErrConfig, dir, err)
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	sp := &Store{Store: s, dir: dir, box: box, logf: logf,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go sp.loop()
	sp.poke()
	return sp, nil
}

// Unwrap returns the wrapped store.
func (s *Store) Unwrap() store.Store { return s.Store }

// Dir is the spool directory.
func (s *Store) Dir() string { return s.dir }

// name is the spool file of an attempt: the entry's digest and the owner.
func name(subject, id, owner string) string {
	sum := sha256.Sum256([]byte(kit.LedgerAAD(subject, id)))
	return hex.EncodeToString(sum[:16]) + "." + owner + suffix
}

// Complete records a in the store, or, when the store is unavailable,
// spools it durably and answers nil: the answer will be recorded once the
// store is back. Any other error is the store's.
func (s *Store) Complete(ctx context.Context, l store.Lease, a store.Answer) error {
	err := s.Store.Complete(ctx, l, a)
	if err == nil || !errors.Is(err, store.ErrUnavailable) {
		return err
	}
	sealed, serr := s.box.SealAnswer(l.Subject, l.ID, a)
	if serr != nil {
		return serr
	}
	if werr := s.write(record{Subject: l.Subject, ID: l.ID, Owner: l.Owner, Until: l.Until, Sealed: sealed}); werr != nil {
		return fmt.Errorf("%w (and spooling the answer failed: %v)", err, werr)
	}
	s.held.Add(1)
	s.logf("anvil: the ledger is unavailable (%v); the answer to a keyed write is spooled in %s and will be recorded when it is back", err, s.dir)
	s.poke()
	return nil
}

// write stores r atomically and durably: a temporary file, fsynced,
// renamed into place, and the directory fsynced.
func (s *Store) write(r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(s.dir, name(r.Subject, r.ID, r.Owner)))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(s.dir); err == nil {
		err = d.Sync()
		d.Close()
		return err
	}
	return nil
}

// Begin answers a key whose answer is still in this spool with that
// answer (a replay), without asking the store; otherwise it is the store's
// Begin.
func (s *Store) Begin(ctx context.Context, k store.LedgerKey) (store.Begun, error) {
	if s.held.Load() > 0 {
		if a, ok := s.spooled(k); ok {
			return store.Begun{Outcome: store.OutcomeReplay, Answer: a}, nil
		}
	}
	return s.Store.Begin(ctx, k)
}

// spooled returns the spooled answer for k's entry, if there is one that
// opens (the tool and input are the entry's own: a spool file exists only
// for an attempt this key began).
func (s *Store) spooled(k store.LedgerKey) (*store.Answer, bool) {
	sum := sha256.Sum256([]byte(kit.LedgerAAD(k.Subject, k.ID)))
	matches, _ := filepath.Glob(filepath.Join(s.dir, hex.EncodeToString(sum[:16])+".*"+suffix))
	for _, m := range matches {
		r, err := read(m)
		if err != nil || r.Subject != k.Subject || r.ID != k.ID {
			continue
		}
		if a, err := s.box.OpenAnswer(r.Subject, r.ID, r.Sealed); err == nil {
			return a, true
		}
	}
	return nil, false
}

func read(path string) (record, error) {
	var r record
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}

// Pending lists the spool files waiting to be recorded, sorted.
func (s *Store) Pending() []string {
	ents, _ := os.ReadDir(s.dir)
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

func (s *Store) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// loop replays the spool whenever it is poked and, while files remain,
// on a backoff.
func (s *Store) loop() {
	defer close(s.done)
	wait := minRetry
	var timer <-chan time.Time
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-timer:
		}
		left, unavailable := s.replay()
		s.held.Store(int64(left))
		switch {
		case left == 0:
			wait, timer = minRetry, nil
			continue
		case unavailable:
			wait = min(wait*2, maxRetry)
		default:
			wait = minRetry
		}
		timer = time.After(wait)
	}
}

// replay records every spooled answer it can. It returns how many files
// are left, and whether the store was unavailable.
func (s *Store) replay() (left int, unavailable bool) {
	for _, n := range s.Pending() {
		select {
		case <-s.stop:
			return 1, false
		default:
		}
		path := filepath.Join(s.dir, n)
		r, err := read(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // another replica replayed it
		}
		if err != nil {
			s.logf("anvil: ledger spool file %s is unreadable (%v); removing it", path, err)
			os.Remove(path)
			continue
		}
		a, err := s.box.OpenAnswer(r.Subject, r.ID, r.Sealed)
		if err != nil {
			s.logf("anvil: ledger spool file %s does not open under this vault key; removing it", path)
			os.Remove(path)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = s.Store.Complete(ctx, store.Lease{Subject: r.Subject, ID: r.ID, Owner: r.Owner, Until: r.Until}, *a)
		cancel()
		switch {
		case err == nil:
			s.logf("anvil: a spooled ledger answer was recorded")
			os.Remove(path)
		case errors.Is(err, store.ErrLeaseLost):
			// Another caller took the entry over (or a replica replayed
			// this file first): its answer is the one recorded.
			os.Remove(path)
		case errors.Is(err, store.ErrUnavailable):
			return len(s.Pending()), true
		default:
			s.logf("anvil: a spooled ledger answer cannot be recorded (%v); removing %s", err, path)
			os.Remove(path)
		}
	}
	return len(s.Pending()), false
}

// Close stops the replay (what is left stays spooled for the next start)
// and closes the store.
func (s *Store) Close() error {
	s.mu.Lock()
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.mu.Unlock()
	<-s.done
	return s.Store.Close()
}
