package grant

import "unicode/utf8"

// MatchGlob reports whether glob matches the whole of name. In a glob, '*'
// matches any run of characters (dots included), '?' matches exactly one
// character, and every other character matches itself.
//
// It allocates nothing and never backtracks past the most recent '*' (leftmost
// greedy matching of the pieces between stars is correct for this grammar), so
// its worst case is O(len(glob)·len(name)) with no exponential blow-up, and it
// is linear in len(name) for globs whose pieces between stars are short or
// absent ("issues.*", "*.list", "github.issues.?et").
func MatchGlob(glob, name string) bool {
	px, nx := 0, 0
	starPx, starNx := -1, 0 // the last '*' seen, and where its run ends now
	for px < len(glob) || nx < len(name) {
		if px < len(glob) {
			switch c := glob[px]; c {
			case '*':
				starPx, starNx = px, nx
				px++
				continue
			case '?':
				if nx < len(name) {
					nx += runeWidth(name, nx)
					px++
					continue
				}
			default:
				if nx < len(name) && name[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		// Mismatch: let the last star swallow one more character and retry.
		if starPx >= 0 && starNx < len(name) {
			starNx += runeWidth(name, starNx)
			px, nx = starPx+1, starNx
			continue
		}
		return false
	}
	return true
}

// runeWidth is the byte width of the character starting at s[i].
func runeWidth(s string, i int) int {
	if s[i] < utf8.RuneSelf {
		return 1
	}
	_, w := utf8.DecodeRuneInString(s[i:])
	return w
}

// ShortID is the operation id without its "<service>." prefix: with
// serviceID set, id minus serviceID+"."; otherwise id after its first dot.
// It returns id itself when there is no such prefix.
func ShortID(id, serviceID string) string {
	if serviceID != "" {
		if len(id) > len(serviceID) && id[len(serviceID)] == '.' && id[:len(serviceID)] == serviceID {
			return id[len(serviceID)+1:]
		}
		return id
	}
	for i := 0; i < len(id); i++ {
		if id[i] == '.' {
			return id[i+1:]
		}
	}
	return id
}

// Names reports whether one of the entry's globs matches the AIR operation
// id, or short (the id without its service prefix, see [ShortID]).
func (e *Entry) Names(id, short string) bool {
	for _, g := range e.Operations {
		if MatchGlob(g, id) || (short != id && MatchGlob(g, short)) {
			return true
		}
	}
	return false
}
