// Command embedeval measures the optional sentence-embedding layer
// (runtime/discover/embed, the Universal Sentence Encoder lite) against
// runtime/discover's lexical ranking on the evaluation's task sets
// (docs/discovery.md, "Sentence embeddings"): per set and half, plain BM25,
// the lexical ranking, the embedding alone, a rerank of the lexical answer
// by lexical + w·cosine and a reciprocal-rank fusion of both lists, with
// two texts per operation. `make embed-eval` runs it.
//
// Only dev halves are printed unless -test names the one configuration
// chosen on them: the test halves are scored once, never tuned against.
// The team's own sets (github_tasks, github_heldout, stripe_tasks) have no
// halves; they are printed whole, as text the lexical ranking was tuned on.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/anvil-dev/anvil/internal/discovereval"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/discover"
	"github.com/anvil-dev/anvil/runtime/discover/embed"
)

type set struct {
	name, spec, connector string
	tasks                 []discovereval.StepTask
	team                  bool // the team's own text: no halves
}

type api struct {
	doc  *air.Document
	ix   *discover.Index
	vecs map[discovereval.EntryText]*discovereval.Vectors
}

type config struct {
	name string
	rank func(a *api) discovereval.Ranker
}

func main() {
	specs := flag.String("specs", os.Getenv("ANVIL_SPECS_DIR"), "the fetched specs directory (scripts/fetch-specs.sh)")
	testdata := flag.String("testdata", "internal/discovereval/testdata", "the evaluation's gold files")
	test := flag.String("test", "", "also score the test halves with this configuration (chosen on the dev halves)")
	misses := flag.String("misses", "", "print the dev misses of this configuration")
	flag.StringVar(&cacheDir, "cache", "", "keep the operations' vectors in this directory between runs (keyed by the model's and the texts' SHA-256)")
	flag.Parse()
	if *specs == "" {
		*specs = ".cache/specs"
	}
	if err := run(*specs, *testdata, *test, *misses); err != nil {
		fmt.Fprintln(os.Stderr, "embedeval:", err)
		os.Exit(1)
	}
}

func run(specs, testdata, testConfig, missConfig string) error {
	start := time.Now()
	m, err := embed.Load(filepath.Join(specs, "use-lite"))
	if err != nil {
		return err
	}
	sets, err := loadSets(specs, testdata)
	if err != nil {
		return err
	}
	e := &discovereval.Embedder{Model: m}
	apis := map[string]*api{}
	workers := min(runtime.GOMAXPROCS(0), 2)
	for _, s := range sets {
		if apis[s.spec] != nil {
			continue
		}
		doc, err := discovereval.Compile(filepath.Join(specs, s.spec), s.connector)
		if err != nil {
			return err
		}
		ix, err := discovereval.Index(s.connector, doc)
		if err != nil {
			return err
		}
		a := &api{doc: doc, ix: ix, vecs: map[discovereval.EntryText]*discovereval.Vectors{}}
		for _, v := range []discovereval.EntryText{discovereval.TitleSentence, discovereval.TitleSentencePath} {
			t0 := time.Now()
			a.vecs[v] = cachedVectors(specs, m, doc, v, workers)
			fmt.Printf("# %s: %d operations embedded (%s) in %.1f s with %d workers\n", s.spec, len(doc.Operations), v, time.Since(t0).Seconds(), workers)
		}
		apis[s.spec] = a
	}
	configs := []config{
		{"bm25", func(a *api) discovereval.Ranker { return discovereval.BM25Ranker(a.doc) }},
		{"lexical", func(a *api) discovereval.Ranker { return discovereval.DiscoverRanker(a.ix) }},
	}
	for _, v := range []discovereval.EntryText{discovereval.TitleSentence, discovereval.TitleSentencePath} {
		configs = append(configs, config{"embed/" + v.String(), func(a *api) discovereval.Ranker { return discovereval.EmbedRanker(e, a.vecs[v]) }})
		for _, w := range []float64{0.25, 0.5, 1} {
			configs = append(configs, config{fmt.Sprintf("hybrid w=%g/%s", w, v), func(a *api) discovereval.Ranker {
				return discovereval.HybridRanker(a.ix, e, a.vecs[v], w)
			}})
		}
		for _, w := range []float64{0.5, 1} {
			configs = append(configs, config{fmt.Sprintf("rrf k=60 w=%g/%s", w, v), func(a *api) discovereval.Ranker {
				return discovereval.FusionRanker(a.ix, e, a.vecs[v], 60, w)
			}})
		}
		for _, w := range []float64{0.5, 1} {
			configs = append(configs, config{fmt.Sprintf("when weak: hybrid w=%g/%s", w, v), func(a *api) discovereval.Ranker {
				return discovereval.WhenWeakRanker(a.ix, discovereval.HybridRanker(a.ix, e, a.vecs[v], w))
			}})
			configs = append(configs, config{fmt.Sprintf("when weak: rrf k=60 w=%g/%s", w, v), func(a *api) discovereval.Ranker {
				return discovereval.WhenWeakRanker(a.ix, discovereval.FusionRanker(a.ix, e, a.vecs[v], 60, w))
			}})
		}
	}
	if testConfig != "" && !slices.ContainsFunc(configs, func(c config) bool { return c.name == testConfig }) {
		return fmt.Errorf("-test %q is not a configuration", testConfig)
	}
	fmt.Println("| set | half | ranking | recall@1 | recall@5 | first-call hit@5 | coverage@10 |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, s := range sets {
		a := apis[s.spec]
		halves := []discovereval.Half{discovereval.Dev}
		if s.team {
			halves = []discovereval.Half{""}
		} else if testConfig != "" {
			halves = append(halves, discovereval.Test)
		}
		for _, h := range halves {
			for _, c := range configs {
				if h == discovereval.Test && c.name != testConfig && c.name != "lexical" && c.name != "bm25" {
					continue
				}
				rep, err := score(c.rank(a), a.doc, s.tasks, h)
				if err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
				}
				label := string(h)
				if h == "" {
					label = "all (team text)"
				}
				fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", s.name, label, c.name,
					fig(rep.Single, rep.Recall1), fig(rep.Single, rep.Recall5), fig(rep.Multi, rep.FirstHit5), fig(rep.Multi, rep.Coverage10))
				if c.name == missConfig && h != discovereval.Test {
					fmt.Printf("misses:\n%s\n", strings.Join(rep.Misses, "\n"))
				}
			}
		}
	}
	fmt.Printf("# %d query embeddings; total %.0f s\n", e.Len(), time.Since(start).Seconds())
	return nil
}

var cacheDir string

// cachedVectors embeds doc's operations, or reads them from cacheDir when
// a run embedded the same texts with the same model files.
func cachedVectors(specs string, m *embed.Model, doc *air.Document, v discovereval.EntryText, workers int) *discovereval.Vectors {
	if cacheDir == "" {
		return discovereval.EmbedOperations(m, doc, v, workers)
	}
	h := sha256.New()
	for _, f := range []string{"model.json", "vocab.json"} {
		b, _ := os.ReadFile(filepath.Join(specs, "use-lite", f))
		h.Write(b)
	}
	for i := range doc.Operations {
		fmt.Fprintf(h, "%s\x00%s\x00", doc.Operations[i].ID, discovereval.OperationText(&doc.Operations[i], v))
	}
	path := filepath.Join(cacheDir, fmt.Sprintf("embedeval-%x.f32", h.Sum(nil)))
	n := len(doc.Operations)
	if b, err := os.ReadFile(path); err == nil && len(b) == 4*n*embed.Dim {
		vecs := make([][]float32, n)
		for i := range vecs {
			vecs[i] = make([]float32, embed.Dim)
			for j := range vecs[i] {
				vecs[i][j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*(i*embed.Dim+j):]))
			}
		}
		return discovereval.NewVectors(doc, vecs)
	}
	vs := discovereval.EmbedOperations(m, doc, v, workers)
	b := make([]byte, 0, 4*n*embed.Dim)
	for _, vec := range vs.Vecs {
		for _, x := range vec {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	}
	if err := os.MkdirAll(cacheDir, 0o755); err == nil {
		_ = os.WriteFile(path, b, 0o644)
	}
	return vs
}

func fig(n int, f float64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%.3f (%d)", f, n)
}

// score scores one half; the empty half is every task (the team's sets).
func score(rank discovereval.Ranker, doc *air.Document, tasks []discovereval.StepTask, h discovereval.Half) (discovereval.StepReport, error) {
	if h != "" {
		return discovereval.EvaluateSteps(rank, doc, tasks, h)
	}
	// Every task: score both halves and add the counts up.
	var out discovereval.StepReport
	for _, half := range []discovereval.Half{discovereval.Dev, discovereval.Test} {
		r, err := discovereval.EvaluateSteps(rank, doc, tasks, half)
		if err != nil {
			return out, err
		}
		out.Recall1 += r.Recall1 * float64(r.Single)
		out.Recall5 += r.Recall5 * float64(r.Single)
		out.Single += r.Single
		out.Misses = append(out.Misses, r.Misses...)
	}
	if out.Single > 0 {
		out.Recall1 /= float64(out.Single)
		out.Recall5 /= float64(out.Single)
	}
	return out, nil
}

func loadSets(specs, testdata string) ([]set, error) {
	var sets []set
	manual := map[string][]discovereval.StepTask{}
	for _, src := range discovereval.ManualSources {
		tasks, err := discovereval.ManualSetTasks(specs, testdata, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.Name, err)
		}
		manual[src.Name] = tasks
	}
	sets = append(sets, set{name: "gh manual", spec: "github.json", connector: "github", tasks: manual["gh manual"]})
	sets = append(sets, set{name: "kubectl manual", spec: "kubernetes.json", connector: "kubernetes", tasks: manual["kubectl manual"]})
	for _, pool := range discovereval.ManualPools {
		var tasks []discovereval.StepTask
		for _, n := range pool.Sets {
			tasks = append(tasks, manual[n]...)
		}
		sets = append(sets, set{name: pool.Name, spec: pool.Spec, connector: pool.Connector, tasks: tasks})
	}
	for _, src := range discovereval.ReadmeSources {
		tasks, _, err := discovereval.ReadmeSetTasks(specs, testdata, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.Name, err)
		}
		sets = append(sets, set{name: src.Name, spec: src.Spec, connector: src.Connector, tasks: tasks})
	}
	for _, src := range discovereval.PromptSources {
		tasks, _, err := discovereval.PromptSetTasks(specs, testdata, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.Name, err)
		}
		sets = append(sets, set{name: src.Name, spec: src.Spec, connector: src.Connector, tasks: tasks})
	}
	for _, team := range []struct{ file, spec, connector string }{
		{"github_tasks.txt", "github.json", "github"},
		{"github_heldout.txt", "github.json", "github"},
		{"stripe_tasks.txt", "stripe.json", "stripe"},
	} {
		ts, err := discovereval.TeamTasks(testdata, team.file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", team.file, err)
		}
		var tasks []discovereval.StepTask
		for _, t := range ts {
			tasks = append(tasks, discovereval.StepTask{ID: fmt.Sprintf("%s:%d", team.file, t.Line), Query: t.Query, Steps: [][]string{t.Expected}})
		}
		sets = append(sets, set{name: strings.TrimSuffix(team.file, ".txt"), spec: team.spec, connector: team.connector, tasks: tasks, team: true})
	}
	return sets, nil
}
