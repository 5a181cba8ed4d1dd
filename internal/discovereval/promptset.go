package discovereval

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
)

// PromptSource is one API's MCP server READMEs (their example prompts are
// the tasks, ParsePrompts) over its description, with the gold written per
// prompt.
type PromptSource struct {
	TextSource
	Gold string // the gold, under testdata/ (<api>_prompts.txt)
}

// PromptSources are the MCP server prompt sets, in the order they are
// reported (docs/discovery.md, "Evaluation"). No Spotify MCP server is
// served by the registries this project may use (docs/discovery.md).
var PromptSources = []PromptSource{{
	TextSource: TextSource{
		Name:      "tmdb prompts",
		Spec:      "tmdb.json",
		Connector: "tmdb",
		Files:     []string{"tmdb-mcp-readme/README.md", "mcp-server-tmdb-readme/README.md", "tmdb-mcp-server-readme/README.md"},
	},
	Gold: "tmdb_prompts.txt",
}, {
	TextSource: TextSource{
		Name:      "github prompts",
		Spec:      "github.json",
		Connector: "github",
		Files:     []string{"github-mcp-readme/README.md"},
	},
	Gold: "github_prompts.txt",
}, {
	TextSource: TextSource{
		Name:      "jira prompts",
		Spec:      "jira.json",
		Connector: "jira",
		Files: []string{
			"aashari-mcp-server-atlassian-jira-readme/README.md",
			"mcp-jira-cloud-readme/README.md",
			"nexus2520-jira-mcp-server-readme/README.md",
		},
	},
	Gold: "jira_prompts.txt",
}}

// PromptGold is what a prompt needs: its steps, or why it is not scored.
type PromptGold struct {
	Steps    [][]string
	Unscored string // the reason the API cannot serve the prompt
}

// ParsePromptGold reads a prompts gold file: "<prompt> => <step> [>
// <step>...]" (alternatives comma separated), or "<prompt> => - <reason>"
// for a prompt the API cannot serve; # lines are comments. The prompt is
// the README's text verbatim, as ParsePrompts returns it.
func ParsePromptGold(r io.Reader) (map[string]PromptGold, error) {
	out := map[string]PromptGold{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		prompt, rest, ok := strings.Cut(line, " => ")
		if prompt = strings.TrimSpace(prompt); !ok || prompt == "" {
			return nil, fmt.Errorf("line %d: want <prompt> => <operationId>[, ...][ > ...] or <prompt> => - <reason>", n)
		}
		var g PromptGold
		if reason, unscored := strings.CutPrefix(strings.TrimSpace(rest)+" ", "- "); unscored {
			if g.Unscored = strings.TrimSpace(reason); g.Unscored == "" {
				return nil, fmt.Errorf("line %d: an unscored prompt needs its reason", n)
			}
		} else {
			steps, err := parseSteps(rest)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			g.Steps = steps
		}
		if _, dup := out[prompt]; dup {
			return nil, fmt.Errorf("line %d: %q listed twice", n, prompt)
		}
		out[prompt] = g
	}
	return out, sc.Err()
}

// PromptStats counts what became of a set's prompts.
type PromptStats struct {
	Prompts    int // prompts read, each README's once
	Duplicates int // of them, a prompt another README of the set has (counted once)
	Unscored   int // distinct prompts the API cannot serve
}

// ErrPromptGold is a prompt without gold, or gold without its prompt: the
// gold file and the READMEs disagree.
var ErrPromptGold = errors.New("prompt gold and READMEs disagree")

// PromptTasks turns prompts into tasks: each prompt verbatim with its gold's
// steps; a prompt seen before in any letter case counts once. A task's id
// is its text in lower case, which decides its half (HalfOf). Every
// prompt must have gold and every gold line a prompt.
func PromptTasks(prompts []string, gold map[string]PromptGold) ([]StepTask, PromptStats, error) {
	st := PromptStats{Prompts: len(prompts)}
	seen := map[string]bool{}
	used := map[string]bool{}
	var out []StepTask
	for _, p := range prompts {
		id := strings.ToLower(p)
		if seen[id] {
			st.Duplicates++
			continue
		}
		seen[id] = true
		g, ok := gold[p]
		if !ok {
			return nil, st, fmt.Errorf("%w: %q has no gold", ErrPromptGold, p)
		}
		used[p] = true
		if g.Unscored != "" {
			st.Unscored++
			continue
		}
		out = append(out, StepTask{ID: id, Query: p, Steps: g.Steps})
	}
	var stale []string
	for p := range gold {
		if !used[p] {
			stale = append(stale, fmt.Sprintf("%q", p))
		}
	}
	if len(stale) > 0 {
		sort.Strings(stale)
		return nil, st, fmt.Errorf("%w: no README holds %s", ErrPromptGold, strings.Join(stale, ", "))
	}
	return out, st, nil
}

// PromptSetTasks reads a source's READMEs from dir (the specs directory)
// and its gold from testdata.
func PromptSetTasks(dir, testdata string, src PromptSource) ([]StepTask, PromptStats, error) {
	gold, err := parseFile(filepath.Join(testdata, src.Gold), ParsePromptGold)
	if err != nil {
		return nil, PromptStats{}, err
	}
	prompts, err := parseFiles(dir, src.Files, ParsePrompts)
	if err != nil {
		return nil, PromptStats{}, err
	}
	return PromptTasks(prompts, gold)
}
