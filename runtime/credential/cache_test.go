package credential

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/fswatch"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// TestCredCache: the cached record follows every change of its file — a
// new record renamed into place, an in-place rewrite that keeps the size
// and the mtime (watched only: no stat can see it), removal — on the very
// next call after a poll, with and without a watch on the vault.
func TestCredCache(t *testing.T) {
	for _, watched := range []bool{false, true} {
		name := map[bool]string{false: "stat", true: "watched"}[watched]
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "vault")
			st, err := vault.Open(dir, bytes.Repeat([]byte{7}, 32))
			if err != nil {
				t.Fatal(err)
			}
			w := fswatch.New()
			defer w.Close()
			var cc credCache
			if watched {
				cc.watch = w.Dir(dir, true)
				if cc.watch.Stamp() == 0 {
					t.Skip("the vault directory cannot be watched here")
				}
			}
			put := func(secret string) {
				t.Helper()
				if err := st.Put(&vault.Connection{Sub: "s", Connector: "github", Account: "default", Kind: vault.KindStatic,
					Status: vault.StatusActive, Secret: secret, CreatedAt: "2026-01-01T00:00:00.000Z", UpdatedAt: "2026-01-01T00:00:00.000Z"}); err != nil {
					t.Fatal(err)
				}
			}
			get := func() (string, error) {
				t.Helper()
				w.Poll()
				c, err := cc.get(st, "s", "github", "default")
				if err != nil {
					return "", err
				}
				return c.Secret, nil
			}
			want := func(secret string) {
				t.Helper()
				if got, err := get(); err != nil || got != secret {
					t.Fatalf("secret %q (%v), want %q", got, err, secret)
				}
			}
			put("AAAA")
			want("AAAA")
			want("AAAA")
			if e := cc.m[credKey{"s", "github", "default"}]; watched && e.stamp == 0 {
				t.Error("a watched entry carries no stamp")
			}
			put("BBBB") // renamed into place
			want("BBBB")

			if watched { // in place, same size, same mtime
				path := filepath.Join(dir, vault.FileName("s", "github", "default"))
				fi, _ := os.Stat(path)
				keep, _ := os.ReadFile(path)
				put("CCCC")
				want("CCCC")
				if err := os.WriteFile(path, keep, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
				want("BBBB")
			}
			if err := st.Delete("s", "github", "default"); err != nil {
				t.Fatal(err)
			}
			if got, err := get(); err == nil {
				t.Fatalf("a removed record still answers %q", got)
			}
			time.Sleep(time.Millisecond)
			put("DDDD")
			want("DDDD")
		})
	}
}
