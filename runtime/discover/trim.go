package discover

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// TrimMarker ends a trimmed description: one character, U+2026.
const TrimMarker = "…"

// ListingDescriptionMax is the documented length (in characters) to which a
// tool listing trims descriptions; the full text stays available from the
// tool's describe call.
const ListingDescriptionMax = 400

// SummaryMax is the length (in characters) of a search result's summary.
const SummaryMax = 160

// TrimDescription returns s when it has at most max characters (Unicode code
// points); otherwise a prefix of s that ends with TrimMarker and has at most
// max characters in all. The prefix ends at the last sentence end (., ! or ?
// followed by white space, or a blank line) that keeps at least half of the
// room; failing that at the last word boundary that does; failing that (one
// long word) mid-word, at a character boundary. White space before the
// marker is dropped, except that a sentence cut keeps one space before it
// when that fits ("Lists pull requests. …"). max <= 0 gives "".
func TrimDescription(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	room := max - 1 // characters left for text once the marker is counted
	cut := 0        // byte offset of the end of the first room characters
	for n := 0; n < room; n++ {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	head := s[:cut]
	// s[cut:] is not empty, so whether the character after head is white
	// space decides if head ends on a whole word or sentence.
	next, _ := utf8.DecodeRuneInString(s[cut:])
	half := len(head) / 2

	if end := lastSentenceEnd(head, unicode.IsSpace(next)); end >= half && end > 0 {
		out := strings.TrimRightFunc(head[:end], unicode.IsSpace)
		if utf8.RuneCountInString(out) < room {
			out += " " // room for a space between the sentence and the marker
		}
		return out + TrimMarker
	}
	if unicode.IsSpace(next) {
		return strings.TrimRightFunc(head, unicode.IsSpace) + TrimMarker
	}
	if sp := strings.LastIndexFunc(head, unicode.IsSpace); sp >= half && sp > 0 {
		return strings.TrimRightFunc(head[:sp], unicode.IsSpace) + TrimMarker
	}
	return head + TrimMarker
}

// lastSentenceEnd is the byte offset just after the last sentence end in
// head (0 when none): a . ! or ? that white space follows (at the very end
// of head, when atBoundary), or the start of a blank line.
func lastSentenceEnd(head string, atBoundary bool) int {
	best := 0
	for i := 0; i < len(head); i++ {
		switch head[i] {
		case '.', '!', '?':
			if i+1 == len(head) {
				if atBoundary {
					best = i + 1
				}
			} else if c := head[i+1]; c == ' ' || c == '\n' || c == '\t' || c == '\r' {
				best = i + 1
			}
		case '\n':
			if i+1 < len(head) && head[i+1] == '\n' && i > 0 {
				best = max(best, i)
			}
		}
	}
	return best
}
