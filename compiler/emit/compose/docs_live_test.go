package compose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSKILLExamplesRunLive runs the composite's SKILL.md as a reader would:
// its Python code block (placeholders filled in) and its python -m
// anvil_compose commands, against a live gateway in front of the mock
// upstream.
func TestSKILLExamplesRunLive(t *testing.T) {
	t.Parallel()
	e := startLive(t, []string{"github"}, nil)
	b, err := os.ReadFile(filepath.Join(e.Compose, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	skill := string(b)
	m := regexp.MustCompile("(?s)```python\n(.*?)```").FindStringSubmatch(skill)
	if m == nil {
		t.Fatal("SKILL.md shows no Python block")
	}
	values := map[string]string{"owner": `"octo"`, "repo": `"hello"`, "body": `"From the SKILL.md example."`}
	code := regexp.MustCompile(`"([a-z_]+)": \.\.\.`).ReplaceAllStringFunc(m[1], func(s string) string {
		k := s[1 : strings.Index(s[1:], `"`)+1]
		v, ok := values[k]
		if !ok {
			t.Fatalf("the example needs a value for %q", k)
		}
		return `"` + k + `": ` + v
	})
	if strings.Contains(code, "...") {
		t.Fatalf("placeholders left in the example:\n%s", code)
	}
	before := len(e.Mock.State().Comments)
	out, exit := e.python(t, code)
	if exit != 0 {
		t.Fatalf("SKILL.md example: exit %d\n%s\n%s", exit, code, out)
	}
	issues := len(e.Mock.State().Issues)
	if got := len(e.Mock.State().Comments) - before; issues == 0 || got != issues {
		t.Errorf("the example's flow wrote %d comment(s) for %d issue(s):\n%s", got, issues, out)
	}
	if !strings.Contains(out, "'depends_on'") {
		t.Errorf("the example printed no plan:\n%s", out)
	}

	// `python -m anvil_compose operations [CONNECTOR]`.
	if !strings.Contains(skill, "`python -m anvil_compose operations [CONNECTOR]`") {
		t.Fatal("SKILL.md no longer shows the operations command; update this test")
	}
	out, exit = e.python(t, "", "-m", "anvil_compose", "operations", "github")
	var ops any
	if exit != 0 || json.Unmarshal([]byte(out), &ops) != nil || !strings.Contains(out, "github.issues.list") {
		t.Errorf("python -m anvil_compose operations github: exit %d\n%s", exit, out)
	}
}
