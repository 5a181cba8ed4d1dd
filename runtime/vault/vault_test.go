package vault

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func testKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func openStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	s, err := Open(dir, testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func TestFileNameKnownTuple(t *testing.T) {
	const coords = `["local:ada","github","default"]`
	if got := Coordinates("local:ada", "github", "default"); got != coords {
		t.Fatalf("Coordinates = %s, want %s", got, coords)
	}
	sum := sha256.Sum256([]byte(coords))
	want := hex.EncodeToString(sum[:]) + ".json"
	if got := FileName("local:ada", "github", "default"); got != want {
		t.Fatalf("FileName = %s, want %s", got, want)
	}
}

func TestCoordinatesLikeJSONStringify(t *testing.T) {
	tests := []struct{ sub, want string }{
		{`a"b\c`, `["a\"b\\c","c","a"]`},
		{"<&>", `["<&>","c","a"]`},
		{"tab\tnl\ncr\rbs\bff\f", `["tab\tnl\ncr\rbs\bff\f","c","a"]`},
		{"\x01\x1f\x7f", `["\u0001\u001f` + "\x7f" + `","c","a"]`},
		{"ø\u2028ö", "[\"ø\u2028ö\",\"c\",\"a\"]"},
		{"bad\xffutf8", "[\"bad\uFFFDutf8\",\"c\",\"a\"]"},
	}
	for _, tt := range tests {
		if got := Coordinates(tt.sub, "c", "a"); got != tt.want {
			t.Errorf("Coordinates(%q) = %s, want %s", tt.sub, got, tt.want)
		}
	}
}

func TestRoundTripAndModes(t *testing.T) {
	s, dir := openStore(t)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %04o, want 0700", fi.Mode().Perm())
	}
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	s.now = func() time.Time { return t0 }
	exp := int64(1735787045006)
	c := &Connection{Sub: "local:ada", Connector: "github", Account: "default", Kind: KindOAuth,
		AccessToken: "at-secret", RefreshToken: "rt-secret", ExpiresAt: &exp, Scope: "repo"}
	if err := s.Put(c); err != nil {
		t.Fatal(err)
	}
	if c.CreatedAt != "2025-01-02T03:04:05.006Z" || c.UpdatedAt != c.CreatedAt || c.Status != StatusActive {
		t.Fatalf("timestamps/status not set: %+v %s %s", c, c.CreatedAt, c.UpdatedAt)
	}
	name := filepath.Join(dir, FileName("local:ada", "github", "default"))
	fi, err = os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("record mode %04o, want 0600", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(name)
	if bytes.Contains(raw, []byte("secret")) || bytes.Contains(raw, []byte("local:ada")) {
		t.Fatal("record is not encrypted")
	}
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), `{"v":1,"iv":"`) || len(rec) != 4 {
		t.Fatalf("record shape: %s", raw)
	}
	iv, _ := base64.StdEncoding.DecodeString(rec["iv"].(string))
	tag, _ := base64.StdEncoding.DecodeString(rec["tag"].(string))
	if len(iv) != 12 || len(tag) != 16 {
		t.Fatalf("iv %d bytes, tag %d bytes", len(iv), len(tag))
	}
	got, err := s.Get("local:ada", "github", "default")
	if err != nil {
		t.Fatal(err)
	}
	if got.ExpiresAt == nil || *got.ExpiresAt != exp {
		t.Fatal("expiresAt lost")
	}
	g2 := *got
	g2.ExpiresAt = c.ExpiresAt
	if g2 != *c {
		t.Fatalf("round trip: got %#v", got)
	}
	if got.AccessToken != "at-secret" || got.RefreshToken != "rt-secret" {
		t.Fatal("secrets lost")
	}

	// An update keeps createdAt and moves updatedAt.
	t1 := t0.Add(time.Hour)
	s.now = func() time.Time { return t1 }
	upd := &Connection{Sub: "local:ada", Connector: "github", Account: "default", Kind: KindStatic, Secret: "pat"}
	if err := s.Put(upd); err != nil {
		t.Fatal(err)
	}
	if upd.CreatedAt != "2025-01-02T03:04:05.006Z" || upd.UpdatedAt != "2025-01-02T04:04:05.006Z" {
		t.Fatalf("update timestamps %s %s", upd.CreatedAt, upd.UpdatedAt)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory has %d entries", len(entries))
	}
}

func TestOpenTightensDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, testKey(t)); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %04o", fi.Mode().Perm())
	}
	if _, err := Open(dir, make([]byte, 16)); !errors.Is(err, ErrKey) {
		t.Fatalf("short key: %v", err)
	}
}

func TestPlaintextShape(t *testing.T) {
	s, dir := openStore(t)
	s.now = func() time.Time { return time.UnixMilli(0) }
	c := &Connection{Sub: "s", Connector: "c", Account: "a", Kind: KindStatic, Secret: "<x>"}
	if err := s.Put(c); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, FileName("s", "c", "a")))
	var rec record
	_ = json.Unmarshal(raw, &rec)
	iv, _ := base64.StdEncoding.DecodeString(rec.IV)
	tag, _ := base64.StdEncoding.DecodeString(rec.Tag)
	ct, _ := base64.StdEncoding.DecodeString(rec.CT)
	plain, err := s.aead.Open(nil, iv, append(ct, tag...), []byte(`["s","c","a"]`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sub":"s","connector":"c","account":"a","kind":"static","status":"active","secret":"<x>","createdAt":"1970-01-01T00:00:00.000Z","updatedAt":"1970-01-01T00:00:00.000Z"}`
	if string(plain) != want {
		t.Fatalf("plaintext\n got %s\nwant %s", plain, want)
	}
}

// rewrite applies f to the stored record of (s, c, a).
func rewrite(t *testing.T, dir string, f func(r *record)) {
	t.Helper()
	name := filepath.Join(dir, FileName("s", "c", "a"))
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	f(&r)
	raw, _ = json.Marshal(r)
	if err := os.WriteFile(name, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

func flipB64(s string) string {
	b, _ := base64.StdEncoding.DecodeString(s)
	b[0] ^= 1
	return base64.StdEncoding.EncodeToString(b)
}

func TestUnreadable(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *testing.T, s *Store, dir string)
	}{
		{"tampered ciphertext", func(t *testing.T, s *Store, dir string) {
			rewrite(t, dir, func(r *record) { r.CT = flipB64(r.CT) })
		}},
		{"tampered tag", func(t *testing.T, s *Store, dir string) {
			rewrite(t, dir, func(r *record) { r.Tag = flipB64(r.Tag) })
		}},
		{"tampered iv", func(t *testing.T, s *Store, dir string) {
			rewrite(t, dir, func(r *record) { r.IV = flipB64(r.IV) })
		}},
		{"short iv", func(t *testing.T, s *Store, dir string) {
			rewrite(t, dir, func(r *record) { r.IV = "AAAA" })
		}},
		{"wrong version", func(t *testing.T, s *Store, dir string) {
			rewrite(t, dir, func(r *record) { r.V = 2 })
		}},
		{"not base64", func(t *testing.T, s *Store, dir string) {
			rewrite(t, dir, func(r *record) { r.CT = "!!!" })
		}},
		{"not JSON", func(t *testing.T, s *Store, dir string) {
			_ = os.WriteFile(filepath.Join(dir, FileName("s", "c", "a")), []byte("nope"), 0o600)
		}},
		{"empty file", func(t *testing.T, s *Store, dir string) {
			_ = os.WriteFile(filepath.Join(dir, FileName("s", "c", "a")), nil, 0o600)
		}},
		{"other AAD", func(t *testing.T, s *Store, dir string) {
			// A record for other coordinates copied under this name: the
			// AAD differs, so it does not authenticate.
			if err := s.Put(&Connection{Sub: "s", Connector: "c", Account: "b", Kind: KindStatic, Secret: "x"}); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(filepath.Join(dir, FileName("s", "c", "b")))
			_ = os.WriteFile(filepath.Join(dir, FileName("s", "c", "a")), raw, 0o600)
		}},
		{"coordinates mismatch", func(t *testing.T, s *Store, dir string) {
			// Encrypted with the right AAD but the plaintext names another account.
			c := &Connection{Sub: "s", Connector: "c", Account: "b", Kind: KindStatic, Status: StatusActive}
			plain, _ := json.Marshal(c)
			iv := make([]byte, 12)
			sealed := s.aead.Seal(nil, iv, plain, []byte(Coordinates("s", "c", "a")))
			r := record{V: 1, IV: base64.StdEncoding.EncodeToString(iv),
				Tag: base64.StdEncoding.EncodeToString(sealed[len(sealed)-16:]),
				CT:  base64.StdEncoding.EncodeToString(sealed[:len(sealed)-16])}
			raw, _ := json.Marshal(r)
			_ = os.WriteFile(filepath.Join(dir, FileName("s", "c", "a")), raw, 0o600)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := openStore(t)
			if err := s.Put(&Connection{Sub: "s", Connector: "c", Account: "a", Kind: KindStatic, Secret: "top-secret"}); err != nil {
				t.Fatal(err)
			}
			tt.mutate(t, s, dir)
			_, err := s.Get("s", "c", "a")
			if !errors.Is(err, ErrUnreadable) {
				t.Fatalf("Get error = %v, want ErrUnreadable", err)
			}
			if strings.Contains(err.Error(), "top-secret") {
				t.Fatal("error leaks the secret")
			}
			list, err := s.List("s")
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range list {
				if c.Account == "a" {
					t.Fatal("List returned an unreadable record")
				}
			}
		})
	}
}

func TestWrongKey(t *testing.T) {
	s, dir := openStore(t)
	if err := s.Put(&Connection{Sub: "s", Connector: "c", Account: "a", Kind: KindStatic, Secret: "x"}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(dir, testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get("s", "c", "a"); !errors.Is(err, ErrUnreadable) {
		t.Fatalf("wrong key: %v", err)
	}
	if l, err := other.List("s"); err != nil || len(l) != 0 {
		t.Fatalf("wrong key List: %v %v", l, err)
	}
}

func TestNotFoundAndDelete(t *testing.T) {
	s, _ := openStore(t)
	if _, err := s.Get("s", "c", "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get: %v", err)
	}
	if err := s.Delete("s", "c", "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Delete: %v", err)
	}
	if err := s.Put(&Connection{Sub: "s", Connector: "c", Account: "a", Kind: KindStatic, Secret: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("s", "c", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("s", "c", "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

func TestPutValidation(t *testing.T) {
	s, _ := openStore(t)
	for _, c := range []*Connection{
		nil,
		{Connector: "c", Account: "a", Kind: KindStatic},
		{Sub: "s", Connector: "c", Account: "a", Kind: "magic"},
		{Sub: "s", Connector: "c", Account: "a", Kind: KindStatic, Status: "weird"},
	} {
		if err := s.Put(c); !errors.Is(err, ErrInvalid) {
			t.Errorf("Put(%v) = %v, want ErrInvalid", c, err)
		}
	}
}

func TestListAndStatus(t *testing.T) {
	s, dir := openStore(t)
	for _, c := range []Connection{
		{Sub: "ada", Connector: "jira", Account: "default", Kind: KindOAuth, AccessToken: "t"},
		{Sub: "ada", Connector: "github", Account: "work", Kind: KindStatic, Secret: "x"},
		{Sub: "ada", Connector: "github", Account: "default", Kind: KindStatic, Secret: "y"},
		{Sub: "bob", Connector: "github", Account: "default", Kind: KindStatic, Secret: "z"},
	} {
		c := c
		if err := s.Put(&c); err != nil {
			t.Fatal(err)
		}
	}
	// Junk in the directory is ignored.
	_ = os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hi"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, strings.Repeat("0", 64)+".json"), []byte("{}"), 0o600)

	l, err := s.List("ada")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range l {
		got = append(got, c.Connector+"/"+c.Account)
	}
	if strings.Join(got, ",") != "github/default,github/work,jira/default" {
		t.Fatalf("List = %v", got)
	}
	c, err := s.SetStatus("ada", "jira", "default", StatusNeedsReconnect)
	if err != nil || c.Status != StatusNeedsReconnect {
		t.Fatalf("SetStatus: %v %v", c, err)
	}
	c, _ = s.Get("ada", "jira", "default")
	if c.Active() {
		t.Fatal("still active")
	}
	sum, _ := json.Marshal(c.Summary())
	if strings.Contains(string(sum), `"t"`) || !strings.HasPrefix(string(sum), `{"connector":"jira","account":"default","kind":"oauth","status":"needs_reconnect","updatedAt":`) {
		t.Fatalf("summary %s", sum)
	}
	if fmt.Sprintf("%v %+v %#v", *c, *c, *c) == "" || strings.Contains(fmt.Sprintf("%v %+v %#v", *c, *c, *c), "AccessToken") {
		t.Fatal("printing a connection shows secrets")
	}
}

func TestNeedsRefresh(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	ms := func(d time.Duration) *int64 { v := now.Add(d).UnixMilli(); return &v }
	tests := []struct {
		c    Connection
		want bool
	}{
		{Connection{Kind: KindStatic, Secret: "x"}, false},
		{Connection{Kind: KindOAuth, AccessToken: "t"}, false},
		{Connection{Kind: KindOAuth}, true},
		{Connection{Kind: KindOAuth, AccessToken: "t", ExpiresAt: ms(2 * time.Minute)}, false},
		{Connection{Kind: KindOAuth, AccessToken: "t", ExpiresAt: ms(59 * time.Second)}, true},
		{Connection{Kind: KindOAuth, AccessToken: "t", ExpiresAt: ms(-time.Second)}, true},
	}
	for i, tt := range tests {
		if got := tt.c.NeedsRefresh(now); got != tt.want {
			t.Errorf("%d: NeedsRefresh = %v, want %v", i, got, tt.want)
		}
	}
}

func TestConcurrentPutGet(t *testing.T) {
	s, _ := openStore(t)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acct := fmt.Sprintf("a%d", i%4)
			for j := range 10 {
				if err := s.Put(&Connection{Sub: "s", Connector: "c", Account: acct, Kind: KindStatic, Secret: fmt.Sprint(j)}); err != nil {
					t.Error(err)
					return
				}
				if _, err := s.Get("s", "c", acct); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	l, err := s.List("s")
	if err != nil || len(l) != 4 {
		t.Fatalf("List: %d %v", len(l), err)
	}
}

func TestLockSerialises(t *testing.T) {
	s, _ := openStore(t)
	unlock := s.Lock("s", "c", "a")
	done := make(chan struct{})
	go func() {
		u := s.Lock("s", "c", "a")
		u()
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("second Lock did not wait")
	case <-time.After(20 * time.Millisecond):
	}
	// A different connection is not blocked.
	s.Lock("s", "c", "b")()
	unlock()
	unlock() // idempotent
	<-done
	if len(s.locks.m) != 0 {
		t.Fatalf("locks leaked: %d", len(s.locks.m))
	}
}

func writeKeyFile(t *testing.T, content []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vault.key")
	if err := os.WriteFile(p, content, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadKey(t *testing.T) {
	key := bytes.Repeat([]byte{0xAB}, 32)
	key[0] = '\n' // raw keys may contain whitespace bytes
	hexKey := strings.Repeat("ab", 32)
	tests := []struct {
		name    string
		content []byte
		want    []byte
	}{
		{"raw", key, key},
		{"hex", []byte(hexKey), bytes.Repeat([]byte{0xAB}, 32)},
		{"hex upper with newline", []byte(strings.ToUpper(hexKey) + "\n"), bytes.Repeat([]byte{0xAB}, 32)},
		{"base64", []byte(base64.StdEncoding.EncodeToString(key) + "\n"), key},
		{"base64 unpadded", []byte(base64.RawStdEncoding.EncodeToString(key)), key},
		{"base64url", []byte(base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xFB, 0xFF}, 16))), bytes.Repeat([]byte{0xFB, 0xFF}, 16)},
		{"base64url unpadded", []byte(" " + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{0xFB, 0xFF}, 16)) + " "), bytes.Repeat([]byte{0xFB, 0xFF}, 16)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadKey(writeKeyFile(t, tt.content, 0o600))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("key mismatch")
			}
		})
	}
	bad := []struct {
		name    string
		content []byte
		mode    os.FileMode
		msg     string
	}{
		{"31 bytes", bytes.Repeat([]byte{1}, 31), 0o600, "32-byte key"},
		{"hex 62", []byte(strings.Repeat("cd", 31)), 0o600, "32-byte key"},
		{"base64 of 16", []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 16))), 0o600, "32-byte key"},
		{"64 non-hex", []byte(strings.Repeat("zq", 32)), 0o600, "32-byte key"},
		{"empty", nil, 0o600, "32-byte key"},
		{"group readable", []byte(hexKey), 0o640, "mode 0640"},
		{"world readable", []byte(hexKey), 0o604, "mode 0604"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadKey(writeKeyFile(t, tt.content, tt.mode))
			if !errors.Is(err, ErrKey) {
				t.Fatalf("err = %v, want ErrKey", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, KeyFileEnv) || !strings.Contains(msg, tt.msg) {
				t.Fatalf("message %q lacks %q or %s", msg, tt.msg, KeyFileEnv)
			}
			if len(tt.content) > 4 && strings.Contains(msg, string(tt.content[:8])) {
				t.Fatal("message echoes the key content")
			}
		})
	}
	if _, err := LoadKey(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, ErrKey) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := LoadKey(""); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), KeyFileEnv) {
		t.Fatalf("empty path: %v", err)
	}
}

func TestLoadKeyThenOpen(t *testing.T) {
	// The seed's recipe: 64 hex characters, no newline, mode 0600.
	p := writeKeyFile(t, []byte(strings.Repeat("0f", 32)), 0o600)
	k, err := LoadKey(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "v"), k); err != nil {
		t.Fatal(err)
	}
}

// nodeRecord was written by Node's crypto (createCipheriv("aes-256-gcm"),
// setAAD(coords), getAuthTag) with key 0x0f×32 and iv 0x07×12, as the
// earlier TypeScript gateway writes records.
const nodeRecord = `{"v":1,"iv":"BwcHBwcHBwcHBwcH","tag":"yIAkmzKtut/4rNEk8alGjA==","ct":"+mrDPzYRt3uh3QtOQfZXJ1rzS/OHr/2D1o14O2Gzwnp3qkxATDog/AdCKtAavNd0zC1iiVRF8UpSl5fkl98pNaeyJBrkVvPgcZGaaxTfVcViXOiAmdwu2LLtqZxccsIQ0cZV0uHgzbDXLg3eTFw4xNbQ2ijxNPAJjo+fMgO/Y5ZLxQazblqPrEvo/8uthDWlsnCpd4mNVkN4eBBH3MppoSOzBSrpZsKoYP/NbQ6ndFdVEp5zmpyYU9UVm1yMO1Q="}`

func TestReadsNodeRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	s, err := Open(dir, bytes.Repeat([]byte{0x0f}, 32))
	if err != nil {
		t.Fatal(err)
	}
	name := FileName("local:ada", "github", "default")
	if name != "b378a54bf183416381ab31709ceb166d1b2183658f50d3b8f0d6c1c62ca675fa.json" {
		t.Fatalf("file name %s differs from Node's", name)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(nodeRecord), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := s.Get("local:ada", "github", "default")
	if err != nil {
		t.Fatal(err)
	}
	if c.Secret != "pat-ada" || c.Kind != KindStatic || c.CreatedAt != "2025-01-02T03:04:05.006Z" {
		t.Fatalf("decoded %#v", c)
	}
	l, err := s.List("local:ada")
	if err != nil || len(l) != 1 || l[0].Secret != "pat-ada" {
		t.Fatalf("List: %v %v", l, err)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("HOME", "/home/ada")
	if got := DefaultDir(); got != "/home/ada/.anvil/gateway/vault" {
		t.Fatalf("DefaultDir = %s", got)
	}
	if _, err := Open("", testKey(t)); !errors.Is(err, ErrStorage) {
		t.Fatalf("Open(\"\"): %v", err)
	}
}
