package discovereval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/internal/testinput"
)

// ghTasks reads the gh manual page tasks; a missing input fails under CI
// (CI set) and skips elsewhere with the command that fetches it.
func ghTasks(t *testing.T) []StepTask {
	t.Helper()
	dir := filepath.Join(specsDir(), "gh-man")
	testinput.File(t, filepath.Join(dir, "gh-issue-list.1.gz"), "scripts/fetch-specs.sh fetches it")
	f, err := os.Open(filepath.Join("testdata", "gh_commands.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmds, err := ParseCommands(f)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := GHTasks(dir, cmds)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// TestGHManualEval scores runtime/discover and plain BM25 on the tasks of
// the GitHub CLI's manual pages over GitHub's full API, both halves, and
// holds the test half to floors just under the figures measured when the
// ranking last changed (docs/discovery.md): a regression guard. Only the
// dev half's misses are printed.
func TestGHManualEval(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	tasks := ghTasks(t)
	doc, ix := githubIndex(t)
	if len(tasks) < 150 {
		t.Fatalf("%d tasks", len(tasks))
	}
	for _, half := range []Half{Dev, Test} {
		d, err := EvaluateSteps(DiscoverRanker(ix), doc, tasks, half)
		if err != nil {
			t.Fatal(err)
		}
		b, err := EvaluateSteps(BM25Ranker(doc), doc, tasks, half)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("gh manual, %s half: single (%d) recall@1 %.3f recall@5 %.3f (BM25 %.3f %.3f); multi-step (%d) first-call hit@5 %.3f coverage@10 %.3f (BM25 %.3f %.3f)",
			half, d.Single, d.Recall1, d.Recall5, b.Recall1, b.Recall5, d.Multi, d.FirstHit5, d.Coverage10, b.FirstHit5, b.Coverage10)
		if half == Dev && os.Getenv("ANVIL_DISCOVER_MISSES") != "" {
			t.Logf("dev misses:\n%s", strings.Join(d.Misses, "\n"))
		}
		if half == Test {
			if d.Recall5 < 0.75 || d.FirstHit5 < 0.45 {
				t.Errorf("test half below its floor: recall@5 %.3f, first-call hit@5 %.3f", d.Recall5, d.FirstHit5)
			}
		}
	}
}

func TestHalfOfStable(t *testing.T) {
	// The split must never move: these ids' halves are fixed.
	for id, want := range map[string]Half{"gh issue list#name": HalfOf("gh issue list#name")} {
		if HalfOf(id) != want {
			t.Errorf("%s moved", id)
		}
	}
	dev := 0
	for i := 0; i < 1000; i++ {
		if HalfOf("task-"+string(rune('a'+i%26))+string(rune('a'+i/26))) == Dev {
			dev++
		}
	}
	if dev < 400 || dev > 600 {
		t.Errorf("%d of 1000 in dev", dev)
	}
}

func TestParseManPage(t *testing.T) {
	p, err := ParseManPage(strings.NewReader(`.nh
.TH "GH-RELEASE-DOWNLOAD" "1"
.SH NAME
.PP
gh-release-download \- Download release assets

.SH EXAMPLE
.PP
.nf
# download all assets from a specific release
$ gh release download v1.2.3

# zip
$ gh release download --archive=zip
.fi
`))
	if err != nil || p.Summary != "Download release assets" || len(p.Examples) != 1 || p.Examples[0] != "download all assets from a specific release" {
		t.Errorf("%+v %v", p, err)
	}
	cmds, err := ParseCommands(strings.NewReader("# c\ngh x => a/b, a/c > d/e\n"))
	if err != nil || len(cmds["gh x"]) != 2 || len(cmds["gh x"][0]) != 2 {
		t.Errorf("%v %v", cmds, err)
	}
	for _, bad := range []string{"no arrow\n", "gh x => a > \n", "gh x => a\ngh x => b\n"} {
		if _, err := ParseCommands(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
