package release

import (
	"errors"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/runtime/air"
)

func TestBump(t *testing.T) {
	for _, c := range []struct{ from, verdict, want string }{
		{"1.0.0", diff.Major, "2.0.0"},
		{"1.4.2", diff.Minor, "1.5.0"},
		{"1.4.2", diff.Patch, "1.4.3"},
		{"1.4.2", diff.None, "1.4.2"},
		{"v0.9.9-beta.1+build", diff.Major, "1.0.0"},
		{"2022-11-28.3.1", diff.Patch, ""},
		{"latest", diff.Minor, ""},
	} {
		got, err := Bump(c.from, c.verdict)
		if c.want == "" {
			if !errors.Is(err, ErrNotSemver) {
				t.Errorf("Bump(%q): %q, %v; want ErrNotSemver", c.from, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Bump(%q, %s) = %q, %v; want %q", c.from, c.verdict, got, err, c.want)
		}
	}
}

// TestChangelogKeepsHistory: a new entry goes on top of the earlier ones.
func TestChangelogKeepsHistory(t *testing.T) {
	r1 := diff.NewReport([]diff.Change{{Tool: "t_list", Kind: diff.InputAdded, Detail: "input `a`: new optional input"}})
	first, err := Changelog("1.1.0", "1.0.0", r1, nil)
	if err != nil {
		t.Fatal(err)
	}
	r2 := diff.NewReport([]diff.Change{{Tool: "t_list", Kind: diff.InputRemoved, Breaking: true, Detail: "input `a`: removed"}})
	second, err := Changelog("2.0.0", "1.1.0", r2, first)
	if err != nil {
		t.Fatal(err)
	}
	s := string(second)
	if strings.Count(s, "# Changelog\n") != 1 || !strings.Contains(s, "## 1.1.0") ||
		strings.Index(s, "## 2.0.0") > strings.Index(s, "## 1.1.0") {
		t.Errorf("history lost or out of order:\n%s", s)
	}
	if note := SkillNote("2.0.0", r2); !strings.Contains(string(note), "- `t_list` (input_removed): input `a`: removed") {
		t.Errorf("skill note: %s", note)
	}
	if SkillNote("1.1.0", r1) != nil {
		t.Error("a release without breaking changes got a SKILL.md note")
	}
}

// TestServed keeps served operations and exactly the schemas they reach.
func TestServed(t *testing.T) {
	str := &air.Schema{Type: air.Types{"string"}}
	doc := &air.Document{
		Operations: []air.Operation{
			{ID: "a", State: air.StateApproved, Output: air.Output{Schema: &air.Schema{Ref: "#/$defs/A"}}},
			{ID: "b", State: air.StateReviewRequired, Output: air.Output{Schema: &air.Schema{Ref: "#/$defs/B"}}},
		},
		Schemas: map[string]*air.Schema{
			"A": {Properties: map[string]*air.Schema{"c": {Ref: "#/$defs/C"}}},
			"B": str, "C": str,
		},
	}
	s := Served(doc)
	if len(s.Operations) != 1 || s.Operations[0].ID != "a" || len(s.Schemas) != 2 || s.Schemas["A"] == nil || s.Schemas["C"] == nil {
		t.Errorf("served: %+v schemas %v", s.Operations, s.Schemas)
	}
	if len(doc.Operations) != 2 || len(doc.Schemas) != 3 {
		t.Error("Served changed its input")
	}
}
