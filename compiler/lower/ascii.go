package lower

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/anvil-dev/anvil/compiler/naming"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Routed names (AIR ids, canonical names, tool names) are ASCII: AIR's
// schema requires ids of [A-Za-z0-9_-] words, canonical names of [a-z0-9_]
// and tool names of [A-Za-z0-9_.-]{1,128}. Descriptions are not: titles,
// operationIds and paths may be written in any script. Names are therefore
// derived from an ASCII spelling (foldASCII): Latin letters lose their
// diacritics (é → e, ß → ss), and every other non-ASCII character separates
// words. A name with nothing left falls back to the path-derived form.

// latinFold spells U+00C0 to U+017F in ASCII, one space-separated entry each
// ("-" for × and ÷, which are not letters).
var latinFold = strings.Fields(
	"A A A A A A Ae C E E E E I I I I D N O O O O O - O U U U U Y Th ss " +
		"a a a a a a ae c e e e e i i i i d n o o o o o - o u u u u y th y " +
		"A a A a A a C c C c C c C c D d D d E e E e E e E e E e G g G g G g G g H h H h " +
		"I i I i I i I i I i Ij ij J j K k k L l L l L l L l L l N n N n N n n N n " +
		"O o O o O o Oe oe R r R r R r S s S s S s S s T t T t T t U u U u U u U u U u U u " +
		"W w Y y Y Z z Z z Z z s")

// foldASCII spells s in ASCII for names: Latin letters with diacritics lose
// them and every other non-ASCII character becomes a space.
func foldASCII(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r >= 0xC0 && r < 0x180 && latinFold[r-0xC0] != "-":
			b.WriteString(latinFold[r-0xC0])
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// nameSnake is SnakeCase over the ASCII spelling of s: only [a-z0-9_].
func nameSnake(s string) string { return naming.Snake(foldASCII(s)) }

// asciiWords are the snake_case words of the ASCII spelling of s.
func asciiWords(s string) []string { return naming.Words(foldASCII(s)) }

// Name lengths.
const (
	// minCanonical is the least a canonical name is shortened to, however
	// long the service id.
	minCanonical = 16
	// maxDerivedServiceID caps a service id derived from the title.
	maxDerivedServiceID = 32
	// hashLen is the number of hex digits of the hash a cut name ends in.
	hashLen = 6
)

// MaxToolName is the longest tool name Lower gives a service: the tool
// name <service>_<canonical> is kept so that the served name
// <service>__<tool> fits air.MaxWireName (64), for a bundle served under a
// connector id as long as its service id; the canonical name keeps at
// least minCanonical characters whatever the service id's length (the
// gateway then fits the served name, air.FitWireName).
func MaxToolName(service string) int {
	return len(service) + 1 + canonicalBudget(service)
}

// validServiceID is what AIR's schema accepts as a service id.
var validServiceID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// serviceFromTitle derives a service id from a title: its ASCII snake_case,
// cut at a word boundary to at most maxDerivedServiceID characters, "s_"
// before a leading digit; "service" when nothing is left.
func serviceFromTitle(title string) string {
	id := nameSnake(title)
	if len(id) > maxDerivedServiceID {
		cut := id[:maxDerivedServiceID]
		if i := strings.LastIndexByte(cut, '_'); i > 0 {
			cut = cut[:i]
		}
		id = strings.Trim(cut, "_")
	}
	if id == "" {
		return "service"
	}
	if id[0] >= '0' && id[0] <= '9' {
		id = "s_" + id
	}
	return id
}

// sanitizeServiceID makes a given service id acceptable to AIR's schema:
// characters outside [A-Za-z0-9_-] become "_" (runs folded), at most 64
// characters; "service" when nothing is left.
func sanitizeServiceID(id string) string {
	var b strings.Builder
	for _, r := range foldASCII(id) {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			if s := b.String(); s != "" && s[len(s)-1] != '_' {
				b.WriteByte('_')
			}
		}
	}
	out := strings.Trim(b.String(), "_")
	if len(out) > 64 {
		out = strings.Trim(out[:64], "_")
	}
	if out == "" {
		return "service"
	}
	return out
}

// canonicalBudget is the longest canonical name that keeps
// <service>__<service>_<canonical> within air.MaxWireName (never less than
// minCanonical).
func canonicalBudget(service string) int {
	return max(air.MaxWireName-2*len(service)-3, minCanonical)
}

// fillerWords are left out of a name that must be shortened: they join the
// words that say what it does ("list_repos_for_authenticated_user").
var fillerWords = set("a", "an", "the", "for", "of", "to", "from", "by", "with", "in", "on", "at", "into", "and", "or", "as")

// abbreviations are the short forms a name that must be shortened takes,
// each in wide use in API names.
var abbreviations = map[string]string{
	"organization": "org", "organizations": "orgs", "repository": "repo", "repositories": "repos",
	"configuration": "config", "configurations": "configs", "environment": "env", "environments": "envs",
	"application": "app", "applications": "apps", "information": "info", "administrator": "admin",
	"administrators": "admins", "statistics": "stats", "identifier": "id", "identifiers": "ids",
	"parameter": "param", "parameters": "params", "installation": "install", "installations": "installs",
	"specification": "spec", "specifications": "specs", "authentication": "auth", "description": "desc",
}

// shortenName brings a name longer than budget within it, readably: it
// drops a word the name already said, then filler words (fillerWords),
// then abbreviates long words (abbreviations), each step only while the
// name is still too long; if that is not enough it cuts the name (at a
// word boundary when one is in the second half) and ends it in "_" and the
// first hashLen hex digits of the SHA-256 of the whole name. Every step
// reads the name alone, so the result depends on nothing but the name
// (the operation's own identity), never on other operations.
func shortenName(name string, budget int) string {
	if len(name) <= budget {
		return name
	}
	words := strings.Split(name, "_")
	joined := func() string { return strings.Join(words, "_") }
	seen := map[string]bool{}
	kept := words[:0:0]
	for _, w := range words {
		if !seen[w] || w == "" {
			kept = append(kept, w)
		}
		seen[w] = true
	}
	words = kept
	if s := joined(); len(s) <= budget {
		return s
	}
	kept = words[:0:0]
	for i, w := range words {
		if i == 0 || !fillerWords[w] {
			kept = append(kept, w)
		}
	}
	words = kept
	if s := joined(); len(s) <= budget {
		return s
	}
	for i, w := range words {
		if a, ok := abbreviations[w]; ok {
			words[i] = a
		}
	}
	if s := joined(); len(s) <= budget {
		return s
	}
	sum := sha256.Sum256([]byte(name))
	tail := "_" + hex.EncodeToString(sum[:])[:hashLen]
	s := joined()
	head := s[:max(budget-len(tail), 1)]
	if i := strings.LastIndexByte(head, '_'); i >= len(head)/2 {
		head = head[:i]
	}
	return strings.TrimRight(head, "_") + tail
}

// shortenNames shortens every canonical name (and so its tool name) longer
// than canonicalBudget, except a pinned one. It returns the indexes of the
// operations it changed.
func shortenNames(service string, ops []*routing) []int {
	budget := canonicalBudget(service)
	var changed []int
	for i, r := range ops {
		if len(r.Canonical) <= budget || r.fixed[kindTool] {
			continue
		}
		r.long = r.Canonical
		r.set(service, kindTool, shortenName(r.Canonical, budget))
		changed = append(changed, i)
	}
	return changed
}
