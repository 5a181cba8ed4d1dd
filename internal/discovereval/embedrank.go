package discovereval

import (
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/discover"
	"github.com/anvil-dev/anvil/runtime/discover/embed"
)

// The rankers below measure the optional sentence-embedding layer
// (runtime/discover/embed) against runtime/discover's lexical ranking, on
// the same task sets (docs/discovery.md, "Sentence embeddings"). They are
// composed here, in the evaluation: runtime/discover's ranking is unchanged.

// EntryText is what an operation is embedded from.
type EntryText int

const (
	// TitleSentence: the title and the description's first sentence.
	TitleSentence EntryText = iota
	// TitleSentencePath: those and the words of the HTTP path (placeholders
	// left out).
	TitleSentencePath
)

func (v EntryText) String() string {
	if v == TitleSentencePath {
		return "title+sentence+path"
	}
	return "title+sentence"
}

// maxSentence bounds the first sentence taken from a description.
const maxSentence = 300

// OperationText is the text an operation is embedded from under variant v.
func OperationText(op *air.Operation, v EntryText) string {
	parts := []string{strings.TrimSpace(op.DisplayName)}
	if s := firstSentence(op.Description); s != "" && !strings.EqualFold(s, parts[0]) {
		parts = append(parts, s)
	}
	if v == TitleSentencePath {
		var words []string
		for _, seg := range strings.Split(op.SourceRef.Path, "/") {
			if seg == "" || strings.HasPrefix(seg, "{") {
				continue
			}
			words = append(words, strings.NewReplacer("-", " ", "_", " ", ".", " ").Replace(seg))
		}
		if len(words) > 0 {
			parts = append(parts, strings.Join(words, " "))
		}
	}
	return strings.Join(parts, ". ")
}

// firstSentence is s up to its first sentence end (". ", a blank line or a
// line break), at most maxSentence bytes, white space collapsed.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	end := len(s)
	for _, sep := range []string{". ", ".\n", "\n\n", "\n"} {
		if i := strings.Index(s, sep); i >= 0 && i < end {
			end = i
		}
	}
	s = strings.Join(strings.Fields(s[:end]), " ")
	if len(s) > maxSentence {
		s = s[:maxSentence]
		for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 { // do not split a rune
			s = s[:len(s)-1]
		}
		if len(s) > 0 && s[len(s)-1] >= 0xC0 {
			s = s[:len(s)-1]
		}
	}
	return strings.TrimSuffix(s, ".")
}

// Embedder embeds with a model and remembers query vectors (every ranker
// of a run asks for the same queries).
type Embedder struct {
	Model *embed.Model
	mu    sync.Mutex
	cache map[string][]float32
}

// Query returns q's embedding.
func (e *Embedder) Query(q string) []float32 {
	e.mu.Lock()
	v, ok := e.cache[q]
	e.mu.Unlock()
	if ok {
		return v
	}
	v = e.Model.Embed(q)
	e.mu.Lock()
	if e.cache == nil {
		e.cache = map[string][]float32{}
	}
	e.cache[q] = v
	e.mu.Unlock()
	return v
}

// Vectors are a document's operations' embeddings, by AIR id.
type Vectors struct {
	IDs  []string
	Vecs [][]float32
	byID map[string]int
}

// EmbedOperations embeds every operation of doc under variant v with
// workers goroutines (the model is safe for concurrent use).
func EmbedOperations(m *embed.Model, doc *air.Document, v EntryText, workers int) *Vectors {
	n := len(doc.Operations)
	vs := &Vectors{IDs: make([]string, n), Vecs: make([][]float32, n), byID: make(map[string]int, n)}
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				vs.Vecs[i] = m.Embed(OperationText(&doc.Operations[i], v))
			}
		}()
	}
	for i := range n {
		vs.IDs[i] = doc.Operations[i].ID
		vs.byID[vs.IDs[i]] = i
		next <- i
	}
	close(next)
	wg.Wait()
	return vs
}

// NewVectors wraps vectors computed earlier for doc's operations, in
// order.
func NewVectors(doc *air.Document, vecs [][]float32) *Vectors {
	vs := &Vectors{IDs: make([]string, len(vecs)), Vecs: vecs, byID: make(map[string]int, len(vecs))}
	for i := range vecs {
		vs.IDs[i] = doc.Operations[i].ID
		vs.byID[vs.IDs[i]] = i
	}
	return vs
}

func dot(a, b []float32) float64 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}

// cosines returns the query's cosine with every operation (all vectors are
// unit length).
func (vs *Vectors) cosines(q []float32) []float64 {
	out := make([]float64, len(vs.Vecs))
	for i, v := range vs.Vecs {
		out[i] = dot(q, v)
	}
	return out
}

// order returns the indices of scores, best first, ties by index.
func order(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}

// EmbedRanker ranks every operation by the cosine of its embedding with
// the query's.
func EmbedRanker(e *Embedder, vs *Vectors) Ranker {
	return func(q string, limit int) []string {
		var out []string
		for _, i := range order(vs.cosines(e.Query(q)))[:min(limit, len(vs.IDs))] {
			out = append(out, vs.IDs[i])
		}
		return out
	}
}

// HybridRanker reranks runtime/discover's answer (its first
// discover.MaxLimit results) by the lexical score divided by the best one
// plus w times the cosine; entries the lexical ranking did not return are
// not added. The producers the answer added for the results that need
// them (Result.ProducerFor) keep their places: only the other results move.
func HybridRanker(ix *discover.Index, e *Embedder, vs *Vectors, w float64) Ranker {
	return func(q string, limit int) []string {
		res := ix.Search(q, discover.Options{Limit: discover.MaxLimit})
		if len(res) == 0 {
			return nil
		}
		qv := e.Query(q)
		top := 0.0
		for _, r := range res {
			top = math.Max(top, r.Score)
		}
		var movable []string
		var scores []float64
		for _, r := range res {
			if r.ProducerFor != nil {
				continue
			}
			lex := 0.0
			if top > 0 {
				lex = r.Score / top
			}
			movable = append(movable, r.Entry.OperationID)
			scores = append(scores, lex+w*vs.cosine(qv, r.Entry.OperationID))
		}
		var ranked []string
		for _, k := range order(scores) {
			ranked = append(ranked, movable[k])
		}
		return keepProducers(res, ranked, limit)
	}
}

// cosine is the query's cosine with the operation id's embedding (0 when
// it has none).
func (vs *Vectors) cosine(q []float32, id string) float64 {
	if i, ok := vs.byID[id]; ok {
		return dot(q, vs.Vecs[i])
	}
	return 0
}

// keepProducers lays ranked out in res's slots, except that the producers
// res added (ProducerFor set) stay in their slots; at most limit ids.
func keepProducers(res []discover.Result, ranked []string, limit int) []string {
	fixed := map[string]bool{}
	for _, r := range res {
		if r.ProducerFor != nil {
			fixed[r.Entry.OperationID] = true
		}
	}
	var out []string
	next := 0
	take := func() bool {
		for next < len(ranked) && fixed[ranked[next]] {
			next++
		}
		if next == len(ranked) {
			return false
		}
		out = append(out, ranked[next])
		next++
		return true
	}
	for _, r := range res {
		if len(out) == limit {
			return out
		}
		if r.ProducerFor != nil {
			out = append(out, r.Entry.OperationID)
		} else {
			take() // when ranked runs out, the later producers still follow
		}
	}
	for len(out) < limit && take() {
	}
	return out
}

// FusionRanker is reciprocal-rank fusion (Cormack et al., SIGIR 2009) of
// runtime/discover's first discover.MaxLimit results and the embedding's
// first discover.MaxLimit: each operation scores Σ weight/(k + rank) over
// the two lists, the embedding's list weighted by w. Unlike HybridRanker it
// can return an operation the lexical ranking missed. As in HybridRanker,
// the producers the lexical answer added keep their places.
func FusionRanker(ix *discover.Index, e *Embedder, vs *Vectors, k, w float64) Ranker {
	return func(q string, limit int) []string {
		score := map[string]float64{}
		var ids []string
		add := func(id string, s float64) {
			if _, ok := score[id]; !ok {
				ids = append(ids, id)
			}
			score[id] += s
		}
		res := ix.Search(q, discover.Options{Limit: discover.MaxLimit})
		r := 0
		for _, x := range res {
			if x.ProducerFor == nil {
				r++
				add(x.Entry.OperationID, 1/(k+float64(r)))
			}
		}
		for r, i := range order(vs.cosines(e.Query(q)))[:min(discover.MaxLimit, len(vs.IDs))] {
			add(vs.IDs[i], w/(k+float64(r+1)))
		}
		sort.SliceStable(ids, func(a, b int) bool { return score[ids[a]] > score[ids[b]] })
		return keepProducers(res, ids, limit)
	}
}

// WhenWeakRanker answers with inner when runtime/discover's best result is
// weak (it matches less than half of the query's concepts, or nothing
// matched) and with runtime/discover otherwise: the embedding is asked only
// where the words failed.
func WhenWeakRanker(ix *discover.Index, inner Ranker) Ranker {
	lexical := DiscoverRanker(ix)
	return func(q string, limit int) []string {
		if res := ix.Search(q, discover.Options{Limit: 1}); len(res) == 0 || res[0].Weak {
			return inner(q, limit)
		}
		return lexical(q, limit)
	}
}

// Len is the number of queries embedded so far.
func (e *Embedder) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.cache)
}
