package lower

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// How collisions are resolved, and why this way: a name an agent, a grant
// or a script has learnt must not change because of an operation it has
// nothing to do with. So
//
//   - each kind of name (CLI command, tool name, AIR id) is told apart on
//     its own: two operations sharing a CLI command change their CLI
//     commands only, never their tool names or ids;
//   - the suffix an operation gets depends on nothing but its own identity
//     (its path and method): never on which other operations share the
//     name, nor on the spec's order;
//   - every operation in a group sharing a name is qualified, so a name
//     never passes from one operation to another when an operation joins
//     or leaves the group;
//   - a name pinned by anvil.lock (Pin) is kept, and the others in its
//     group are qualified around it.
//
// The suffix is, first, the operation's literal path segments that are not
// already words of the name, in path order ("_orgs_actions"); where those
// still leave two operations alike (or there is none), 4 hex digits of the
// SHA-256 of the method and path (parameter names left out) follow. Only
// operations sharing the name and every literal path segment can still
// collide after that (in practice: the same route declared twice); they
// are numbered in spec order, the last resort that makes the result
// always unique.

// nameKind is one of the names collisions are resolved on.
type nameKind int

const (
	kindCLI nameKind = iota
	kindTool
	kindID
	nameKinds
)

var kindLabels = [nameKinds]string{"CLI command", "tool name", "id"}

// routing holds the routed names of one operation: its id, canonical name,
// CLI command and tool name (always <service>_<canonical>).
type routing struct {
	ID        string
	Canonical string
	CLI       string
	Tool      string
	// route is the operation's identity for the hashed suffix: its method
	// and path with parameter names left out (routeKey).
	route string
	// tokens are its qualifier candidates: the literal path segments
	// (snake_case, a custom method's name included), in path order
	// (pathTokens).
	tokens []string
	// fixed marks names a pin or nothing else may change: a collision
	// qualifies the other members of the group.
	fixed [nameKinds]bool
	// level is how far each name has been qualified (0 none, 1 path
	// segments, 2 and the hash); base is the name before it was.
	level [nameKinds]int
	base  [nameKinds]string
	// long is the canonical name before shortenNames cut it to fit the
	// wire limit ("" when it was not cut): a title made from the name
	// reads it, not the hashed stump.
	long string
}

// titleName is the canonical name a title is made from when the spec
// gives none: the whole name, not its shortened form.
func (r *routing) titleName() string {
	if r.long != "" {
		return r.long
	}
	return r.Canonical
}

// name is the operation's name of kind k (the tool name for kindTool).
func (r *routing) name(k nameKind) string {
	switch k {
	case kindCLI:
		return r.CLI
	case kindTool:
		return r.Tool
	}
	return r.ID
}

// own is the part of the name of kind k the operation's own words make up
// (the canonical name for kindTool).
func (r *routing) own(k nameKind) string {
	if k == kindTool {
		return r.Canonical
	}
	return r.name(k)
}

// set replaces the name of kind k (the canonical name, and so the tool
// name, for kindTool).
func (r *routing) set(service string, k nameKind, v string) {
	switch k {
	case kindCLI:
		r.CLI = v
	case kindTool:
		r.Canonical = v
		r.Tool = service + "_" + v
	default:
		r.ID = v
	}
}

// rename gives the name of kind k a new unqualified value (a name
// override, a shortening): qualification starts again from it.
func (r *routing) rename(service string, k nameKind, v string) {
	r.set(service, k, v)
	r.level[k], r.base[k] = 0, ""
}

// collisionNote is one resolved collision, reported as naming_collision_resolved.
type collisionNote struct {
	op      int
	message string
}

// maxQualifyRounds bounds the rounds that qualify by path and hash; what
// still collides after them is numbered.
const maxQualifyRounds = 4

// resolveCollisions makes the CLI command, the tool name and the id of
// every operation unique, each kind on its own (see the comment at the top
// of this file). Members of a group sharing a name are qualified one level
// further each round (path segments, then the route hash); after
// maxQualifyRounds what still collides is numbered. Fixed names are kept;
// of a group whose members are all fixed, every member but the first has
// its name unfixed and qualified.
func resolveCollisions(service string, ops []*routing) []collisionNote {
	var notes []collisionNote
	for k := range nameKinds {
		for round := 0; ; round++ {
			groups := groupsOf(ops, k)
			if len(groups) == 0 {
				break
			}
			for _, g := range groups {
				notes = append(notes, splitGroup(service, ops, g, k, round >= maxQualifyRounds)...)
			}
		}
	}
	return notes
}

// groupsOf returns the groups of operation indexes sharing a name of kind
// k, in order of first appearance.
func groupsOf(ops []*routing, k nameKind) [][]int {
	idx := make(map[string]int, len(ops))
	var groups [][]int
	for i, r := range ops {
		n := r.name(k)
		if g, ok := idx[n]; ok {
			groups[g] = append(groups[g], i)
			continue
		}
		idx[n] = len(groups)
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

// splitGroup qualifies the members of g that may change: every member not
// fixed, or, when all are, every member but the first. numbered, after the
// qualifying rounds, numbers them instead (the first changing member of a
// group with no fixed member keeps its name).
func splitGroup(service string, ops []*routing, g []int, k nameKind, numbered bool) []collisionNote {
	shared := ops[g[0]].name(k)
	var change []int
	for _, oi := range g {
		if !ops[oi].fixed[k] {
			change = append(change, oi)
		}
	}
	if len(change) == 0 {
		change = g[1:]
		for _, oi := range change {
			ops[oi].fixed[k] = false
		}
	}
	var notes []collisionNote
	for n, oi := range change {
		r := ops[oi]
		var next string
		if numbered {
			if n == 0 && len(change) == len(g) {
				continue
			}
			next = r.own(k) + "_" + strconv.Itoa(n+1)
		} else if next = r.qualify(k); next == r.own(k) {
			continue
		}
		r.set(service, k, next)
		notes = append(notes, collisionNote{op: oi, message: fmt.Sprintf(
			"%s %q is shared by %d operations; this operation's %s is now %q",
			kindLabels[k], shared, len(g), kindLabels[k], r.name(k))})
	}
	return notes
}

// qualify returns the operation's name of kind k qualified one level
// further than it is: its base name and its own path segments that are
// not words of it, then also its route hash. A level with nothing to add
// is skipped; past the hash the name is returned as it is.
func (r *routing) qualify(k nameKind) string {
	if r.level[k] == 0 {
		r.base[k] = r.own(k)
	}
	base := r.base[k]
	tokens := qualifierTokens(base, r.tokens)
	for r.level[k] < 2 {
		r.level[k]++
		switch r.level[k] {
		case 1:
			if tokens != "" {
				return base + "_" + tokens
			}
		case 2:
			if tokens != "" {
				return base + "_" + tokens + "_" + routeHash(r.route)
			}
			return base + "_" + routeHash(r.route)
		}
	}
	// Past the hash nothing of the operation's own tells it apart: it is
	// numbered after the qualifying rounds (splitGroup).
	return r.own(k)
}

// qualifierTokens joins, with "_", the tokens that add a word to name: a
// token is left out when each of its words, or its singular, is a word of
// the name already.
func qualifierTokens(name string, tokens []string) string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '.' || r == '_' || r == '-' }) {
		w = strings.ToLower(w)
		words[w], words[Singularize(w)] = true, true
	}
	var out []string
	for _, t := range tokens {
		novel := false
		for _, w := range strings.Split(t, "_") {
			if w != "" && !words[w] && !words[Singularize(w)] {
				novel = true
				break
			}
		}
		if novel {
			out = append(out, t)
			for _, w := range strings.Split(t, "_") {
				words[w] = true
			}
		}
	}
	return strings.Join(out, "_")
}

// routeHashLen is the number of hex digits of a route hash.
const routeHashLen = 4

// routeHash is the first routeHashLen hex digits of the SHA-256 of route.
func routeHash(route string) string {
	sum := sha256.Sum256([]byte(route))
	return hex.EncodeToString(sum[:])[:routeHashLen]
}

// routeKey is an operation's identity for naming: its method in upper case
// and its path with each parameter name left out (/a/{id} and /a/{name}
// are one route).
func routeKey(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToUpper(method))
	b.WriteByte(' ')
	for i := 0; i < len(path); i++ {
		c := path[i]
		b.WriteByte(c)
		if c == '{' {
			if j := strings.IndexByte(path[i:], '}'); j > 0 {
				i += j - 1
			}
		}
	}
	return b.String()
}
