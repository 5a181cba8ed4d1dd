package discovereval

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/discover"
)

// Ranker ranks a document's operations for a query: AIR ids, best first,
// at most limit.
type Ranker func(query string, limit int) []string

// DiscoverRanker ranks with runtime/discover, as anvil_search does
// (producers returned with the tools that need them included).
func DiscoverRanker(ix *discover.Index) Ranker {
	return func(q string, limit int) []string {
		var out []string
		for _, r := range ix.Search(q, discover.Options{Limit: limit}) {
			out = append(out, r.Entry.OperationID)
		}
		return out
	}
}

// BM25Ranker is the baseline every figure is reported next to: plain
// Okapi BM25 (k1 1.2, b 0.75) over one bag of words per operation (tool
// name, title, description, path, parameter names), lower-cased and split
// at anything that is not a letter or digit; no stemming, no synonyms, no
// fields.
func BM25Ranker(doc *air.Document) Ranker {
	type posting struct {
		doc int
		tf  float64
	}
	post := map[string][]posting{}
	lens := make([]float64, len(doc.Operations))
	for i := range doc.Operations {
		op := &doc.Operations[i]
		text := []string{op.MCP.ToolName, op.DisplayName, op.Description, op.SourceRef.Path}
		for _, p := range op.Input.Params {
			text = append(text, p.Name)
		}
		counts := map[string]float64{}
		for _, t := range text {
			for _, w := range plainWords(t) {
				counts[w]++
				lens[i]++
			}
		}
		for w, c := range counts {
			post[w] = append(post[w], posting{i, c})
		}
	}
	avg := 0.0
	for _, l := range lens {
		avg += l
	}
	avg /= math.Max(1, float64(len(lens)))
	n := float64(len(doc.Operations))
	return func(q string, limit int) []string {
		score := map[int]float64{}
		seen := map[string]bool{}
		for _, w := range plainWords(q) {
			if seen[w] {
				continue
			}
			seen[w] = true
			ps := post[w]
			idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
			for _, p := range ps {
				score[p.doc] += idf * p.tf * 2.2 / (p.tf + 1.2*(0.25+0.75*lens[p.doc]/avg))
			}
		}
		docs := make([]int, 0, len(score))
		for d := range score {
			docs = append(docs, d)
		}
		sort.Slice(docs, func(a, b int) bool {
			if score[docs[a]] != score[docs[b]] {
				return score[docs[a]] > score[docs[b]]
			}
			return docs[a] < docs[b]
		})
		var out []string
		for _, d := range docs[:min(limit, len(docs))] {
			out = append(out, doc.Operations[d].ID)
		}
		return out
	}
}

func plainWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// StepReport sums up one half of a step task set.
type StepReport struct {
	// Single-operation tasks: recall@1 and recall@5.
	Single           int
	Recall1, Recall5 float64
	// Multi-step tasks: the first call in the top 5, and the share of all
	// their steps in the top 10.
	Multi                 int
	FirstHit5, Coverage10 float64
	// Misses lists the tasks not answered (single: not in the top 5;
	// multi: first call not in the top 5), with the top five.
	Misses []string
	// Misses1 lists the single-operation tasks answered in the top 5 but
	// not first, with the top five: what recall@1 lost.
	Misses1 []string
}

// EvaluateSteps scores the tasks of one half with a ranker.
func EvaluateSteps(rank Ranker, doc *air.Document, tasks []StepTask, half Half) (StepReport, error) {
	bySource := map[string]string{}
	for i := range doc.Operations {
		bySource[doc.Operations[i].SourceRef.OperationID] = doc.Operations[i].ID
	}
	var rep StepReport
	var at1, at5, first5, steps, covered int
	for _, t := range tasks {
		if HalfOf(t.ID) != half {
			continue
		}
		want := make([]map[string]bool, len(t.Steps))
		for i, st := range t.Steps {
			want[i] = map[string]bool{}
			for _, o := range st {
				id, ok := bySource[o]
				if !ok {
					return StepReport{}, fmt.Errorf("%s: %w: %s", t.ID, ErrUnknownOperation, o)
				}
				want[i][id] = true
			}
		}
		top := rank(t.Query, 10)
		pos := func(step int) int {
			for i, id := range top {
				if want[step][id] {
					return i + 1
				}
			}
			return 0
		}
		p := pos(0)
		if len(t.Steps) == 1 {
			rep.Single++
			if p == 1 {
				at1++
			}
			if p >= 1 && p <= 5 {
				at5++
			}
		} else {
			rep.Multi++
			if p >= 1 && p <= 5 {
				first5++
			}
			for s := range t.Steps {
				steps++
				if pos(s) > 0 {
					covered++
				}
			}
		}
		miss := fmt.Sprintf("%s %q: want %v, top %v", t.ID, t.Query, t.Steps, top[:min(5, len(top))])
		if p == 0 || p > 5 {
			rep.Misses = append(rep.Misses, miss)
		} else if p > 1 && len(t.Steps) == 1 {
			rep.Misses1 = append(rep.Misses1, miss)
		}
	}
	if rep.Single > 0 {
		rep.Recall1 = float64(at1) / float64(rep.Single)
		rep.Recall5 = float64(at5) / float64(rep.Single)
	}
	if rep.Multi > 0 {
		rep.FirstHit5 = float64(first5) / float64(rep.Multi)
		rep.Coverage10 = float64(covered) / float64(max(steps, 1))
	}
	return rep, nil
}
