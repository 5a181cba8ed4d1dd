package lower

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/anvil-dev/anvil/compiler/naming"
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
	// MaxToolName is the longest tool name Lower produces, so that a
	// gateway's served name <connector>__<tool> stays within the REST
	// route's 128 characters for any connector id up to 62 characters (and
	// within the 64 characters many MCP clients accept for short ones). A
	// longer canonical name is shortened (see shortenNames).
	MaxToolName = 64
	// minCanonical is the least a canonical name is shortened to, however
	// long the service id.
	minCanonical = 24
	// maxDerivedServiceID caps a service id derived from the title.
	maxDerivedServiceID = 32
	// hashLen is the number of hex digits of the hash a shortened name ends in.
	hashLen = 8
)

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

// canonicalBudget is the longest canonical name that keeps the tool name
// <service>_<canonical> within MaxToolName (never less than minCanonical).
func canonicalBudget(service string) int {
	return max(MaxToolName-len(service)-1, minCanonical)
}

// shortenName cuts a name longer than budget to budget characters: its head
// (cut at a word boundary when one is near) and "_" plus the first hashLen hex
// digits of the SHA-256 of the whole name, so that different long names stay
// different and the result does not depend on any other operation.
func shortenName(name string, budget int) string {
	if len(name) <= budget {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	tail := "_" + hex.EncodeToString(sum[:])[:hashLen]
	head := name[:max(budget-len(tail), 1)]
	if i := strings.LastIndexByte(head, '_'); i >= len(head)/2 {
		head = head[:i]
	}
	return strings.TrimRight(head, "_") + tail
}

// shortenNames shortens every canonical name (and so its tool name) that
// would make the tool name longer than MaxToolName. It returns the indexes of
// the operations it changed.
func shortenNames(service string, ops []*routing) []int {
	budget := canonicalBudget(service)
	var changed []int
	for i, r := range ops {
		if len(r.Canonical) <= budget {
			continue
		}
		r.Canonical = shortenName(r.Canonical, budget)
		r.Tool = service + "_" + r.Canonical
		changed = append(changed, i)
	}
	return changed
}
