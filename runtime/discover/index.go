// Package discover is the search core of progressive discovery: an index,
// built once from the AIR operations a gateway serves, that ranks tools for a
// plain-language query ("merge a pull request") so that an agent can find
// the one tool it needs among thousands without listing them all.
//
// Ranking is BM25F over the text AIR knows of each operation (its served
// name, title, effect verb and resource, tags, HTTP path, parameter names
// and description), with per-field weights, a tokeniser that splits
// snake_case, camelCase and path segments, the Snowball stemmer, canonical
// spellings for common abbreviations (repo, org, pr) and query-side verb
// synonyms (show → get/list, add → create, remove → delete) and WordNet
// synonyms, and producer links (which tool yields an id another needs). See
// docs/discovery.md for the weights and the measured recall.
//
// The index holds, per operation, only the strings a result needs (shared
// with the AIR document, not copied) and compact postings; it never holds
// schemas. It is immutable once built and safe for concurrent searches.
package discover

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

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
	Effect air.EffectClass
	// ConfirmRequired says whether a call must be confirmed.
	ConfirmRequired bool
	// doc is the entry's position in its index (Index.names).
	doc uint32
	// Needs are the operation's producer links (air.Operation.Needs)
	// resolved to the entries of the index, in AIR's order; producers the
	// index does not hold (not served) are left out.
	Needs []Need
}

// Need is one identifier input of an entry and the entries that produce it.
type Need struct {
	Argument string
	From     []*Entry
	// optional: the argument is an optional input (a filter such as
	// head_sha), which a call can do without; its producers are listed
	// but not returned with the entry.
	optional bool
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
	fieldResponse               // response property names and descriptions
	fieldIntent                 // the manifest's example requests (skill.intentExamples)
	numFields
)

// fieldWeight and fieldB are the BM25F weight and length normalisation of
// each field. The title and the verb/resource fields are the most precise
// statements of what an operation does; descriptions are long and carry
// boiler-plate (token scopes, links), so they count least and are
// normalised hardest. Intent examples are requests a connector author
// wrote in a caller's words for this operation ("cordon the node"): they
// count as much as the name, normalised like a description since an
// operation may carry several.
var (
	fieldWeight = [numFields]float64{fieldName: 2.0, fieldTitle: 3.0, fieldVerb: 2.0, fieldTag: 1.0, fieldPath: 1.5, fieldParam: 0.5, fieldDesc: 0.6, fieldParamDesc: 0.3, fieldResponse: 0.15, fieldIntent: 2.0}
	fieldB      = [numFields]float64{fieldName: 0.3, fieldTitle: 0.4, fieldVerb: 0.2, fieldTag: 0.2, fieldPath: 0.3, fieldParam: 0.5, fieldDesc: 0.75, fieldParamDesc: 0.75, fieldResponse: 0.75, fieldIntent: 0.75}
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
	// shapes are the entries' actions, resources and deprecation
	// (entryShape), by entry; actionTerms the terms that are some entry's
	// action.
	shapes      []entryShape
	actionTerms map[uint32]bool
	// names are the entries' names, by position: a producer's ProducerFor
	// is a one-name window of it (nameOf), so adding one allocates nothing.
	names []string
	// soleSearch maps a connector to its one search operation, for
	// connectors that have exactly one (a catalogue's "Search for Item");
	// addSearch falls back to it when no search matched the query's words.
	soleSearch map[string]uint32
	// personSearch maps a connector to its one search of people (users,
	// persons: the "who" group), for a query whose name is someone who
	// does or owns things (agentName).
	personSearch map[string]uint32
	// unstated holds, per entry (by position), the terms of its required
	// path inputs that are not common in its connector, what a request
	// for it must speak of (unstatedInputs): entry d's are
	// unstated[unstatedStart[d]:unstatedStart[d+1]], one array for all.
	unstated      []uint32
	unstatedStart []uint32
	// keyTerms are the terms of each connector's keyed resource
	// (Builder.keyTerms), that a query holding a key such as PROJ-123
	// speaks of.
	keyTerms []string
	// finders are the entries where a name becomes an id, most used first
	// (findersByUse), for an answer whose words matched nothing.
	finders []uint32
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
	shapes   []entryShape
	// needs are the entries' producer links as AIR records them, and
	// optional whether each one's argument is an optional input, by
	// entry, until Build resolves them.
	needs    [][]air.Need
	optional [][]bool
	seen     map[string]bool
	scratch  []string
	// keyed counts, per connector, the resources whose keys its
	// operations take in their paths (keyResource).
	keyed map[string]map[string]int
	// pathInputs are, per entry, the terms of its required path inputs
	// (inputTerm), until Build keeps the uncommon ones (Index.unstated).
	pathInputs [][]uint32
	// schemas are each connector's named schemas (Schemas), through which
	// response schemas are read.
	schemas map[string]map[string]*air.Schema
}

type termCount struct {
	term   uint32
	counts [numFields]uint16
}

// NewBuilder returns an empty builder.
func NewBuilder() *Builder {
	return &Builder{seen: map[string]bool{}, terms: map[string]uint32{}, docIdx: map[uint32]int{}}
}

// Schemas gives the builder a connector's named schemas (its AIR
// document's Schemas), so that Add can index the properties of response
// schemas that refer to them. Call it before adding that connector's
// operations; without it only inline response properties are indexed.
func (b *Builder) Schemas(connector string, schemas map[string]*air.Schema) {
	if b.schemas == nil {
		b.schemas = map[string]map[string]*air.Schema{}
	}
	b.schemas[connector] = schemas
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
	b.needs = append(b.needs, op.Needs)
	b.optional = append(b.optional, optionalInputs(op))
	for _, p := range op.Input.Params {
		if res := keyResource(p); res != "" {
			if b.keyed == nil {
				b.keyed = map[string]map[string]int{}
			}
			if b.keyed[connector] == nil {
				b.keyed[connector] = map[string]int{}
			}
			b.keyed[connector][res]++
		}
	}

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
	addText(fieldPath, withoutPlaceholders(op.SourceRef.Path))
	for _, p := range op.Input.Params {
		addText(fieldParam, p.Key)
		addText(fieldParamDesc, p.Description)
	}
	if op.Input.Body != nil {
		for _, f := range op.Input.Body.Fields {
			addText(fieldParam, f.Key)
		}
		// What a body field does is often what the operation is asked
		// for: "archived: Whether to archive this repository" makes an
		// update the way to archive one.
		schemaText(op.Input.Body.Schema, b.schemas[connector], 0, true, func(s string) { addText(fieldParamDesc, s) })
	}
	addText(fieldDesc, op.Description)
	for _, ex := range op.Skill.IntentExamples {
		addText(fieldIntent, ex)
	}
	schemaText(op.Output.Schema, b.schemas[connector], maxResponseDepth, false, func(s string) { addText(fieldResponse, s) })

	b.docTerms = append(b.docTerms, slices.Clip(tcs))
	b.fieldLen = append(b.fieldLen, lens)
	// After the text: an input's word is then a term of the index (its
	// path holds it) whatever the order operations are added in.
	var inputs []uint32
	for _, p := range op.Input.Params {
		if p.In == air.InPath && p.Required && !idArgument(p.Name) {
			if t, ok := b.inputTerm(p.Name); ok && !slices.Contains(inputs, t) {
				inputs = append(inputs, t)
			}
		}
	}
	b.pathInputs = append(b.pathInputs, inputs)
	b.shapes = append(b.shapes, b.shapeOf(op))
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

	ix := &Index{entries: make([]Entry, n), terms: b.terms, shapes: make([]entryShape, n), actionTerms: map[uint32]bool{}, names: make([]string, n)}
	type raw struct {
		doc uint32
		tf  float32
	}
	rawPost := make([][]raw, len(b.termStrs))
	searches := map[string]uint32{} // connector → its search, noDoc when several
	personSearches := map[string]uint32{}
	for pos, i := range order {
		ix.entries[pos] = b.entries[i]
		ix.entries[pos].doc = uint32(pos)
		ix.names[pos] = ix.entries[pos].Name
		ix.shapes[pos] = b.shapes[i]
		if a := b.shapes[i].action; a != noTerm {
			ix.actionTerms[a] = true
		}
		if b.shapes[i].nameSearch {
			c := ix.entries[pos].Connector
			if _, seen := searches[c]; seen {
				searches[c] = noDoc
			} else {
				searches[c] = uint32(pos)
			}
			if b.searchesPeople(b.shapes[i]) {
				if _, seen := personSearches[c]; seen {
					personSearches[c] = noDoc
				} else {
					personSearches[c] = uint32(pos)
				}
			}
		}
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
	ix.soleSearch = onlyOnes(searches)
	ix.personSearch = onlyOnes(personSearches)
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
	ix.keyTerms = b.keyTerms()
	ix.unstated, ix.unstatedStart = b.unstatedInputs(order)
	ix.resolveNeeds(b, order)
	ix.finders = ix.findersByUse()
	return ix
}

// findersByUse returns the finders (isFinder: reads that need no id, where
// a name becomes one) ordered by how many identifier inputs of other
// operations they produce, most first, then by name: the searches most of
// an API depends on (a movie service's movie search) lead an answer whose
// words matched nothing.
func (ix *Index) findersByUse() []uint32 {
	uses := make(map[*Entry]int)
	for i := range ix.entries {
		for _, n := range ix.entries[i].Needs {
			for _, p := range n.From {
				uses[p]++
			}
		}
	}
	var out []uint32
	for i := range ix.entries {
		if isFinder(&ix.entries[i]) {
			out = append(out, uint32(i))
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return uses[&ix.entries[out[a]]] > uses[&ix.entries[out[b]]] })
	return out
}

// resolveNeeds turns each entry's AIR producer links into entries of the
// index (same connector; AIR ids are per document).
func (ix *Index) resolveNeeds(b *Builder, order []int) {
	type key struct{ connector, op string }
	pos := make(map[key]*Entry, len(ix.entries))
	for i := range ix.entries {
		e := &ix.entries[i]
		pos[key{e.Connector, e.OperationID}] = e
	}
	for i := range ix.entries {
		e := &ix.entries[i]
		for j, n := range b.needs[order[i]] {
			var from []*Entry
			for _, p := range n.From {
				if pe := pos[key{e.Connector, p.Operation}]; pe != nil && pe != e {
					from = append(from, pe)
				}
			}
			if len(from) > 0 {
				e.Needs = append(e.Needs, Need{Argument: n.Argument, From: from, optional: b.optional[order[i]][j]})
			}
		}
	}
}

// optionalInputs says, for each of the operation's producer links, whether
// its argument is an optional parameter or top-level body field; an
// argument found in neither counts as required.
func optionalInputs(op *air.Operation) []bool {
	if len(op.Needs) == 0 {
		return nil
	}
	out := make([]bool, len(op.Needs))
	for i, n := range op.Needs {
		for _, p := range op.Input.Params {
			if p.Key == n.Argument {
				out[i] = !p.Required
			}
		}
		if op.Input.Body != nil {
			for _, f := range op.Input.Body.Fields {
				if f.Key == n.Argument {
					out[i] = !f.Required
				}
			}
		}
	}
	return out
}

// withoutPlaceholders drops the {parameter} segments of a path: they name
// inputs, not what the operation is about ("number of episodes" must not
// match /tv/{tv_id}/season/{season_number}).
func withoutPlaceholders(path string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		b.WriteString(path[:i])
		j := strings.IndexByte(path[i:], '}')
		if j < 0 {
			return b.String()
		}
		path = path[i+j+1:]
	}
}

// Bounds of the response text read per operation: object levels and
// schema nodes.
const (
	maxResponseDepth = 2
	maxResponseNodes = 200
)

// schemaText calls add with the property names (unless descOnly) and
// descriptions of a schema, maxDepth object levels below the top one,
// following references through schemas; bounded, and in byte order of
// property names.
func schemaText(s *air.Schema, schemas map[string]*air.Schema, maxDepth int, descOnly bool, add func(string)) {
	nodes := 0
	seen := map[string]bool{}
	var walk func(s *air.Schema, depth int)
	walk = func(s *air.Schema, depth int) {
		if s == nil || depth > maxDepth || nodes >= maxResponseNodes {
			return
		}
		nodes++
		if name, ok := air.RefName(s.Ref); ok {
			if seen[name] {
				return
			}
			seen[name] = true
			walk(schemas[name], depth)
			return
		}
		for _, g := range [][]*air.Schema{s.AllOf, s.OneOf, s.AnyOf} {
			for _, sub := range g {
				walk(sub, depth)
			}
		}
		walk(s.Items, depth)
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			if !descOnly {
				add(k)
			}
			p := s.Properties[k]
			if p != nil && p.Description != "" {
				add(p.Description)
			}
			walk(p, depth+1)
		}
	}
	walk(s, 0)
}

// nameOf is the entry's name as a slice of one that the caller may hold
// but not grow in place (its capacity is one).
func (ix *Index) nameOf(e *Entry) []string { return ix.names[e.doc : e.doc+1 : e.doc+1] }

// Len is the number of entries.
func (ix *Index) Len() int { return len(ix.entries) }

// Entries returns the entries in name order (not to be modified).
func (ix *Index) Entries() []Entry { return ix.entries }

// Entry returns the entry served under name, nil when there is none.
func (ix *Index) Entry(name string) *Entry {
	i, ok := slices.BinarySearchFunc(ix.entries, name, func(e Entry, n string) int { return strings.Compare(e.Name, n) })
	if !ok {
		return nil
	}
	return &ix.entries[i]
}

// onlyOnes keeps the connectors that have exactly one (noDoc marks several).
func onlyOnes(m map[string]uint32) map[string]uint32 {
	out := map[string]uint32{}
	for c, d := range m {
		if d != noDoc {
			out[c] = d
		}
	}
	return out
}

// searchesPeople: the search's resource is people (person, user, people;
// not account, which a person has).
func (b *Builder) searchesPeople(sh entryShape) bool {
	for _, r := range sh.res {
		if r != noTerm && r < uint32(len(b.termStrs)) {
			if t := b.termStrs[r]; synonymConcept[t] == peopleConcept && t != stem("account") {
				return true
			}
		}
	}
	return false
}

// Keys. Trackers name their main resource by a key of letters, a dash
// and a number (Jira's PROJ-123: "What's the status of PROJ-123?"), and
// a request that holds one speaks of that resource though it never says
// its word. The keyed resource of a connector is the one whose key most
// of its operations take as a required path parameter (issueIdOrKey,
// issue_key; at least minKeyedOps of them): a query with a key gains it
// as a concept (Index.keyTerms, queryGroups).
const minKeyedOps = 3

// keyResource is the resource whose key a required path parameter takes
// ("issue" for issueIdOrKey or issue_key), "" when it takes none.
func keyResource(p air.Param) string {
	if p.In != air.InPath || !p.Required {
		return ""
	}
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(p.Name))
	for _, suf := range []string{"idorkey", "key"} {
		if res, ok := strings.CutSuffix(n, suf); ok && len(res) >= 3 && strings.Trim(res, "abcdefghijklmnopqrstuvwxyz") == "" {
			return res
		}
	}
	return ""
}

// keyTerms returns, in connector order, the stemmed term of each
// connector's keyed resource (its most taken; ties to the first in byte
// order), each once.
func (b *Builder) keyTerms() []string {
	var out []string
	for _, c := range slices.Sorted(maps.Keys(b.keyed)) {
		best, bestN := "", 0
		for _, res := range slices.Sorted(maps.Keys(b.keyed[c])) {
			if n := b.keyed[c][res]; n > bestN {
				best, bestN = res, n
			}
		}
		if bestN < minKeyedOps {
			continue
		}
		for _, t := range tokenize(nil, best) {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Unstated inputs. "Create or update secrets" matches a repository's
// secret and an environment's alike, and the environment's shorter title
// wins; but the environment's operation takes an environment_name the
// request never speaks of, while owner and repo, which nearly every
// GitHub operation takes, say nothing. An identifier (an id, a number, a
// key: idArgument) is never stated, it comes from a producer; a name is.
// An entry ranks at unstatedFactor for each required path input that
// takes a name, is uncommon in its connector (taken by fewer than
// commonInputShare of its operations) and whose word the query does not
// hold (Index.rank).
const (
	commonInputShare = 0.25
	unstatedFactor   = 0.85
)

// inputTerm is the term of an input's own word: its name without the
// suffix that says how it is given (environment_name → environment,
// issue_number → issue, org → org).
func (b *Builder) inputTerm(name string) (uint32, bool) {
	ws := tokenize(nil, name)
	for len(ws) > 1 && inputSuffixes[ws[len(ws)-1]] {
		ws = ws[:len(ws)-1]
	}
	if len(ws) == 0 || inputSuffixes[ws[0]] {
		return 0, false // a bare {name} or {key} says no word
	}
	t, ok := b.terms[ws[len(ws)-1]]
	return t, ok
}

var inputSuffixes = func() map[string]bool {
	m := map[string]bool{}
	// An identifier's words, a name's (issue_name, team_slug), and the
	// "or" of issueIdOrKey.
	for _, w := range append(slices.Clone(idWords), "name", "slug", "or") {
		for _, t := range tokenize(nil, w) {
			m[t] = true
		}
	}
	return m
}()

// unstatedInputs keeps, per entry position, the path input terms fewer
// than commonInputShare of its connector's entries take (Index.unstated).
func (b *Builder) unstatedInputs(order []int) (terms, start []uint32) {
	perConn := map[string]int{}
	count := map[string]map[uint32]int{}
	for i, e := range b.entries {
		perConn[e.Connector]++
		if count[e.Connector] == nil {
			count[e.Connector] = map[uint32]int{}
		}
		for _, t := range b.pathInputs[i] {
			count[e.Connector][t]++
		}
	}
	start = make([]uint32, 0, len(order)+1)
	for _, i := range order {
		start = append(start, uint32(len(terms)))
		c := b.entries[i].Connector
		for _, t := range b.pathInputs[i] {
			if float64(count[c][t]) < commonInputShare*float64(perConn[c]) {
				terms = append(terms, t)
			}
		}
	}
	return slices.Clip(terms), append(start, uint32(len(terms)))
}
