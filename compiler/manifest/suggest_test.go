package manifest

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// suggestReference is Suggest computed the plain way: every distance in
// full, then the limit. Suggest must answer exactly as it does.
func suggestReference(s string, candidates []string) (string, bool) {
	if len(s) > 64 {
		return "", false
	}
	best, bestDist := "", -1
	ls := strings.ToLower(s)
	for _, c := range candidates {
		dist := fullDistance(ls, strings.ToLower(c))
		if bestDist < 0 || dist < bestDist {
			best, bestDist = c, dist
		}
	}
	if bestDist < 0 {
		return "", false
	}
	limit := max(len([]rune(s)), len([]rune(best))) / 3
	if limit < 1 {
		limit = 1
	}
	if bestDist > limit {
		return "", false
	}
	return best, true
}

func fullDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// TestSuggestMatchesReference compares Suggest with the plain computation
// on words from small alphabets (so that many are near one another), with
// case, non-ASCII and invalid UTF-8.
func TestSuggestMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabets := []string{"ab", "abc", "abcdeé", "aAbB_", "xyz\xff"}
	word := func(alpha []rune, n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteRune(alpha[rng.IntN(len(alpha))])
		}
		return b.String()
	}
	for iter := 0; iter < 20000; iter++ {
		alpha := []rune(alphabets[rng.IntN(len(alphabets))])
		s := word(alpha, rng.IntN(14))
		cands := make([]string, rng.IntN(6))
		for i := range cands {
			switch rng.IntN(4) {
			case 0: // an edit or two away from s
				r := []rune(s)
				for e := rng.IntN(3); e >= 0 && len(r) > 0; e-- {
					p := rng.IntN(len(r))
					r[p] = alpha[rng.IntN(len(alpha))]
				}
				cands[i] = string(r)
			case 1:
				cands[i] = strings.ToUpper(s) + word(alpha, rng.IntN(3))
			default:
				cands[i] = word(alpha, rng.IntN(20))
			}
		}
		got, gotOK := Suggest(s, cands)
		want, wantOK := suggestReference(s, cands)
		if got != want || gotOK != wantOK {
			t.Fatalf("Suggest(%q, %q) = %q, %v; want %q, %v", s, cands, got, gotOK, want, wantOK)
		}
	}
	// The grammar's own lists, with every word one edit away.
	for _, list := range [][]string{topKeys, authKeys, providerKeys, operationKeys, actions, words(authTypes)} {
		for _, k := range list {
			for i := 0; i <= len(k); i++ {
				for _, typo := range []string{k[:i] + k[min(i+1, len(k)):], k[:i] + "x" + k[i:], strings.ToUpper(k[:i]) + k[i:]} {
					got, gotOK := Suggest(typo, list)
					want, wantOK := suggestReference(typo, list)
					if got != want || gotOK != wantOK {
						t.Fatalf("Suggest(%q) = %q, %v; want %q, %v", typo, got, gotOK, want, wantOK)
					}
				}
			}
		}
	}
}

// TestSuggestWork checks the distance work stays bounded whatever the
// candidates: long ones are skipped unread, and far ones cost little.
func TestSuggestWork(t *testing.T) {
	huge := strings.Repeat("side_effect", 100000) // 1.1 MB
	tests := []struct {
		name      string
		s         string
		cands     []string
		want      string
		wantCells int // at most
	}{
		{"long candidates", "side_efect", []string{huge, huge, huge, "side_effect"}, "side_effect", 10 * 11},
		{"a long word", strings.Repeat("x", 65), []string{strings.Repeat("x", 65)}, "", 0},
		{"far candidates", "inverse", append(make([]string, 0, 10000), strings.Split(strings.Repeat("qqqqqqq ", 10000), " ")...), "", 0},
		{"the grammar's longest list", "idempotenc1234", operationKeys, "idempotency", 600}, // of 3220 for every table in full,
	}
	for _, tt := range tests {
		got, _, cells := suggest(tt.s, tt.cands)
		if got != tt.want || cells > tt.wantCells {
			t.Errorf("%s: suggest = %q after %d cells, want %q after at most %d", tt.name, got, cells, tt.want, tt.wantCells)
		}
	}
}
