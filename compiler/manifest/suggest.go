package manifest

import "strings"

// Suggest returns the candidate nearest to s when it is close enough to be
// a likely typo: an optimal-string-alignment edit distance (a transposition
// counts as one edit) of at most a third of the longer word, and at least 1.
// Letter case is ignored. Ties go to the candidate listed first.
func Suggest(s string, candidates []string) (string, bool) {
	if len(s) > 64 {
		return "", false
	}
	best, bestDist := "", -1
	ls := strings.ToLower(s)
	for _, c := range candidates {
		dist := distance(ls, strings.ToLower(c))
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

// distance is the optimal-string-alignment distance between a and b, by runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
