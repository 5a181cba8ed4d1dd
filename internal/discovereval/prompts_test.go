package discovereval

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/internal/testinput"
)

// promptFloors hold each prompt set's test half to figures just under
// those measured when the set was added (docs/discovery.md): a regression
// guard. Zero: not guarded (GitHub's set has two scored prompts, both in
// the test half; Jira's test half has one multi-step prompt, its first
// call not in the top five when the set was added).
var promptFloors = map[string]StepReport{
	"tmdb prompts":   {Recall1: 0.55, Recall5: 0.55, FirstHit5: 0.35, Coverage10: 0.50},
	"github prompts": {},
	"jira prompts":   {Recall1: 0.18, Recall5: 0.43},
}

// promptCounts are what the pinned READMEs and gold hold under
// ParsePrompts' rule: a change means the parser, the rule, the input or
// the gold moved. Dev and Test count the scored tasks of each half.
var promptCounts = map[string]struct {
	Stats     PromptStats
	Dev, Test int
}{
	"tmdb prompts":   {PromptStats{Prompts: 33, Unscored: 2}, 18, 13},
	"github prompts": {PromptStats{Prompts: 3, Unscored: 1}, 0, 2},
	"jira prompts":   {PromptStats{Prompts: 47, Unscored: 3}, 27, 17},
}

// TestPromptEval scores runtime/discover and plain BM25 on the MCP server
// README prompt sets, both halves, and holds the test halves to their
// floors. Only the dev halves' misses are printed (ANVIL_DISCOVER_MISSES
// set).
func TestPromptEval(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, src := range PromptSources {
		t.Run(strings.ReplaceAll(src.Name, " ", "_"), func(t *testing.T) {
			testinput.File(t, filepath.Join(specsDir(), src.Spec), "scripts/fetch-specs.sh fetches it")
			for _, f := range src.Files {
				testinput.File(t, filepath.Join(specsDir(), f), "scripts/fetch-specs.sh fetches it")
			}
			tasks, st, err := PromptSetTasks(specsDir(), "testdata", src)
			if err != nil {
				t.Fatal(err)
			}
			dev := 0
			for _, k := range tasks {
				if HalfOf(k.ID) == Dev {
					dev++
				}
			}
			want := promptCounts[src.Name]
			if st != want.Stats || dev != want.Dev || len(tasks)-dev != want.Test {
				t.Errorf("read %+v, %d dev, %d test; want %+v, %d dev, %d test", st, dev, len(tasks)-dev, want.Stats, want.Dev, want.Test)
			}
			t.Logf("%s: %d prompts, %d duplicates, %d not scored (the API cannot serve them); %d tasks: %d dev, %d test",
				src.Name, st.Prompts, st.Duplicates, st.Unscored, len(tasks), dev, len(tasks)-dev)
			scoreHalves(t, src.Name, tasks, src.Spec, src.Connector, promptFloors[src.Name])
		})
	}
}

func TestParsePrompts(t *testing.T) {
	readme := "# Movie MCP\n\n" +
		"\"A quoted line outside any example section\"\n" +
		"Once connected, just ask your agent:\n\n" +
		"> \"Who directed Heat?\"\n" +
		"- “What is new this week?”\n" +
		"Then something else.\n" +
		"\"Not after the ask any more\"\n\n" +
		"```\n" +
		"\"Quoted in a block without a language\"\n" +
		"You: Show the cast of Alien\n" +
		"AI:  Here is the cast\n" +
		"plain text in the block\n" +
		"```\n\n" +
		"```json\n" +
		"\"Quoted in a JSON block\"\n" +
		"```\n\n" +
		"Or ask it like this:\n" +
		"```sh\n" +
		"run\n" +
		"```\n" +
		"\"Not after a code block\"\n\n" +
		"## Example usage\n\n" +
		"1. Search for movies:\n" +
		"   ```\n" +
		"   \"Search for movies about robots\"\n" +
		"   ```\n" +
		"2. **\"Emphasised and quoted\"**\n" +
		"- Not quoted, so not a prompt here\n" +
		"- \"Quoted\" but followed by more\n" +
		"\"Who directed Heat?\"\n\n" +
		"## Example Queries\n\n" +
		"- \"Find Korean dramas\"\n" +
		"* Every list item here, quoted or not\n" +
		"A paragraph under the queries heading is no item.\n\n" +
		"## Tools\n\n" +
		"- **search**\n" +
		"  - Example: Search for movies about the sea\n" +
		"  - **Example:** \"Get the trailer of Up\"\n" +
		"- Example: `q: \"memory leak\" is:issue`\n" +
		"~~~\n" +
		"User: \"Play something\"\n" +
		"~~~\n" +
		"# What you can do\n\n" +
		"- **Track progress**: \"List my open issues\"\n" +
		"- **Comment:** *\"Add a comment to PROJ-1\"*\n" +
		"- **Location**: `~/config.json`\n" +
		"**Label**: \"Not a list item\"\n\n" +
		"## Real-World Examples\n\n" +
		"### Explore projects\n\n" +
		"- *\"List all projects\"*\n" +
		"#### Deeper still\n\n" +
		"\"Show project DEV\"\n\n" +
		"## Query syntax\n\n" +
		"- every item under a queries heading\n" +
		"### Code search\n\n" +
		"- `repo:owner/name`: not under its sub-heading\n" +
		"## Installation\n\n" +
		"\"No longer under the examples\"\n\n" +
		"```\n" +
		"👤 \"What is the status of PROJ-123?\"\n" +
		"🤖 Fetches the issue\n" +
		"Capitalised but not labelled\n" +
		"```\n\n" +
		"**Examples**:\n\n" +
		"```\n" +
		"Get details for PROJ-123\n" +
		"Create a Bug with summary \"Login broken\"\n" +
		"\"Quoted in the labelled block\"\n" +
		"jira_issues get PROJ-123\n" +
		"```\n\n" +
		"**Common JQL examples:**\n" +
		"```\n" +
		"project = PROJ AND status = Open\n" +
		"```\n" +
		"**Examples**:\n" +
		"Some prose between the label and the block.\n" +
		"```\n" +
		"Not right after its label\n" +
		"```\n" +
		"**Tips**:\n" +
		"```\n" +
		"Not labelled as examples\n" +
		"```\n" +
		"**Examples**:\n" +
		"```text\n" +
		"A block with a language\n" +
		"```\n"
	got, err := ParsePrompts(strings.NewReader(readme))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Who directed Heat?",
		"What is new this week?",
		"Quoted in a block without a language",
		"Show the cast of Alien",
		"Search for movies about robots",
		"Emphasised and quoted",
		"Find Korean dramas",
		"Every list item here, quoted or not",
		"Search for movies about the sea",
		"Get the trailer of Up",
		"Play something",
		"List my open issues",
		"Add a comment to PROJ-1",
		"List all projects",
		"Show project DEV",
		"every item under a queries heading",
		"What is the status of PROJ-123?",
		"Get details for PROJ-123",
		"Create a Bug with summary \"Login broken\"",
		"Quoted in the labelled block",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	again, _ := ParsePrompts(strings.NewReader(readme))
	if !reflect.DeepEqual(again, got) {
		t.Error("parsing the same README twice gave different prompts")
	}
}

func TestParsePromptGold(t *testing.T) {
	g, err := ParsePromptGold(strings.NewReader("# comment\n\n" +
		"Who directed Heat? => search-movie > movie-credits\n" +
		"Find Japanese movies, from 2020 => genre-movie-list, discover-movie\n" +
		"What are Heat's IMDb scores? => - IMDb scores are OMDb's\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]PromptGold{
		"Who directed Heat?":              {Steps: [][]string{{"search-movie"}, {"movie-credits"}}},
		"Find Japanese movies, from 2020": {Steps: [][]string{{"genre-movie-list", "discover-movie"}}},
		"What are Heat's IMDb scores?":    {Unscored: "IMDb scores are OMDb's"},
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("got %+v", g)
	}
	for _, bad := range []string{"no arrow\n", "x => -\n", "x => a >\n", "x => a\nx => b\n", " => a\n"} {
		if _, err := ParsePromptGold(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestPromptTasks(t *testing.T) {
	gold := map[string]PromptGold{
		"Who directed Heat?": {Steps: [][]string{{"search-movie"}, {"movie-credits"}}},
		"IMDb scores of Up":  {Unscored: "OMDb's"},
	}
	tasks, st, err := PromptTasks([]string{"Who directed Heat?", "who directed heat?", "IMDb scores of Up"}, gold)
	if err != nil {
		t.Fatal(err)
	}
	want := []StepTask{{ID: "who directed heat?", Query: "Who directed Heat?", Steps: [][]string{{"search-movie"}, {"movie-credits"}}}}
	if !reflect.DeepEqual(tasks, want) || st != (PromptStats{Prompts: 3, Duplicates: 1, Unscored: 1}) {
		t.Errorf("got %+v %+v", tasks, st)
	}
	if _, _, err := PromptTasks([]string{"Who directed Heat?", "A prompt without gold"}, gold); !errors.Is(err, ErrPromptGold) || !strings.Contains(err.Error(), "A prompt without gold") {
		t.Errorf("prompt without gold: %v", err)
	}
	if _, _, err := PromptTasks([]string{"Who directed Heat?"}, gold); !errors.Is(err, ErrPromptGold) || !strings.Contains(err.Error(), "IMDb scores of Up") {
		t.Errorf("gold without prompt: %v", err)
	}
}
