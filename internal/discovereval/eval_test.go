package discovereval

import (
	"os"
	"path/filepath"
	"testing"
)

func specsDir() string {
	if d := os.Getenv("ANVIL_SPECS_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", ".cache", "specs")
}

// TestGitHubRecall: on GitHub's full API (every operation indexed), the
// right operation is in the top five for at least 90% of the plain-language
// tasks in testdata/github_tasks.txt.
func TestGitHubRecall(t *testing.T) {
	p := filepath.Join(specsDir(), "github.json")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not present (run scripts/fetch-specs.sh)", p)
	}
	doc, err := Compile(p, "github")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Index("github", doc)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "github_tasks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tasks, err := ParseTasks(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 40 {
		t.Fatalf("%d tasks, want at least 40", len(tasks))
	}
	rep, err := Evaluate(ix, doc, tasks)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rep.Outcomes {
		if o.Rank == 0 || o.Rank > 5 {
			t.Logf("miss (rank %d): %q want %v, top %v", o.Rank, o.Task.Query, o.Task.Expected, o.Top)
		}
	}
	t.Logf("GitHub (%d operations, %d tasks): recall@1 %.3f, recall@5 %.3f", ix.Len(), len(tasks), rep.Recall1, rep.Recall5)
	if rep.Recall5 < 0.9 {
		t.Errorf("recall@5 %.3f < 0.9", rep.Recall5)
	}
}
