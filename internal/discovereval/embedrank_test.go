package discovereval

import (
	"reflect"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/discover"
)

func TestOperationText(t *testing.T) {
	op := &air.Operation{
		DisplayName: "Merge a pull request ",
		Description: "Merges a pull request into the base branch.\nThis endpoint triggers notifications.",
		SourceRef:   air.SourceRef{Path: "/repos/{owner}/{repo}/pulls/{pull_number}/merge"},
	}
	if got, want := OperationText(op, TitleSentence), "Merge a pull request. Merges a pull request into the base branch"; got != want {
		t.Errorf("TitleSentence: %q, want %q", got, want)
	}
	if got, want := OperationText(op, TitleSentencePath), "Merge a pull request. Merges a pull request into the base branch. repos pulls merge"; got != want {
		t.Errorf("TitleSentencePath: %q, want %q", got, want)
	}
	// A description that repeats the title adds nothing; a long one is cut
	// at a rune boundary.
	same := &air.Operation{DisplayName: "List genres", Description: "List genres."}
	if got := OperationText(same, TitleSentence); got != "List genres" {
		t.Errorf("repeated description: %q", got)
	}
	long := &air.Operation{DisplayName: "T", Description: strings.Repeat("é", 400)}
	if got := OperationText(long, TitleSentence); len(got) > len("T. ")+maxSentence || !strings.HasSuffix(got, "é") {
		t.Errorf("long description: %d bytes, ends %q", len(got), got[len(got)-4:])
	}
}

// TestKeepProducers: a rerank moves the results the lexical answer ranked
// and leaves the producers it added (for the results that need them) in
// their slots.
func TestKeepProducers(t *testing.T) {
	e := func(id string) *discover.Entry { return &discover.Entry{OperationID: id} }
	res := []discover.Result{
		{Entry: e("a")},
		{Entry: e("p"), ProducerFor: []string{"x__a"}},
		{Entry: e("b")},
		{Entry: e("c")},
	}
	for _, c := range []struct {
		ranked []string
		limit  int
		want   []string
	}{
		{[]string{"c", "a", "b"}, 10, []string{"c", "p", "a", "b"}},
		{[]string{"c", "a", "b"}, 2, []string{"c", "p"}},
		// A fusion may bring an operation the lexical answer lacked, and
		// may list a producer again: it keeps its one slot.
		{[]string{"d", "p", "c", "a", "b"}, 10, []string{"d", "p", "c", "a", "b"}},
		{nil, 10, []string{"p"}},
	} {
		if got := keepProducers(res, c.ranked, c.limit); !reflect.DeepEqual(got, c.want) {
			t.Errorf("keepProducers(%v, %d) = %v, want %v", c.ranked, c.limit, got, c.want)
		}
	}
}
