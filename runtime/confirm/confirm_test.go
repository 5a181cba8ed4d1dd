package confirm

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newSigner(t *testing.T, key []byte, c *clock) *Signer {
	t.Helper()
	s, err := New(key, &Options{TTL: time.Minute, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAccept(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)}
	key := NewKey()
	s := newSigner(t, key, c)
	digest := ArgumentsDigest("abc")
	state, exp := s.Issue("tenant\x00ada", "github__create", digest)
	if !exp.After(c.t) || len(state) > MaxStateLen {
		t.Fatalf("expiry %v, state of %d bytes", exp, len(state))
	}
	code := func(e *Error) string {
		if e == nil {
			return ""
		}
		return e.Code
	}
	ctx := context.Background()
	cases := []struct {
		name, state, sub, tool string
		digest                 [sha256.Size]byte
		want                   string
	}{
		{"another subject", state, "tenant\x00bob", "github__create", digest, CodeMismatch},
		{"another tool", state, "tenant\x00ada", "github__delete", digest, CodeMismatch},
		{"other arguments", state, "tenant\x00ada", "github__create", ArgumentsDigest("abd"), CodeMismatch},
		{"forged payload", forge(t, state), "tenant\x00ada", "github__create", digest, CodeInvalid},
		{"truncated", state[:len(state)-3], "tenant\x00ada", "github__create", digest, CodeInvalid},
		{"empty", "", "tenant\x00ada", "github__create", digest, CodeInvalid},
		{"the good answer", state, "tenant\x00ada", "github__create", digest, ""},
		{"the same answer again", state, "tenant\x00ada", "github__create", digest, CodeReplayed},
	}
	for _, tc := range cases {
		if got := code(s.Accept(ctx, tc.state, tc.sub, tc.tool, tc.digest)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// Another key (another gateway's) does not verify it.
	other := newSigner(t, NewKey(), c)
	state2, _ := s.Issue("tenant\x00ada", "github__create", digest)
	if got := code(other.Accept(ctx, state2, "tenant\x00ada", "github__create", digest)); got != CodeInvalid {
		t.Errorf("another key: %q", got)
	}
	// A replica with the same key does, once across both when they share
	// a spender.
	shared := NewLocalSpender(c.now)
	r1, _ := New(key, &Options{TTL: time.Minute, Now: c.now, Spend: shared})
	r2, _ := New(key, &Options{TTL: time.Minute, Now: c.now, Spend: shared})
	state3, _ := r1.Issue("tenant\x00ada", "github__create", digest)
	if got := code(r2.Accept(ctx, state3, "tenant\x00ada", "github__create", digest)); got != "" {
		t.Errorf("the other replica: %q", got)
	}
	if got := code(r1.Accept(ctx, state3, "tenant\x00ada", "github__create", digest)); got != CodeReplayed {
		t.Errorf("replayed on the first replica: %q", got)
	}
	// Expired: at its expiry and after.
	state4, exp4 := s.Issue("tenant\x00ada", "github__create", digest)
	c.t = exp4
	if got := code(s.Accept(ctx, state4, "tenant\x00ada", "github__create", digest)); got != CodeExpired {
		t.Errorf("expired: %q", got)
	}
}

// forge changes one byte of a state's payload (its expiry, a day later)
// and keeps its MAC.
func forge(t *testing.T, state string) string {
	t.Helper()
	p, m, _ := strings.Cut(state[len(version):], ".")
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		t.Fatal(err)
	}
	b[5]++
	return version + base64.RawURLEncoding.EncodeToString(b) + "." + m
}

func TestNewRefusesShortKeys(t *testing.T) {
	if _, err := New(make([]byte, 16), nil); err == nil {
		t.Error("a 16-byte key was accepted")
	}
}

// FuzzParse: no state, however malformed, panics, and any state Parse
// accepts re-encodes to the payload it was read from.
func FuzzParse(f *testing.F) {
	s, _ := New(make([]byte, KeySize), nil)
	good, _ := s.Issue("tenant\x00ada", "github__create", ArgumentsDigest("x"))
	for _, seed := range []string{good, "", version, version + ".", version + "AAAA.AAAA", good + "=", strings.Repeat("a", MaxStateLen+1)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, state string) {
		c, payload, mac, err := Parse(state)
		if err != nil {
			return
		}
		if len(mac) != sha256.Size {
			t.Fatalf("a MAC of %d bytes was accepted", len(mac))
		}
		if got := encode(&c); string(got) != string(payload) {
			t.Fatalf("claims %+v re-encode to %x, not %x", c, got, payload)
		}
	})
}
