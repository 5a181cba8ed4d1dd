package discovereval

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/discover"
)

// benchQueries are searches of the kinds agents send: short intents,
// entity-laden requests, a single verb, a miss.
var benchQueries = []string{
	"merge a pull request", "list open issues in a repository", "create a webhook for my organization",
	"delete a release", "who starred my repository", "get the latest release of octocat/hello-world",
	"download the logs of a failed workflow run", "refund an invoice for a customer", "list",
	"update the status of a deployment", "rotate a secret token", "zzqx nothing",
}

// benchSearch runs every query b.N times over, records each search's
// latency and reports the median (p50-ns) and 99th percentile (p99-ns) of
// wall time, and the same of the searching thread's CPU time (p50-cpu-ns,
// p99-cpu-ns; Linux only). On two cores shared with other builds the wall
// tail mostly measures how long a search waited for a core; the CPU tail
// is the search's own work. The goroutine is locked to its thread so the
// thread's clock is the search's.
func benchSearch(b *testing.B, ix *discover.Index) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lat := make([]time.Duration, 0, b.N*len(benchQueries))
	cpu := make([]time.Duration, 0, b.N*len(benchQueries))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range benchQueries {
			c0, ok := threadCPU()
			t := time.Now()
			ix.Search(q, discover.Options{Limit: 10})
			lat = append(lat, time.Since(t))
			if c1, ok1 := threadCPU(); ok && ok1 {
				cpu = append(cpu, time.Duration(c1-c0))
			}
		}
	}
	b.StopTimer()
	report := func(d []time.Duration, unit string) {
		if len(d) == 0 {
			return
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50"+unit)
		b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds()), "p99"+unit)
	}
	report(lat, "-ns")
	report(cpu, "-cpu-ns")
	b.ReportMetric(0, "ns/op") // per-iteration time covers many searches; p50 is the figure
}

// indexBytes builds the index and returns it with the heap it retains
// beyond src, the operations it was built from (kept alive, as a gateway
// keeps its documents).
func indexBytes(src any, build func() *discover.Index) (*discover.Index, uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC() // a second cycle frees what the first only unlinked (pools)
	runtime.ReadMemStats(&before)
	ix := build()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ix)
	runtime.KeepAlive(src)
	return ix, after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
}

func BenchmarkSearchGitHub(b *testing.B) {
	p := filepath.Join(specsDir(), "github.json")
	if _, err := os.Stat(p); err != nil {
		b.Skipf("%s not present", p)
	}
	doc, err := Compile(p, "github")
	if err != nil {
		b.Fatal(err)
	}
	ix, mem := indexBytes(doc, func() *discover.Index {
		ix, err := Index("github", doc)
		if err != nil {
			b.Fatal(err)
		}
		return ix
	})
	benchSearch(b, ix) // resets the timer, and with it any metric reported before
	b.ReportMetric(float64(mem)/float64(ix.Len()), "index-B/entry")
}

func BenchmarkSearchSynthetic20k(b *testing.B) {
	ops := Synthetic(20000)
	ix, mem := indexBytes(ops, func() *discover.Index { return synthIndex(b, ops) })
	benchSearch(b, ix) // resets the timer, and with it any metric reported before
	b.ReportMetric(float64(mem)/float64(ix.Len()), "index-B/entry")
}

func BenchmarkBuildSynthetic20k(b *testing.B) {
	ops := Synthetic(20000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		synthIndex(b, ops)
	}
}

func synthIndex(tb testing.TB, ops []air.Operation) *discover.Index {
	bl := discover.NewBuilder()
	for i := range ops {
		if err := bl.Add("synthetic", &ops[i]); err != nil {
			tb.Fatal(err)
		}
	}
	return bl.Build()
}

// TestSynthetic: the generator gives n distinct tools, the same ones each
// time.
func TestSynthetic(t *testing.T) {
	a, b := Synthetic(2000), Synthetic(2000)
	seen := map[string]bool{}
	for i := range a {
		if a[i].MCP.ToolName != b[i].MCP.ToolName || a[i].Description != b[i].Description {
			t.Fatalf("op %d differs between runs", i)
		}
		if seen[a[i].MCP.ToolName] {
			t.Fatalf("duplicate tool %s", a[i].MCP.ToolName)
		}
		seen[a[i].MCP.ToolName] = true
	}
	if len(a) != 2000 {
		t.Fatalf("%d ops", len(a))
	}
}

// TestSyntheticSpec: the description of Synthetic(n) is the same bytes
// each time, has its n operations under their tool names, and every
// reference names a schema it defines.
func TestSyntheticSpec(t *testing.T) {
	a, err := SyntheticSpec(300)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := SyntheticSpec(300)
	if !bytes.Equal(a, b) {
		t.Fatal("SyntheticSpec(300) differs between runs")
	}
	var doc struct {
		Paths      map[string]map[string]struct{ OperationID string }
		Components struct{ Schemas map[string]json.RawMessage }
	}
	if err := json.Unmarshal(a, &doc); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, item := range doc.Paths {
		for _, op := range item {
			ids[op.OperationID] = true
		}
	}
	for _, op := range Synthetic(300) {
		if !ids[op.CanonicalName] {
			t.Errorf("operation %s missing", op.CanonicalName)
		}
	}
	if len(ids) != 300 {
		t.Errorf("%d operations, want 300", len(ids))
	}
	for _, m := range regexp.MustCompile(`"#/components/schemas/([^"]+)"`).FindAllSubmatch(a, -1) {
		if _, ok := doc.Components.Schemas[string(m[1])]; !ok {
			t.Fatalf("reference to undefined schema %s", m[1])
		}
	}
}
