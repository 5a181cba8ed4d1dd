package golden

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// CompareTrees lists, in name order, each file of want that got lacks, each
// file of got that want lacks (with its text), and each file whose bytes
// differ (with a line diff). wantName and gotName say what the two trees
// are in the report: "expected"/"written" gives "written but not expected:
// out.json". Every tree comparison of the tests (golden trees, the
// end-to-end cases' expected/) reports through it.
func CompareTrees(want, got map[string][]byte, wantName, gotName string) []string {
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var problems []string
	for _, n := range names {
		w, inWant := want[n]
		g, inGot := got[n]
		switch {
		case !inWant:
			problems = append(problems, fmt.Sprintf("%s but not %s: %s (%d bytes)\n%s", gotName, wantName, n, len(g), TextDiff(nil, g)))
		case !inGot:
			problems = append(problems, fmt.Sprintf("%s but not %s: %s", wantName, gotName, n))
		case !bytes.Equal(w, g):
			problems = append(problems, fmt.Sprintf("differs: %s (-want +got):\n%s", n, TextDiff(w, g)))
		}
	}
	return problems
}

// TextDiff shows a line diff of two texts, or their sizes when either is
// not UTF-8 text.
func TextDiff(want, got []byte) string {
	if !utf8.Valid(want) || !utf8.Valid(got) {
		return fmt.Sprintf("binary: %d bytes expected, %d written", len(want), len(got))
	}
	return cmp.Diff(strings.SplitAfter(string(want), "\n"), strings.SplitAfter(string(got), "\n"))
}
