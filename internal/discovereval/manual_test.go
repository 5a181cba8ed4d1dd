package discovereval

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/internal/testinput"
)

// manualTasks reads a manual page task set; a missing input fails under
// CI and skips loudly elsewhere (testinput), naming what fetches it.
func manualTasks(t testing.TB, src ManualSource) []StepTask {
	t.Helper()
	testinput.File(t, filepath.Join(specsDir(), src.Dir), "scripts/fetch-specs.sh fetches it")
	tasks, err := ManualSetTasks(specsDir(), "testdata", src)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// manualFloors hold each set's test half to figures just under those
// measured when the ranking last changed (docs/discovery.md): a regression
// guard. Zero: not guarded (too few tasks of that kind).
var manualFloors = map[string]StepReport{
	"gh manual":      {Recall1: 0.60, Recall5: 0.78, FirstHit5: 0.50, Coverage10: 0.60},
	"hub manual":     {},
	"kubectl manual": {Recall1: 0.50, Recall5: 0.66},
	"git-hub manual": {Recall1: 0.65, Recall5: 0.80},
	"gitsome help":   {Recall1: 0.50, Recall5: 0.70},
	"gist manual":    {Recall1: 0.40, Recall5: 0.55},
	"forge manual":   {Recall1: 0.35, Recall5: 0.60},
	// The pool of the five sets above other than gh's and kubectl's.
	"other GitHub CLIs": {Recall1: 0.50, Recall5: 0.70},
}

// TestManualEval scores runtime/discover and plain BM25 on the manual page
// task sets, both halves, and holds the test halves to their floors. Only
// the dev halves' misses are printed (ANVIL_DISCOVER_MISSES set).
func TestManualEval(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, src := range ManualSources {
		t.Run(strings.ReplaceAll(src.Name, " ", "_"), func(t *testing.T) {
			scoreHalves(t, src.Name, manualTasks(t, src), src.Spec, src.Connector, manualFloors[src.Name])
		})
	}
	for _, pool := range ManualPools {
		t.Run(strings.ReplaceAll(pool.Name, " ", "_"), func(t *testing.T) {
			var tasks []StepTask
			n := 0
			for _, src := range ManualSources {
				if slices.Contains(pool.Sets, src.Name) {
					tasks = append(tasks, manualTasks(t, src)...)
					n++
				}
			}
			if n != len(pool.Sets) {
				t.Fatalf("%s: %d of its sets %q are manual sources", pool.Name, n, pool.Sets)
			}
			scoreHalves(t, pool.Name, tasks, pool.Spec, pool.Connector, manualFloors[pool.Name])
		})
	}
}

// scoreHalves scores a step task set's dev and test halves with
// runtime/discover and plain BM25, logs the figures (and, with
// ANVIL_DISCOVER_MISSES set, the dev half's misses, never the test
// half's), and holds the test half to floor.
func scoreHalves(t *testing.T, name string, tasks []StepTask, spec, connector string, floor StepReport) {
	t.Helper()
	doc, ix := specIndex(t, spec, connector)
	for _, half := range []Half{Dev, Test} {
		d, err := EvaluateSteps(DiscoverRanker(ix), doc, tasks, half)
		if err != nil {
			t.Fatal(err)
		}
		b, err := EvaluateSteps(BM25Ranker(doc), doc, tasks, half)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s, %s half: single (%d) recall@1 %.3f recall@5 %.3f (BM25 %.3f %.3f); multi-step (%d) first-call hit@5 %.3f coverage@10 %.3f (BM25 %.3f %.3f)",
			name, half, d.Single, d.Recall1, d.Recall5, b.Recall1, b.Recall5, d.Multi, d.FirstHit5, d.Coverage10, b.FirstHit5, b.Coverage10)
		if half == Dev && os.Getenv("ANVIL_DISCOVER_MISSES") != "" {
			t.Logf("dev misses:\n%s", strings.Join(d.Misses, "\n"))
			t.Logf("dev single-operation tasks answered but not first:\n%s", strings.Join(d.Misses1, "\n"))
		}
		if f := floor; half == Test && (d.Recall1 < f.Recall1 || d.Recall5 < f.Recall5 || d.FirstHit5 < f.FirstHit5 || d.Coverage10 < f.Coverage10) {
			t.Errorf("test half below its floor %+v: recall@1 %.3f recall@5 %.3f first-call hit@5 %.3f coverage@10 %.3f",
				f, d.Recall1, d.Recall5, d.FirstHit5, d.Coverage10)
		}
	}
}

func TestHalfOfStable(t *testing.T) {
	// The split must never move: these ids' halves are fixed.
	for id, want := range map[string]Half{"gh issue list#name": Test, "gh release download#example-1": Dev, "kubectl logs#name": Dev, "hub fork#name": Dev} {
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
	// kubectl's pages indent their examples and continue a comment on the
	// next line; hub's section is EXAMPLES.
	p, err = ParseManPage(strings.NewReader(`.SH NAME
.PP
kubectl scale \- Set a new size

.SH EXAMPLES
.nf
  # Scale a replicaset named 'foo'
  # to 3.
  kubectl scale --replicas=3 rs/foo

  # one
  kubectl scale
.fi
.SH SEE ALSO
# not an example
`))
	if err != nil || p.Summary != "Set a new size" || len(p.Examples) != 1 || p.Examples[0] != "Scale a replicaset named 'foo' to 3." {
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
