package auth

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/anvil-dev/anvil/runtime/auth/authtest"
)

func FuzzVerify(f *testing.F) {
	fx := newFixture(f, nil)
	good := authtest.Mint(fx.key, turnClaims())
	f.Add(good)
	f.Add(authtest.Mint(fx.key, connectClaims()))
	f.Add(authtest.Mint(fx.key, with(turnClaims(), "by_grants", "x")))
	f.Add(authtest.SignRaw(fx.key, []byte(`{"alg":"EdDSA"}`), []byte(`[]`)))
	f.Add(authtest.SignRaw(fx.key, []byte(`{"alg":"none"}`), []byte(`{}`)))
	f.Add("")
	f.Add(".")
	f.Add("..")
	f.Add("a.b.c")
	f.Add(good + ".")
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, token string) {
		c, err := fx.v.Verify(context.Background(), "Bearer "+token)
		if (c == nil) == (err == nil) {
			t.Fatalf("claims %v and error %v", c, err)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status != 401 || (e.Code != CodeInvalidToken && e.Code != CodeInvalidRequest) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if c.Subject == "" || c.Issuer != testIssuer || c.Grants == nil || c.Fingerprint() == "" {
			t.Fatalf("accepted odd claims %+v", c)
		}
	})
}

// BenchmarkVerify measures a full verification (cold: the cache off) and a
// remembered token (cached: the JWKS file is still read and compared on every
// call).
func BenchmarkVerify(b *testing.B) {
	for _, bc := range []struct {
		name  string
		cache int
	}{{"cold", -1}, {"cached", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			f := newFixture(b, &VerifierOptions{CacheSize: bc.cache})
			h := "Bearer " + authtest.Mint(f.key, turnClaims())
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.v.Verify(ctx, h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("cached-parallel", func(b *testing.B) {
		f := newFixture(b, nil)
		hs := make([]string, 16)
		for i := range hs {
			hs[i] = "Bearer " + authtest.Mint(f.key, with(turnClaims(), "by_turn", fmt.Sprint(i)))
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, err := f.v.Verify(context.Background(), hs[i%len(hs)]); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
}
