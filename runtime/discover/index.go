// Package discover is the search core of progressive discovery: an index,
// built once from the AIR operations a gateway serves, that ranks tools for a
// plain-language query ("merge a pull request") so that an agent can find
// the one tool it needs among thousands without listing them all.
//
// Ranking is BM25F over the text AIR knows of each operation (its served
// name, title, effect verb and resource, tags, HTTP path, parameter names
// and description), with per-field weights, a tokeniser that splits
// snake_case, camelCase and path segments, a light stemmer, canonical
// spellings for common abbreviations (repo, org, pr) and query-side verb
// synonyms (show → get/list, add → create, remove → delete). See
// docs/discovery.md for the weights and the measured recall.
//
// The index holds, per operation, only the strings a result needs (shared
// with the AIR document, not copied) and compact postings; it never holds
// schemas. It is immutable once built and safe for concurrent searches.
package discover

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Entry is one searchable tool.
type Entry struct {
	// Name is the served tool name, <connector>__<tool name>.
	Name string
	// Connector is the connector id the tool is served under.
	Connector string
	// OperationID is the AIR operation id.
	OperationID string
	// Title is the operation's display name.
	Title string
	// Description is the operation's full description (the summary is
	// derived from it when a result is rendered).
	Description string
	// Effect is the operation's effect class (air.EffectClassOf).
	Effect string
	// ConfirmRequired says whether a call must be confirmed.
	ConfirmRequired bool
}

// ServedName is the wire name a fleet gateway serves an operation under
// (air.WireToolName).
func ServedName(connector string, op *air.Operation) string {
	return air.WireToolName(connector, op)
}

// field is one weighted text field of an entry.
type field uint8

const (
	fieldName      field = iota // served tool name, canonical name, AIR id
	fieldTitle                  // display name
	fieldVerb                   // effect action and resource, CLI command words
	fieldTag                    // tags
	fieldPath                   // HTTP path segments
	fieldParam                  // parameter and body field keys
	fieldDesc                   // description
	fieldParamDesc              // parameter descriptions
	numFields
)

// fieldWeight and fieldB are the BM25F weight and length normalisation of
// each field. The title and the verb/resource fields are the most precise
// statements of what an operation does; descriptions are long and carry
// boiler-plate (token scopes, links), so they count least and are
// normalised hardest.
var (
	fieldWeight = [numFields]float64{fieldName: 2.0, fieldTitle: 3.0, fieldVerb: 2.0, fieldTag: 1.0, fieldPath: 1.5, fieldParam: 0.5, fieldDesc: 0.6, fieldParamDesc: 0.3}
	fieldB      = [numFields]float64{fieldName: 0.3, fieldTitle: 0.4, fieldVerb: 0.2, fieldTag: 0.2, fieldPath: 0.3, fieldParam: 0.5, fieldDesc: 0.75, fieldParamDesc: 0.75}
)

// k1 is BM25's term-frequency saturation.
const k1 = 1.2

// maxFieldTerms bounds the terms taken from one field of one operation, and
// maxTextBytes the text read from one string, so a pathological description
// costs neither index space nor build time.
const (
	maxFieldTerms = 600
	maxTextBytes  = 16 << 10
)

// posting is one (entry, term) pair with its precomputed score contribution.
type posting struct {
	doc    uint32
	impact float32
}

// Index is an immutable search index over a set of tools.
type Index struct {
	entries  []Entry
	terms    map[string]uint32 // term → id
	sorted   []string          // every term, sorted (prefix expansion)
	postings [][]posting       // by term id, ordered by doc
	idf      []float32         // by term id
	// titleTerms[titleStart[i]:titleStart[i+1]] are the distinct terms of
	// entry i's title, for the title-coverage re-ranking.
	titleTerms []uint32
	titleStart []uint32
}

// Builder collects operations for an Index.
type Builder struct {
	entries []Entry
	// Terms are interned as they are seen; docTerms holds, per entry, its
	// terms' field counts.
	terms    map[string]uint32
	termStrs []string
	docTerms [][]termCount
	docIdx   map[uint32]int // reused per Add: term → position in the entry's counts
	fieldLen [][numFields]uint16
	seen     map[string]bool
	scratch  []string
}

type termCount struct {
	term   uint32
	counts [numFields]uint16
}

// NewBuilder returns an empty builder.
func NewBuilder() *Builder {
	return &Builder{seen: map[string]bool{}, terms: map[string]uint32{}, docIdx: map[uint32]int{}}
}

// ErrDuplicate is returned by Add for a served name already added.
var ErrDuplicate = errors.New("discover: duplicate tool name")

// Add adds one operation served under the connector. The gateway adds only
// the operations it serves; which ones is its decision, not the index's.
func (b *Builder) Add(connector string, op *air.Operation) error {
	name := ServedName(connector, op)
	if b.seen[name] {
		return fmt.Errorf("%w %s", ErrDuplicate, name)
	}
	b.seen[name] = true
	b.entries = append(b.entries, Entry{
		Name: name, Connector: connector, OperationID: op.ID, Title: op.DisplayName,
		Description: op.Description, Effect: air.EffectClassOf(op), ConfirmRequired: op.Confirmation.Required,
	})

	clear(b.docIdx)
	var tcs []termCount
	var lens [numFields]uint16
	addText := func(f field, s string) {
		if lens[f] >= maxFieldTerms {
			return
		}
		b.scratch = tokenize(b.scratch[:0], s[:min(len(s), maxTextBytes)])
		for _, t := range b.scratch {
			if lens[f] >= maxFieldTerms {
				return
			}
			lens[f]++
			id, ok := b.terms[t]
			if !ok {
				id = uint32(len(b.termStrs))
				b.terms[t] = id
				b.termStrs = append(b.termStrs, t)
			}
			j, ok := b.docIdx[id]
			if !ok {
				j = len(tcs)
				b.docIdx[id] = j
				tcs = append(tcs, termCount{term: id})
			}
			tcs[j].counts[f]++
		}
	}
	addText(fieldName, connector)
	addText(fieldName, op.MCP.ToolName)
	addText(fieldName, op.CanonicalName)
	addText(fieldTitle, op.DisplayName)
	addText(fieldVerb, op.Effect.Action)
	addText(fieldVerb, op.Effect.Resource)
	addText(fieldVerb, op.CLI.Command)
	for _, t := range op.Tags {
		addText(fieldTag, t)
	}
	addText(fieldPath, op.SourceRef.Path)
	for _, p := range op.Input.Params {
		addText(fieldParam, p.Key)
		addText(fieldParamDesc, p.Description)
	}
	if op.Input.Body != nil {
		for _, f := range op.Input.Body.Fields {
			addText(fieldParam, f.Key)
		}
	}
	addText(fieldDesc, op.Description)

	b.docTerms = append(b.docTerms, slices.Clip(tcs))
	b.fieldLen = append(b.fieldLen, lens)
	return nil
}

// Build computes the index. Entries are ordered by served name, so entry
// positions (and therefore tie-breaking) do not depend on the order of Add.
// The index takes over the builder's tables: add nothing after Build.
func (b *Builder) Build() *Index {
	n := len(b.entries)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return b.entries[order[i]].Name < b.entries[order[j]].Name })

	var avg [numFields]float64
	for _, l := range b.fieldLen {
		for f := range l {
			avg[f] += float64(l[f])
		}
	}
	for f := range avg {
		if n > 0 {
			avg[f] /= float64(n)
		}
		if avg[f] == 0 {
			avg[f] = 1
		}
	}

	ix := &Index{entries: make([]Entry, n), terms: b.terms}
	type raw struct {
		doc uint32
		tf  float32
	}
	rawPost := make([][]raw, len(b.termStrs))
	for pos, i := range order {
		ix.entries[pos] = b.entries[i]
		lens := b.fieldLen[i]
		var norm [numFields]float64
		for f := range norm {
			norm[f] = 1 - fieldB[f] + fieldB[f]*float64(lens[f])/avg[f]
		}
		for _, tc := range b.docTerms[i] {
			tf := 0.0
			for f, c := range tc.counts {
				if c > 0 {
					tf += fieldWeight[f] * float64(c) / norm[f]
				}
			}
			rawPost[tc.term] = append(rawPost[tc.term], raw{doc: uint32(pos), tf: float32(tf)})
		}
	}
	ix.postings = make([][]posting, len(rawPost))
	ix.idf = make([]float32, len(rawPost))
	for id, rp := range rawPost {
		df := float64(len(rp))
		idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
		ix.idf[id] = float32(idf)
		ps := make([]posting, len(rp))
		for j, r := range rp {
			tf := float64(r.tf)
			ps[j] = posting{doc: r.doc, impact: float32(idf * tf * (k1 + 1) / (tf + k1))}
		}
		ix.postings[id] = ps
	}
	ix.titleStart = make([]uint32, 0, n+1)
	var words []string
	for _, e := range ix.entries {
		ix.titleStart = append(ix.titleStart, uint32(len(ix.titleTerms)))
		words = tokenize(words[:0], e.Title)
		start := len(ix.titleTerms)
	title:
		for _, w := range words {
			id := ix.terms[w] // every title word was indexed above
			for _, have := range ix.titleTerms[start:] {
				if have == id {
					continue title
				}
			}
			ix.titleTerms = append(ix.titleTerms, id)
		}
	}
	ix.titleStart = append(ix.titleStart, uint32(len(ix.titleTerms)))
	ix.sorted = slices.Clone(b.termStrs)
	sort.Strings(ix.sorted)
	return ix
}

// Len is the number of entries.
func (ix *Index) Len() int { return len(ix.entries) }

// Entries returns the entries in name order (not to be modified).
func (ix *Index) Entries() []Entry { return ix.entries }
