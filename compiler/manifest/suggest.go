package manifest

import "unicode"

// maxSuggestLen bounds (in bytes) the words Suggest finds a suggestion for.
const maxSuggestLen = 64

// Suggest returns the candidate nearest to s when it is close enough to be
// a likely typo: an optimal-string-alignment edit distance (a transposition
// counts as one edit) of at most a third of the longer word, and at least 1.
// Letter case is ignored. Ties go to the candidate listed first. A word
// longer than 64 bytes gets no suggestion.
//
// The work is linear in the candidates' total length and at most about
// 64 × 96 steps for each candidate, however long the candidates are.
func Suggest(s string, candidates []string) (string, bool) {
	best, ok, _ := suggest(s, candidates)
	return best, ok
}

// suggest is Suggest, also returning the number of distance-table cells
// it filled (the work the tests bound).
//
// Only a nearest candidate within the limit is suggested, and a suggested
// candidate b (of lb runes, for s of ls runes) has a distance d with
// |ls − lb| ≤ d ≤ max(1, max(ls, lb)/3), so lb ≤ 3·ls/2 and d ≤ max(1, ls/2).
// A candidate farther than that cannot be the answer, and cannot hide it
// either: the nearest candidate is then nearer. So distances are computed
// only up to that bound, and then only below the best distance found so far
// (ties keep the earlier candidate), skipping candidates whose length alone
// puts them out of reach. The result is the same as computing every
// distance in full.
func suggest(s string, candidates []string) (string, bool, int) {
	if len(s) > maxSuggestLen {
		return "", false, 0
	}
	var w speller
	w.a = lowerRunes(w.a[:0], s)
	for _, r := range w.a {
		w.hist[r%histSize]++
	}
	ls := len(w.a)
	best, bestDist := "", max(1, ls/2)+1
	found := false
	for _, c := range candidates {
		// A candidate has at most len(c) runes and at least a quarter of
		// that: skip those out of reach before decoding them.
		if len(c)+bestDist <= ls || (len(c)+3)/4 >= ls+bestDist {
			continue
		}
		w.b = lowerRunes(w.b[:0], c)
		if w.lowerBound() >= bestDist {
			continue
		}
		if dist := w.distance(bestDist - 1); dist < bestDist {
			best, bestDist, found = c, dist, true
		}
	}
	if !found {
		return "", false, w.cells
	}
	limit := max(ls, runeCount(best)) / 3
	if limit < 1 {
		limit = 1
	}
	if bestDist > limit {
		return "", false, w.cells
	}
	return best, true, w.cells
}

// speller holds the buffers of one Suggest call.
type speller struct {
	a, b             []rune
	hist             [histSize]int // how often a's runes fall in each bucket
	prev2, prev, cur []int
	cells            int
}

// histSize buckets runes by their value modulo histSize: ASCII runes each
// have their own.
const histSize = 128

// lowerBound is a lower bound of the distance between w.a and w.b, in time
// linear in w.b. An edit changes the length by at most 1, and the
// difference between the words' rune counts (bucket by bucket, summed) by
// at most 2 (a substitution) or 1 (an insertion or deletion, which alone
// change the length); so with i insertions and deletions and s
// substitutions, i ≥ |len(a) − len(b)| =: D and i + 2s ≥ L1, and the
// distance i + s ≥ (L1 + D) / 2. Merging runes into buckets only lowers
// L1, so the bound holds.
func (w *speller) lowerBound() int {
	l1 := len(w.a)
	for _, r := range w.b {
		if w.hist[r%histSize] > 0 {
			l1--
		} else {
			l1++
		}
		w.hist[r%histSize]--
	}
	for _, r := range w.b {
		w.hist[r%histSize]++
	}
	return (l1 + abs(len(w.a)-len(w.b)) + 1) / 2
}

// distance is the optimal-string-alignment distance between w.a and w.b
// when it is at most k, and some number above k otherwise.
func (w *speller) distance(k int) int {
	a, b := w.a, w.b
	n := len(b) + 1
	w.prev2 = grow(w.prev2, n)
	w.prev = grow(w.prev, n)
	w.cur = grow(w.cur, n)
	prev2, prev, cur := w.prev2, w.prev, w.cur
	for j := range prev {
		prev[j] = j
	}
	// Every value in a row is at least the smaller of the least value of
	// the row above and the least value two rows above plus one, so once
	// the last row's least value and the one before's plus one are both
	// beyond k, so is every later row.
	lastMin := 0 // row 0 holds 0..len(b)
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		w.cells += len(b)
		if rowMin > k && lastMin+1 > k {
			return k + 1
		}
		lastMin = rowMin
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// lowerRunes appends the runes of s, lower-cased as strings.ToLower does,
// to buf.
func lowerRunes(buf []rune, s string) []rune {
	for _, r := range s {
		buf = append(buf, unicode.ToLower(r))
	}
	return buf
}

func runeCount(s string) int {
	n := 0
	for range s {
		n++
	}
	return n
}

func grow(b []int, n int) []int {
	if cap(b) < n {
		return make([]int, n)
	}
	return b[:n]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
