package auth

import (
	"math/rand/v2"
	"testing"
)

// TestConnectLifetimeIgnoresLeeway: for any issue time, lifetime, clock and
// leeway, a connect token with iat is refused for its lifetime exactly when
// exp − iat exceeds ten minutes; the leeway only widens comparisons with the
// gateway's clock (a token without iat).
func TestConnectLifetimeIgnoresLeeway(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 15))
	limit := MaxConnectLifetime.Seconds()
	for range 100_000 {
		iat := float64(1_750_000_000 + r.IntN(10_000))
		life := float64(r.IntN(1400)) - 100 + float64(r.IntN(4))/4
		now := iat + float64(r.IntN(1400)) - 700
		leeway := float64(r.IntN(301))
		tt := tokenTimes{exp: iat + life, iat: iat, hasIat: true, connect: true}
		if got, want := tt.connectTooLong(now, leeway) != nil, life > limit; got != want {
			t.Fatalf("iat %v exp-iat %v now %v leeway %v: refused %v, want %v", iat, life, now, leeway, got, want)
		}
		tt.hasIat = false
		if got, want := tt.connectTooLong(now, leeway) != nil, tt.exp-now > limit+leeway; got != want {
			t.Fatalf("no iat, exp-now %v leeway %v: refused %v, want %v", tt.exp-now, leeway, got, want)
		}
	}
}
