package auth

import (
	"github.com/anvil-dev/anvil/runtime/fswatch"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth/authtest"
)

// fileSnap returns the JWKS file source's last snapshot.
func fileSnap(t *testing.T, v *Verifier) *fileSnapshot {
	t.Helper()
	fs, ok := v.keys.(*fileSource)
	if !ok {
		t.Fatalf("key source is %T", v.keys)
	}
	return fs.last.Load()
}

// TestJWKSFileChangeDetection: an unchanged JWKS file is verified from one
// stat, and yet a same-size in-place rewrite, a rename over it carrying the
// very same size and mtime, and a rewrite within the racy window that keeps
// the mtime all take effect on the very next request.
func TestJWKSFileChangeDetection(t *testing.T) {
	f := newFixture(t, nil)
	a := f.key
	b := authtest.NewKey("by-secondary0") // same kid length: same file size
	tokA := authtest.Mint(a, turnClaims())
	tokB := authtest.Mint(b, turnClaims())
	jwksA, jwksB := authtest.JWKS(a), authtest.JWKS(b)
	if len(jwksA) != len(jwksB) {
		t.Fatalf("fixture: key sets differ in size (%d, %d)", len(jwksA), len(jwksB))
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(f.jwks, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tokA); err != nil {
		t.Fatal(err)
	}
	snap := fileSnap(t, f.v)
	if snap == nil || snap.racy {
		t.Fatalf("an hour-old file gave no trusted snapshot (%v)", snap != nil)
	}
	if _, err := f.verify(tokA); err != nil {
		t.Fatal(err)
	}
	if fileSnap(t, f.v) != snap {
		t.Error("an unchanged file was read again")
	}

	// Same size, same inode, mtime one nanosecond later.
	before, _ := os.Stat(f.jwks)
	if err := os.WriteFile(f.jwks, jwksB, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f.jwks, old, old.Add(time.Nanosecond)); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(f.jwks)
	if !os.SameFile(before, after) || before.Size() != after.Size() {
		t.Fatal("fixture: the rewrite was not in place at the same size")
	}
	if _, err := f.verify(tokA); err == nil {
		t.Fatal("same-size in-place rewrite: the removed key still verifies")
	}
	if _, err := f.verify(tokB); err != nil {
		t.Fatalf("same-size in-place rewrite: the new key: %v", err)
	}

	// A rename over it: same size and the very same mtime, another inode.
	tmp := filepath.Join(f.dir, "next.json")
	if err := os.WriteFile(tmp, jwksA, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, old, old.Add(time.Nanosecond)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, f.jwks); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tokB); err == nil {
		t.Fatal("rename: the removed key still verifies")
	}
	if _, err := f.verify(tokA); err != nil {
		t.Fatalf("rename: the new key: %v", err)
	}

	// A file whose mtime is not yet past the racy window (here one ahead of
	// the clock, so the check does not depend on how fast the test runs) is
	// read on every call: a same-size rewrite that keeps its mtime (coarse
	// timestamps) is still picked up.
	if err := os.WriteFile(f.jwks, jwksB, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := time.Now().Add(time.Hour).Truncate(time.Second).Add(123 * time.Millisecond)
	if err := os.Chtimes(f.jwks, fresh, fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tokB); err != nil {
		t.Fatal(err)
	}
	if s := fileSnap(t, f.v); s == nil || !s.racy {
		t.Fatalf("a not yet aged file gave a trusted snapshot (%v)", s != nil)
	}
	if err := os.WriteFile(f.jwks, jwksA, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f.jwks, fresh, fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tokB); err == nil {
		t.Fatal("racy rewrite keeping the mtime: the removed key still verifies")
	}
	if _, err := f.verify(tokA); err != nil {
		t.Fatalf("racy rewrite keeping the mtime: the new key: %v", err)
	}

	// Removal fails closed at once.
	if err := os.Remove(f.jwks); err != nil {
		t.Fatal(err)
	}
	_, err := f.verify(tokA)
	wantAuthError(t, err, CodeInvalidToken, "could not be read")
}

func TestRacyWindow(t *testing.T) {
	for _, tc := range []struct {
		mtime time.Time
		want  time.Duration
	}{
		{time.Unix(1_750_000_000, 0), 2 * time.Second},
		{time.Unix(1_750_000_000, 1), 50 * time.Millisecond},
		{time.Unix(1_750_000_000, 999_999_999), 50 * time.Millisecond},
	} {
		if got := racyWindow(tc.mtime); got != tc.want {
			t.Errorf("racyWindow(%v) = %v, want %v", tc.mtime, got, tc.want)
		}
	}
}

// TestJWKSFileWatched: with a watcher, an unchanged JWKS file is neither
// read nor stat-ed again, and every change takes effect on the very next
// request — even an in-place rewrite that keeps the size and the mtime of an
// hour-old file, which no stat can tell apart.
func TestJWKSFileWatched(t *testing.T) {
	w := fswatch.New()
	defer w.Close()
	f := newFixture(t, &VerifierOptions{Watcher: w})
	if fs := f.v.keys.(*fileSource); fs.watch.Stamp() == 0 {
		t.Skip("the JWKS directory cannot be watched here")
	}
	a, b := f.key, authtest.NewKey("by-secondary0")
	tokA, tokB := authtest.Mint(a, turnClaims()), authtest.Mint(b, turnClaims())
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	write := func(k authtest.Key) {
		t.Helper()
		if err := os.WriteFile(f.jwks, authtest.JWKS(k), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f.jwks, old, old); err != nil {
			t.Fatal(err)
		}
	}
	write(a)
	if _, err := f.verify(tokA); err != nil {
		t.Fatal(err)
	}
	snap := fileSnap(t, f.v)
	for i := 0; i < 3; i++ {
		if _, err := f.verify(tokA); err != nil {
			t.Fatal(err)
		}
	}
	if fileSnap(t, f.v) != snap || snap.stamp == 0 {
		t.Fatal("an unchanged watched file was checked again")
	}

	write(b) // same inode, same size, same mtime
	if _, err := f.verify(tokA); err == nil {
		t.Fatal("in-place rewrite keeping size and mtime: the removed key still verifies")
	}
	if _, err := f.verify(tokB); err != nil {
		t.Fatalf("in-place rewrite: the new key: %v", err)
	}

	tmp := filepath.Join(f.dir, "next.json")
	if err := os.WriteFile(tmp, authtest.JWKS(a), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, f.jwks); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tokB); err == nil {
		t.Fatal("rename: the removed key still verifies")
	}
	if _, err := f.verify(tokA); err != nil {
		t.Fatalf("rename: the new key: %v", err)
	}

	if err := os.Remove(f.jwks); err != nil {
		t.Fatal(err)
	}
	_, err := f.verify(tokA)
	wantAuthError(t, err, CodeInvalidToken, "could not be read")
	write(a)
	if _, err := f.verify(tokA); err != nil {
		t.Fatalf("recreated: %v", err)
	}
}
