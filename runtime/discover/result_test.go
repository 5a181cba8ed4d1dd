package discover

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMarshalResponseKeyOrder: the wire shape's keys come in the documented
// order, an empty result is an empty list (not null), and the summary is the
// description's first paragraph, trimmed.
func TestMarshalResponseKeyOrder(t *testing.T) {
	e := &Entry{Name: "gh__pulls_merge", OperationID: "github.merge.replace", Title: "Merge a pull request",
		Description: "Merges a pull request into the base branch.\n\nThis endpoint triggers notifications.",
		Effect:      "irreversible", ConfirmRequired: true}
	b, err := MarshalResponse([]Result{{Entry: e, Score: 3}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":[{"name":"gh__pulls_merge","operation_id":"github.merge.replace","title":"Merge a pull request",` +
		`"summary":"Merges a pull request into the base branch.","effect":"irreversible","confirm_required":true,"score":3}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	list := &Entry{Name: "gh__pulls_list", OperationID: "github.pulls.list", Title: "List pull requests", Effect: "read"}
	b, err = MarshalResponse([]Result{
		{Entry: e, Score: 2.71828, Weak: true, Needs: []Need{{Argument: "pull_number", From: []*Entry{list}}}},
		{Entry: list, ProducerFor: []string{"gh__pulls_merge"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want = `{"tools":[{"name":"gh__pulls_merge","operation_id":"github.merge.replace","title":"Merge a pull request",` +
		`"summary":"Merges a pull request into the base branch.","effect":"irreversible","confirm_required":true,"score":2.718,` +
		`"needs":[{"argument":"pull_number","from":["gh__pulls_list"]}]},` +
		`{"name":"gh__pulls_list","operation_id":"github.pulls.list","title":"List pull requests","summary":"List pull requests",` +
		`"effect":"read","confirm_required":false,"producer_for":["gh__pulls_merge"]}],"weak":true}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if b, _ := MarshalResponse(nil); string(b) != `{"tools":[]}` {
		t.Errorf("empty: %s", b)
	}
}

func TestSummary(t *testing.T) {
	long := strings.Repeat("word ", 100)
	for _, c := range []struct {
		e    Entry
		want string
	}{
		{Entry{Title: "Get a thing"}, "Get a thing"},
		{Entry{Title: "T", Description: "  One   line\nwrapped.  "}, "One line wrapped."},
		{Entry{Title: "T", Description: long}, TrimDescription(strings.TrimSpace(long), SummaryMax)},
	} {
		if got := c.e.Summary(); got != c.want {
			t.Errorf("Summary of %q = %q, want %q", c.e.Description, got, c.want)
		}
	}
}

// TestDocExample: the JSON shown in docs/discovery.md is what
// MarshalResponse writes for that entry.
func TestDocExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "discovery.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```json\n")
	shown, _, ok2 := strings.Cut(rest, "\n```")
	if !ok || !ok2 {
		t.Fatal("no json example in docs/discovery.md")
	}
	got, err := MarshalResponse([]Result{{Entry: &Entry{Name: "gh__pulls_merge", OperationID: "github.merge.replace",
		Title: "Merge a pull request", Description: "Merges a pull request into the base branch.\n\nMore.",
		Effect: "irreversible", ConfirmRequired: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != shown {
		t.Errorf("docs show\n%s\nMarshalResponse writes\n%s", shown, got)
	}
}
