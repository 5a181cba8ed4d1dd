package discover

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTrimDescription(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"Short.", 10, "Short."},
		{"exactly ten", 11, "exactly ten"},
		{"", 5, ""},
		{"anything", 0, ""},
		{"anything", -1, ""},
		// A sentence end within the room, past half of it.
		{"Lists pull requests. Draft pull requests are included too.", 30, "Lists pull requests. …"},
		// No sentence end late enough: the last word boundary.
		{"Lists all the pull requests of a repository and more", 30, "Lists all the pull requests…"},
		// The cut falls just before a space: the whole last word stays.
		{"alpha beta gamma delta", 11, "alpha beta…"},
		// One long word: cut mid-word at a character boundary.
		{"Supercalifragilisticexpialidocious", 10, "Supercali…"},
		{"ééééééééééé", 5, "éééé…"},
		// A blank line counts as a sentence end.
		{"First paragraph here\n\nSecond paragraph is longer than the room", 30, "First paragraph here …"},
		{"ab", 1, "…"},
	} {
		got := TrimDescription(c.in, c.max)
		if got != c.want {
			t.Errorf("TrimDescription(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
		if c.max > 0 && utf8.RuneCountInString(got) > c.max {
			t.Errorf("TrimDescription(%q, %d) = %q: %d characters", c.in, c.max, got, utf8.RuneCountInString(got))
		}
	}
}

// TestTrimDescriptionNeverExceeds: for every length, the result fits and
// is either the input or a prefix of it followed by the marker.
func TestTrimDescriptionNeverExceeds(t *testing.T) {
	s := "Gets a repository. The parent and source objects are present when the repository is a fork: see `parent`. Ünïcödé wörds — and\ttabs\nnewlines.\n\nA second paragraph!"
	for max := 1; max <= utf8.RuneCountInString(s)+2; max++ {
		got := TrimDescription(s, max)
		if n := utf8.RuneCountInString(got); n > max {
			t.Fatalf("max %d: %d characters: %q", max, n, got)
		}
		if got == s {
			continue
		}
		body, ok := strings.CutSuffix(got, TrimMarker)
		if !ok || !strings.HasPrefix(s, strings.TrimSuffix(body, " ")) || !utf8.ValidString(got) {
			t.Fatalf("max %d: %q is not a prefix plus the marker", max, got)
		}
	}
}
