package lower

import (
	"fmt"
	"strconv"
	"strings"
)

// routing holds the three routed names of one operation plus its id.
type routing struct {
	ID        string
	Canonical string
	CLI       string
	Tool      string
	tokens    []string        // collision suffix candidates (pathTokens)
	used      map[string]bool // tokens already appended

}

func (r *routing) appendSuffix(service, tok string) {
	r.ID += "_" + tok
	r.Canonical += "_" + tok
	r.CLI += "_" + tok
	r.Tool = service + "_" + r.Canonical
	if r.used == nil {
		r.used = map[string]bool{}
	}
	r.used[tok] = true
}

// collisionNote is one resolved collision, reported as naming_collision_resolved.
type collisionNote struct {
	op      int
	message string
}

const maxCollisionRounds = 6

// resolveCollisions makes the CLI command, the tool name and the id of every
// operation unique. It checks the CLI commands, then the tool names, then the
// ids, and repeats until nothing collides. In a group of operations sharing a
// name, each operation gets the shortest of its path tokens that no other
// member of the group has (literal segments first, then parameter names, then
// the method; failing that, the shortest token some other member lacks),
// appended as "_tok" to its id, canonical name, CLI command and tool name. A member without such a token keeps its name when it is the only
// one; otherwise the members without a token after the first get "_2", "_3",
// … . After a bounded number of rounds, any name still shared gets a numeric
// suffix, so the result is always unique.
func resolveCollisions(service string, ops []*routing) []collisionNote {
	var notes []collisionNote
	fields := []struct {
		label string
		get   func(*routing) string
	}{
		{"CLI command", func(r *routing) string { return r.CLI }},
		{"tool name", func(r *routing) string { return r.Tool }},
		{"id", func(r *routing) string { return r.ID }},
	}
	for round := 0; round < maxCollisionRounds; round++ {
		changed := false
		for _, f := range fields {
			for _, g := range groupsOf(ops, f.get) {
				changed = true
				notes = append(notes, splitGroup(service, ops, g, f.label, f.get, round == maxCollisionRounds-1)...)
			}
		}
		if !changed {
			return notes
		}
	}
	// Last resort: numeric suffixes until every name is unique.
	for {
		changed := false
		for _, f := range fields {
			for _, g := range groupsOf(ops, f.get) {
				changed = true
				notes = append(notes, splitGroup(service, ops, g, f.label, f.get, true)...)
			}
		}
		if !changed {
			return notes
		}
	}
}

// groupsOf returns the groups of operation indexes sharing a name, in order of first appearance.
func groupsOf(ops []*routing, get func(*routing) string) [][]int {
	idx := make(map[string]int, len(ops))
	var groups [][]int
	for i, r := range ops {
		k := get(r)
		if g, ok := idx[k]; ok {
			groups[g] = append(groups[g], i)
			continue
		}
		idx[k] = len(groups)
		groups = append(groups, []int{i})
	}
	out := groups[:0]
	for _, g := range groups {
		if len(g) > 1 {
			out = append(out, g)
		}
	}
	return out
}

func splitGroup(service string, ops []*routing, g []int, label string, get func(*routing) string, numericOnly bool) []collisionNote {
	shared := get(ops[g[0]])
	suffix := make([]string, len(g))
	if !numericOnly {
		counts := tokenCounts(ops, g)
		skip := nameWords(shared)
		for i, oi := range g {
			suffix[i] = distinguishingToken(ops[oi], len(g), counts, skip)
		}
	}
	first := true
	n := 1
	for i := range g {
		if suffix[i] != "" {
			continue
		}
		if first {
			first = false
			// The first member without a token keeps its name only if every
			// other member gets a token or a number.
			continue
		}
		n++
		suffix[i] = strconv.Itoa(n)
	}
	var notes []collisionNote
	for i, oi := range g {
		if suffix[i] == "" {
			continue
		}
		ops[oi].appendSuffix(service, suffix[i])
		notes = append(notes, collisionNote{op: oi, message: fmt.Sprintf(
			"%s %q is shared by %d operations; appended %q to this operation's names (id %s, tool %s, CLI %q)",
			label, shared, len(g), "_"+suffix[i], ops[oi].ID, ops[oi].Tool, ops[oi].CLI)})
	}
	return notes
}

// distinguishingToken returns the shortest token of r, a member of a
// group of n, that no other member has; failing that, the shortest that
// at least one other member lacks (it splits the group, and the next round
// tells the rest apart); ties go to the earlier token. counts holds, for
// each token, how many members have it (tokenCounts). Tokens already
// appended, and words of the shared name itself, are skipped. It returns
// "" when every token of r is shared by the whole group.
func distinguishingToken(r *routing, n int, counts map[string]int, skip map[string]bool) string {
	best, partial := "", ""
	for _, t := range r.tokens {
		if r.used[t] || skip[t] {
			continue
		}
		others := counts[t] - 1 // r has t
		switch {
		case others == 0:
			if best == "" || len(t) < len(best) {
				best = t
			}
		case others < n-1:
			if partial == "" || len(t) < len(partial) {
				partial = t
			}
		}
	}
	if best != "" {
		return best
	}
	return partial
}

// tokenCounts counts, for each token, the members of group g that have it
// (once per member, however often its tokens repeat it).
func tokenCounts(ops []*routing, g []int) map[string]int {
	counts := map[string]int{}
	for _, oi := range g {
		seen := make(map[string]bool, len(ops[oi].tokens))
		for _, t := range ops[oi].tokens {
			if !seen[t] {
				seen[t] = true
				counts[t]++
			}
		}
	}
	return counts
}

// nameWords splits a name at spaces, dots and underscores.
func nameWords(name string) map[string]bool {
	w := map[string]bool{}
	for _, x := range strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '.' || r == '_' }) {
		w[x] = true
	}
	return w
}
