package discover

import (
	_ "embed"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Search limits.
const (
	DefaultLimit = 10
	MaxLimit     = 50
	// MaxQueryLen bounds the query text that is read (bytes); the rest is
	// ignored, so an oversized query costs no more than this.
	MaxQueryLen = 1024
	// maxQueryTerms bounds the distinct terms of one query.
	maxQueryTerms = 32
)

// Options narrows a search.
type Options struct {
	// Connector, when set, keeps only that connector's tools.
	Connector string
	// Limit is the number of results: DefaultLimit when 0 or less, at most
	// MaxLimit.
	Limit int
	// Allow, when set, keeps only entries it returns true for (the caller's
	// grant). It is called only for entries that match the query.
	Allow func(*Entry) bool
}

// Result is one ranked tool.
type Result struct {
	Entry *Entry
	Score float64
	// Needs are the entry's producer links the caller may see (Options'
	// Allow and Connector applied), set by Search.
	Needs []Need
	// ProducerFor names the results this one was added for: a producer of
	// an identifier they need, returned with them because the query names
	// an entity rather than an id.
	ProducerFor []string
	// Weak says the result matches less than half of the query's concepts
	// (or none: a fallback when nothing matches).
	Weak bool
}

// alt is one term a query word may match, with the weight of that match.
type alt struct {
	term   uint32
	weight float32
}

// Weights of the ways a query word can meet an indexed term.
const (
	weightExact   = 1.0
	weightSynonym = 0.7  // a verb synonym (show → get, list)
	weightPrefix  = 0.45 // the word is a prefix of the term ("collab" → collaborator)
	weightLexical = 0.3  // a WordNet synonym (film → movie)
	// weightLexicalAbsent is a WordNet synonym's weight when no entry holds
	// the query word itself: the synonym is then the only way the concept
	// can be met, and nothing it could drown out is there ("film" in an
	// API that only ever says movie).
	weightLexicalAbsent = 0.8
	// weightCatalogue scales a catalogue word (latest, popular, top): it
	// says which list, not what the query is about, so it must not
	// outrank the thing asked for ("the latest film by X" is about films).
	weightCatalogue = 0.35
	minPrefixLen    = 4
	maxPrefixAlts   = 8
)

// Search ranks the entries for the query and returns at most opts.Limit
// results, best first. Each query concept (a word, or a synonym group)
// counts once: an entry scores the best of that concept's alternatives (the
// word, its synonyms, terms it is a prefix of), summed over concepts, scaled
// by the share of concepts it matches, and the best rerankDepth are then
// boosted by how much of their title the query covers. Ties are broken by
// served name, so equal inputs give equal outputs. A query with no
// searchable word (empty, or only stop words) lists the allowed entries in
// name order; one whose words match nothing returns nothing.
func (ix *Index) Search(query string, opts Options) []Result {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if limit > MaxLimit {
		limit = MaxLimit
	}
	keep := func(e *Entry) bool {
		return (opts.Connector == "" || e.Connector == opts.Connector) && (opts.Allow == nil || opts.Allow(e))
	}
	// The scratch goes back to the pool only once it is clean again: if
	// Allow panics, it is dropped rather than handed, dirty, to a later search.
	s := scratchPool.Get().(*scratch)
	lower := strings.ToLower(clip(query)) // no copy when already lower case
	groups, words := ix.queryGroups(s, lower)
	if len(groups) == 0 {
		scratchPool.Put(s)
		// No searchable word: the allowed entries in name order. Words
		// that match nothing: the same, but searches and lists first
		// (where a name becomes an id), marked weak.
		out := make([]Result, 0, limit)
		if words > 0 {
			// The finders most used first; for a query that names
			// something, the searches among them before the lists.
			named := ix.namesEntity(query, lower)
			for pass := 0; pass < 2; pass++ {
				for _, d := range ix.finders {
					e := &ix.entries[d]
					if len(out) < limit && keep(e) && (!named || (pass == 0) == ix.shapes[d].nameSearch) {
						out = append(out, Result{Entry: e, Weak: true})
					}
				}
				if !named {
					break
				}
			}
		}
		for i := range ix.entries {
			if len(out) == limit {
				break
			}
			if e := &ix.entries[i]; (words == 0 || !isFinder(e)) && keep(e) {
				out = append(out, Result{Entry: e, Weak: words > 0})
			}
		}
		return ix.withNeeds(out, keep)
	}

	cands := ix.rank(s, lower, groups, limit, opts)
	// Room for the producers addProducers may place before the list is
	// cut back to limit, so that placing them needs no second slice.
	out := make([]Result, 0, limit+maxProducers)
	for _, c := range cands {
		if len(out) == limit {
			break
		}
		out = append(out, Result{Entry: &ix.entries[c.doc], Score: float64(c.score), Weak: 2*int(c.concepts) < len(groups)})
	}
	named := ix.namesEntity(query, lower)
	if !mentionsID(lower) {
		scan := 1
		if named {
			scan = producerScan
		}
		out = ix.addProducers(out, limit, scan, named, keep)
	}
	if named {
		// A number in the query may be an id the caller has (season 2),
		// but a name still has to be looked up.
		switch {
		case ix.agentName(query, lower):
			out = ix.addSearch(out, limit, s.bestSearch, keep)
			out = ix.addPersonSearch(out, limit, keep)
		case asksWho(clip(query)):
			out = ix.addThingSearches(out, limit, keep)
		default:
			out = ix.addSearch(out, limit, s.bestSearch, keep)
		}
	}
	out = ix.addClauseBests(s, lower, out, limit, opts)
	scratchPool.Put(s)
	return ix.withNeeds(out, keep)
}

// rank scores the entries the caller may see for a query's concept groups
// (queryGroups; lower is the query in lower case, for its intent) and
// returns the best limit, best first, in s.cands.
func (ix *Index) rank(s *scratch, lower string, groups [][]alt, limit int, opts Options) []scored {
	s.reset(len(ix.entries))
	for gi, g := range groups {
		best := float32(0) // the concept's best score in any entry
		for _, a := range g {
			for _, p := range ix.postings[a.term] {
				v := a.weight * p.impact
				if v > s.group[p.doc] {
					if s.group[p.doc] == 0 {
						s.groupTouched = append(s.groupTouched, p.doc)
					}
					s.group[p.doc] = v
					best = max(best, v)
				}
			}
		}
		// A concept counts as matched (mask, the coverage share) where it
		// scores at least matchedShare of its best score in any entry: a
		// word met only in passing (git in a ruleset's long description)
		// adds its score but does not count as what the entry is about.
		for _, d := range s.groupTouched {
			if s.total[d] == 0 {
				s.touched = append(s.touched, d)
			}
			if s.group[d] >= matchedShare*best {
				s.mask[d] |= 1 << uint(gi)
			}
			s.total[d] += s.group[d]
			s.group[d] = 0
		}
		s.groupTouched = s.groupTouched[:0]
	}

	// First pass: BM25 scaled by the share of query concepts matched, for
	// every match the caller may see.
	cands := s.cands[:0]
	for _, d := range s.touched {
		// Search's keep, spelt out: a direct test in this loop over every
		// match, not a call through a function value.
		if e := &ix.entries[d]; (opts.Connector == "" || e.Connector == opts.Connector) && (opts.Allow == nil || opts.Allow(e)) {
			n := bits.OnesCount32(s.mask[d])
			cov := float32(n) / float32(len(groups))
			cands = append(cands, scored{doc: d, score: s.total[d] * (coverageFloor + (1-coverageFloor)*cov), concepts: uint8(n)})
		}
		s.total[d] = 0
		s.mask[d] = 0
	}
	s.touched = s.touched[:0]
	// Second pass, on the best rerankDepth: reward titles the query covers.
	cands = topScored(cands, max(rerankDepth, limit))
	in := ix.requestIntent(lower)
	s.markTerms(len(ix.postings), groups)
	for i := range cands {
		d := cands[i].doc
		cands[i].score *= (1 + titleBoost*ix.titleCoverage(d, s.termW)) * in.shapeFactor(&ix.shapes[d])
		for _, t := range ix.unstated[ix.unstatedStart[d]:ix.unstatedStart[d+1]] {
			if s.termW[t] == 0 {
				cands[i].score *= unstatedFactor
			}
		}
	}
	s.unmarkTerms(groups)
	s.bestSearch = noDoc
	var bestScore float32
	for _, c := range cands {
		if ix.shapes[c.doc].nameSearch && (s.bestSearch == noDoc || c.score > bestScore || (c.score == bestScore && c.doc < s.bestSearch)) {
			s.bestSearch, bestScore = c.doc, c.score
		}
	}
	cands = topScored(cands, limit)
	sortScored(cands)
	s.cands = cands
	return cands
}

// Clauses. A request of several clauses ("find the film Heat, then list
// its cast"; "star the repository and watch it") asks for more than one
// operation; ranked as one bag of words the clause with the rarer words
// can fill every place. addClauseBests makes each clause that starts
// with a verb (requestIntent) and has at least minClauseConcepts concepts
// place its own best result in the answer, the first clause's second and
// the others' at the end (clauseKeepTop: the best places stay the whole
// query's), when limit leaves room (minClauseLimit).
const (
	maxClauses        = 4  // clause bests placed
	maxClauseScan     = 16 // clauses read ("title, year, genre" are three)
	minClauseConcepts = 2
	minClauseLimit    = 8
	clauseKeepTop     = 5
)

// clauseSeps end a clause; longer separators first, so ", then " is one.
var clauseSeps = []string{", and then ", ", then ", " and then ", " then ", ", and ", " and ", "; ", ", ", ". "}

// nextClause returns the text up to the first clause separator of q and
// what follows the separator (at the same place, the longest separator).
func nextClause(q string) (clause, rest string) {
	cut, width := -1, 0
	for _, sep := range clauseSeps {
		if i := strings.Index(q, sep); i >= 0 && (cut < 0 || i < cut || (i == cut && len(sep) > width)) {
			cut, width = i, len(sep)
		}
	}
	if cut < 0 {
		return q, ""
	}
	return q[:cut], q[cut+width:]
}

// addClauseBests places, for each clause of the query that has at least
// minClauseConcepts concepts, its best result when the answer lacks it:
// the first clause's second (moved up if it is further down: the first
// clause is usually the first step, "find the album Thriller and save
// it"), the others' in the last places of the answer (replacing the
// weakest). A query of one clause is left as it is. It uses s, whose
// query groups it replaces.
func (ix *Index) addClauseBests(s *scratch, lower string, out []Result, limit int, opts Options) []Result {
	if limit < minClauseLimit {
		return out
	}
	first, rest := nextClause(lower)
	if rest == "" {
		return out
	}
	var buf [maxClauses]Result
	extra := buf[:0]
	for c, n := first, 0; n < maxClauseScan && len(extra) < maxClauses && (c != "" || rest != ""); c, rest = nextClause(rest) {
		n++
		if in := ix.requestIntent(c); in.class == actNone && in.verb == noTerm {
			continue // not a request ("even if there are pods", a list of names)
		}
		groups, _ := ix.queryGroups(s, c)
		if len(groups) < minClauseConcepts {
			continue
		}
		cs := ix.rank(s, c, groups, 1, opts)
		if len(cs) == 0 {
			continue
		}
		e := &ix.entries[cs[0].doc]
		at := slices.IndexFunc(out, func(r Result) bool { return r.Entry == e })
		if n == 1 && at != 0 {
			// The first clause is usually the first step: its best goes
			// second, after the whole query's best.
			if at > 0 {
				out = slices.Delete(out, at, at+1)
			}
			out = slices.Insert(out, 1, Result{Entry: e, Score: float64(cs[0].score), Weak: 2*int(cs[0].concepts) < len(groups)})
			out = out[:min(len(out), limit)]
			continue
		}
		if at >= 0 || slices.ContainsFunc(extra, func(r Result) bool { return r.Entry == e }) {
			continue
		}
		extra = append(extra, Result{Entry: e, Score: float64(cs[0].score), Weak: 2*int(cs[0].concepts) < len(groups)})
	}
	// Free places first, then the last places from the end, never the
	// first clauseKeepTop nor a producer placed with its consumer.
	pos := len(out) - 1
	for _, r := range extra {
		if len(out) < limit {
			out = append(out, r)
			continue
		}
		for pos >= clauseKeepTop && out[pos].ProducerFor != nil {
			pos--
		}
		if pos < clauseKeepTop {
			break
		}
		out[pos] = r
		pos--
	}
	return out
}

// isFinder: a search or list operation, where an agent that knows a name
// finds an id.
func isFinder(e *Entry) bool { return e.Effect == air.ClassRead && len(e.Needs) == 0 }

// producerDepth is how many of the best results get their producers
// returned with them (1, 2 and 3 were measured on the dev half).
const producerDepth = 1

// producerScan: when the query names something (Index.namesEntity), the
// consumer is the first of this many best results that needs an
// identifier no result before it produces, not only the best one: "play
// the top tracks of Adele" may rank what plays first, and the search for
// the artist must still come with the artist's top tracks.
const producerScan = 3

// namesEntity reports whether the query names a particular thing: a word
// after the first that starts with a capital followed by a small letter
// (Adele, Casablanca; not an acronym such as PR or API) and is not one of
// the API's own common words, or a quoted phrase. Such a query needs the
// thing's id from a search or list. A capitalised word that a tenth of the
// entries or more hold is the API speaking of itself ("a new repository on
// GitHub", "Kubernetes"), not a thing to look up.
//
// lower is the query in lower case (Search has it): a word's lower-case
// form is read from it at the same offsets when the two have the same
// length, so that the test allocates nothing.
func (ix *Index) namesEntity(q, lower string) bool {
	q = clip(q)
	if strings.ContainsAny(q, "\"“”") {
		return true
	}
	first := true
	for w, rest := nextWord(q); w != ""; w, rest = nextWord(rest) {
		if !first && ix.isName(q, lower, w, rest) {
			return true
		}
		first = false
	}
	return false
}

// isName reports whether the word w of q (rest follows it) is a name: it
// starts with a capital followed by a small letter and is not one of the
// API's own common words (namesEntity). The word's lower case is read
// from lower at the same offsets when q and lower have the same length.
func (ix *Index) isName(q, lower, w, rest string) bool {
	r, n := utf8.DecodeRuneInString(w)
	if r2, _ := utf8.DecodeRuneInString(w[n:]); !unicode.IsUpper(r) || !unicode.IsLower(r2) {
		return false
	}
	var lw string
	if len(lower) == len(q) {
		at := len(q) - len(rest) - len(w)
		lw = lower[at : at+len(w)]
	} else {
		lw = strings.ToLower(w)
	}
	var buf [4]string
	return !ix.common(tokenize(buf[:0], lw))
}

// commonShare is the share of entries a term must be held by to be one of
// the API's own common words.
const commonShare = 0.1

// common: every one of the terms is held by at least commonShare of the
// entries (a word that tokenises to nothing is common too).
func (ix *Index) common(terms []string) bool {
	for _, t := range terms {
		id, ok := ix.terms[t]
		if !ok || float64(len(ix.postings[id])) < commonShare*float64(len(ix.entries)) {
			return false
		}
	}
	return true
}

// maxProducers bounds the producers placed for those results (one per
// identifier input; an operation rarely needs more than three).
const maxProducers = 4

// addProducers places, right after the first producerDepth results, for
// each identifier they need (an id, number or key, not a name such as an
// owner; a required input, not an optional filter) that no result placed
// before produces, the first producer of it
// the caller may see; at most limit results are kept. On the gh manual
// dev half, returning the producers of the best result only scored best
// (docs/discovery.md). It works in out's own array (Search leaves room
// for maxProducers more) and allocates nothing.
func (ix *Index) addProducers(out []Result, limit, scan int, named bool, keep func(*Entry) bool) []Result {
	if len(out) == 0 {
		return out
	}
	depth := 0
	// Only the results placed so far count as present: a producer ranked
	// further down is moved up next to the result that needs it (and its
	// own place below is dropped).
	placed := func(upto int, e *Entry) bool {
		for _, r := range out[:upto] {
			if r.Entry == e {
				return true
			}
		}
		return false
	}
	var buf [maxProducers]Result
	added := buf[:0]
	isAdded := func(e *Entry) bool {
		for _, a := range added {
			if a.Entry == e {
				return true
			}
		}
		return false
	}
	for i, r := range out[:min(scan, len(out))] {
		if len(added) > 0 {
			break
		}
		depth = i + 1
		for _, n := range r.Entry.Needs {
			if len(added) == maxProducers {
				break
			}
			if n.optional || !idArgument(n.Argument) {
				continue
			}
			// A query that names something needs a search where the name
			// becomes an id: a list that also produces the id (new releases
			// for an album) does not take a name, so when a search produces
			// it, only the search counts as present and is the pick.
			wantSearch := false
			if named {
				for _, p := range n.From {
					if keep(p) && ix.isSearch(p) {
						wantSearch = true
						break
					}
				}
			}
			var pick *Entry
			have := false
			for _, p := range n.From {
				if !keep(p) || (wantSearch && !ix.isSearch(p)) {
					continue
				}
				if placed(i+1, p) || isAdded(p) {
					have = true
					break
				}
				if pick == nil {
					pick = p
				}
			}
			if !have && pick != nil {
				added = append(added, Result{Entry: pick, ProducerFor: ix.nameOf(r.Entry)})
			}
		}
	}
	if len(added) == 0 {
		return out
	}
	// The rest without the added producers, then the producers moved in
	// after the first depth results.
	rest := out[depth:depth]
	for _, r := range out[depth:] {
		if !isAdded(r.Entry) {
			rest = append(rest, r)
		}
	}
	out = slices.Insert(out[:depth+len(rest)], depth, added...)
	return out[:min(len(out), limit)]
}

// isSearch: the entry is a search that takes no id (entryShape.nameSearch).
func (ix *Index) isSearch(e *Entry) bool { return ix.shapes[e.doc].nameSearch }

// searchSlot is where addSearch places a search: right after the best
// result, within the first five.
const searchSlot = 1

// addSearch makes sure an answer to a query that names something holds,
// within its first five, a search where the name can be looked up: the
// best-ranked search the caller may see (rank's bestSearch, one of the
// best rerankDepth matches; when none matched, the best result's
// connector's only search, if it has one) is moved or put right after the
// best result when no search is there yet ("play Hello by
// Adele" ranks playback first, and nothing it needs is an id: the track
// still has to be found).
func (ix *Index) addSearch(out []Result, limit int, best uint32, keep func(*Entry) bool) []Result {
	if len(out) == 0 {
		return out
	}
	for _, r := range out[:min(5, len(out))] {
		if ix.isSearch(r.Entry) {
			return out
		}
	}
	// A search that produces what one of the best results needs comes
	// first ("the episodes in season 2 of Friends": the series search,
	// though its words are not the query's).
	if d, ok := ix.searchProducer(out[:min(producerScan, len(out))], keep); ok {
		best = d
	}
	if best == noDoc {
		d, ok := ix.soleSearch[out[0].Entry.Connector]
		if !ok || !keep(&ix.entries[d]) {
			return out
		}
		best = d
	}
	out, _ = placeWithinFive(out, &ix.entries[best], searchSlot)
	return out[:min(len(out), limit)]
}

// placeWithinFive puts e at position at (or last, in a shorter answer),
// moving it from further down, unless it is among the first five
// already; it reports whether it placed it.
func placeWithinFive(out []Result, e *Entry, at int) ([]Result, bool) {
	if i := slices.IndexFunc(out, func(r Result) bool { return r.Entry == e }); i >= 0 {
		if i < 5 {
			return out, false
		}
		out = slices.Delete(out, i, i+1)
	}
	return slices.Insert(out, min(at, len(out)), Result{Entry: e}), true
}

// agentWords come before the name of someone who made or did what is
// asked about ("movies directed by Christopher Nolan", "films starring
// Tom Hanks", "songs featuring Drake").
var agentWords = setOf("by", "starring", "featuring", "feat", "ft")

// agentName reports whether the query names someone who made, did or
// owns the things it asks about, rather than one of those things: a
// capitalised name after an agent word ("directed by Christopher
// Nolan"), in the possessive ("Tarantino's crime movies"), or directly
// before a plural noun it qualifies ("Christopher Nolan movies"). The
// name's thing is then found by a search of people, not of the things.
func (ix *Index) agentName(q, lower string) bool {
	q = clip(q)
	prev := ""
	inName := false
	first := true
	for w, rest := nextWord(q); w != ""; w, rest = nextWord(rest) {
		name := !first && ix.isName(q, lower, w, rest)
		first = false
		switch {
		case name:
			if !inName && agentWords[strings.ToLower(prev)] {
				return true
			}
			if hasSuffixFold(w, "'s") || hasSuffixFold(w, "’s") {
				return true
			}
			inName = true
		case inName:
			// The word right after a name: a plural noun it qualifies.
			if strings.ToLower(w) == w && plural(w) && !stopWords[w] {
				return true
			}
			inName = false
		}
		prev = w
	}
	return false
}

// addPersonSearch makes sure an answer to a query that names someone who
// made or owns what it asks about (agentName) holds, within its first
// five, the connector's search of people, right after the best result:
// "Search for Christopher Nolan movies" ranks the movie search first,
// but the name is a person's.
func (ix *Index) addPersonSearch(out []Result, limit int, keep func(*Entry) bool) []Result {
	if len(out) == 0 {
		return out
	}
	d, ok := ix.personSearch[out[0].Entry.Connector]
	if !ok || !keep(&ix.entries[d]) {
		return out
	}
	out, _ = placeWithinFive(out, &ix.entries[d], searchSlot)
	return out[:min(len(out), limit)]
}

// asksWho: the query is a question for a person ("Who directed
// Oppenheimer?", "who is the director of Titanic"): the person is what is
// asked for, so the name in it is something else; but "Who is Tom
// Hanks?" asks about the person it names.
func asksWho(q string) bool {
	w, rest := nextWord(q)
	if !strings.EqualFold(w, "who") && !strings.EqualFold(w, "whom") {
		return false
	}
	w, rest = nextWord(rest)
	if !strings.EqualFold(w, "is") && !strings.EqualFold(w, "was") && !strings.EqualFold(w, "are") {
		return true
	}
	w, _ = nextWord(rest)
	r, _ := utf8.DecodeRuneInString(w)
	return !unicode.IsUpper(r)
}

// whoSearches is how many searches addThingSearches places.
const whoSearches = 2

// addThingSearches makes sure an answer to a question for a person that
// names something ("Who directed Oppenheimer?") holds, within its first
// five, searches where that thing may be looked up: not the search of
// people, which "who" ranks first but which cannot find a film, and,
// since the words do not say what kind of thing the name is, the
// connector's whoSearches most used other searches (Index.finders'
// order), right after the best result. A connector with one search
// gets it as for any named query.
func (ix *Index) addThingSearches(out []Result, limit int, keep func(*Entry) bool) []Result {
	if len(out) == 0 {
		return out
	}
	conn := out[0].Entry.Connector
	if _, ok := ix.soleSearch[conn]; ok {
		// addSearch falls back to the only search, if the caller may see it.
		return ix.addSearch(out, limit, noDoc, keep)
	}
	people, hasPeople := ix.personSearch[conn]
	at := min(searchSlot, len(out))
	placed := 0
	for _, d := range ix.finders {
		if placed == whoSearches {
			break
		}
		e := &ix.entries[d]
		if !ix.shapes[d].nameSearch || e.Connector != conn || (hasPeople && d == people) || !keep(e) {
			continue
		}
		placed++
		var moved bool
		if out, moved = placeWithinFive(out, e, at); moved {
			at++
		}
	}
	return out[:min(len(out), limit)]
}

// searchProducer returns the first search the caller may see that produces
// an identifier one of the results needs (a required id input).
func (ix *Index) searchProducer(rs []Result, keep func(*Entry) bool) (uint32, bool) {
	for _, r := range rs {
		for _, n := range r.Entry.Needs {
			if n.optional || !idArgument(n.Argument) {
				continue
			}
			for _, p := range n.From {
				if ix.isSearch(p) && keep(p) {
					return p.doc, true
				}
			}
		}
	}
	return noDoc, false
}

// idArgument: an input that takes an opaque identifier (movie_id, ids,
// pull_number, key), which a person rarely knows, rather than a name.
func idArgument(arg string) bool {
	for _, suf := range idSuffixes {
		if strings.EqualFold(arg, suf.word) || hasSuffixFold(arg, suf.snake) || strings.HasSuffix(arg, suf.camel) {
			return true
		}
	}
	return false
}

// idWords are the last words of an identifier input's name.
var idWords = []string{"id", "ids", "number", "key", "uuid", "sha"}

// idSuffixes are the words an identifier argument ends in, spelt as a
// whole name (ID), after an underscore (movie_id) and camel-cased (movieId).
var idSuffixes = func() (out []struct{ word, snake, camel string }) {
	for _, w := range idWords {
		out = append(out, struct{ word, snake, camel string }{w, "_" + w, strings.ToUpper(w[:1]) + w[1:]})
	}
	return out
}()

// hasSuffixFold is strings.HasSuffix ignoring ASCII case.
func hasSuffixFold(s, suf string) bool {
	return len(s) >= len(suf) && strings.EqualFold(s[len(s)-len(suf):], suf)
}

// mentionsID reports whether the query (lower case) carries something
// that looks like an identifier, a word with a digit: then the caller has
// the id and needs no producer. Two kinds of number are not ids: a count
// before the noun it counts ("the top 10 tracks", "5 albums") and a year
// ("films of 1999").
func mentionsID(q string) bool {
	q = clip(q)
	if !strings.ContainsAny(q, "0123456789") {
		return false
	}
	for w, rest := nextWord(q); w != ""; w, rest = nextWord(rest) {
		if !hasDigit(w) {
			continue
		}
		if allDigits(w) {
			next, _ := nextWord(rest)
			if (len(w) == 4 && w >= "1800" && w <= "2100") || (next != "" && !hasDigit(next) && !stopWords[next] && !nounStops[next]) {
				continue // a year, or a count
			}
		}
		return true
	}
	return false
}

// hasKey reports whether the query holds a tracker's key: two letters or
// more, a dash and digits (PROJ-123, eng-42).
func hasKey(q string) bool {
	if !strings.Contains(q, "-") {
		return false
	}
	for w, rest := nextWord(q); w != ""; w, rest = nextWord(rest) {
		if isKey(w) {
			return true
		}
	}
	return false
}

// isKey reports whether a word is a tracker's key (hasKey).
func isKey(w string) bool {
	letters, digits, ok := strings.Cut(w, "-")
	return ok && len(letters) >= 2 && digits != "" && allDigits(digits) &&
		strings.IndexFunc(letters, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}

func allDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// clip cuts a query to the MaxQueryLen bytes that are read.
func clip(q string) string {
	if len(q) > MaxQueryLen {
		return q[:MaxQueryLen]
	}
	return q
}

// withNeeds sets each result's producer links to those the caller may see
// (Entry.VisibleNeeds).
func (ix *Index) withNeeds(out []Result, keep func(*Entry) bool) []Result {
	for i := range out {
		out[i].Needs = out[i].Entry.VisibleNeeds(keep)
	}
	return out
}

// VisibleNeeds returns the entry's producer links reduced to the producers
// keep reports true for (the caller's grant, a connector), dropping an
// argument none of whose producers is kept. It shares the entry's own
// links when keep keeps them all (no copy): the result must not be
// modified. Search, anvil_describe and every other answer that shows links
// filter them here, so no caller sees a producer it may not call.
func (e *Entry) VisibleNeeds(keep func(*Entry) bool) []Need {
	all := true
	for _, n := range e.Needs {
		for _, p := range n.From {
			if !keep(p) {
				all = false
			}
		}
	}
	if all {
		return e.Needs
	}
	var out []Need
	for _, n := range e.Needs {
		var from []*Entry
		for _, p := range n.From {
			if keep(p) {
				from = append(from, p)
			}
		}
		if len(from) > 0 {
			out = append(out, Need{Argument: n.Argument, From: from})
		}
	}
	return out
}

// Re-ranking. coverageFloor is the factor of an entry that matches none of
// the query's other concepts (one of many): matching more of what was asked
// counts more than matching one word strongly. titleBoost rewards an entry
// whose title the query covers whole ("merge a pull request" and "Merge a
// pull request"), applied to the best rerankDepth first-pass results.
const (
	matchedShare  = 0.1
	coverageFloor = 0.3
	titleBoost    = 2.0
	rerankDepth   = 100
)

// scored is a candidate and its score.
type scored struct {
	doc      uint32
	score    float32
	concepts uint8 // query concepts matched
}

// less orders best first: higher score, then lower entry position (name).
func (a scored) less(b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

func sortScored(cs []scored) {
	slices.SortFunc(cs, func(a, b scored) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
}

// topScored keeps the n best of cs (in no particular order) by a bounded
// heap whose root is the worst kept candidate.
func topScored(cs []scored, n int) []scored {
	if len(cs) <= n {
		return cs
	}
	h := cs[:n]
	worse := func(i, j int) bool { return h[j].less(h[i]) } // i is worse than j
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= n {
				return
			}
			w := l
			if r := l + 1; r < n && worse(r, l) {
				w = r
			}
			if !worse(w, i) {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, c := range cs[n:] {
		if c.less(h[0]) {
			h[0] = c
			down(0)
		}
	}
	return h
}

// titleCoverage is the share of the entry's title terms the query matches,
// each counted at the weight of the best alternative that matches it
// (termW, by term id: markTerms).
func (ix *Index) titleCoverage(doc uint32, termW []float32) float32 {
	terms := ix.titleTerms[ix.titleStart[doc]:ix.titleStart[doc+1]]
	if len(terms) == 0 {
		return 0
	}
	sum := float32(0)
	for _, t := range terms {
		sum += termW[t]
	}
	return sum / float32(len(terms))
}

// queryGroups turns a query (lower case, clipped to MaxQueryLen) into one
// group of alternatives per query concept: a word, or the synonym group it
// belongs to (so "make a new repo" counts the create intent once, not
// twice). Words that no entry contains and that prefix no term are
// dropped; words counts the query's searchable words, matched or not. The
// groups live in s (its words and groups buffers) and are valid until s
// is used again.
func (ix *Index) queryGroups(s *scratch, query string) (groups [][]alt, words int) {
	query = clip(query)
	if hasIdiom(query) {
		query = idioms.Replace(query)
	}
	s.words = tokenizeQuery(s.words[:0], query)
	if len(ix.keyTerms) > 0 && hasKey(query) {
		// "the status of PROJ-123" speaks of an issue.
		s.words = append(s.words, ix.keyTerms...)
	}
	ws := s.words
	// Each group's slice is kept in s.groups between searches (also past
	// its length) and reused; groups are only ever swapped, never copied
	// over one another, so no two share an array.
	groups = s.groups[:0]
	// Per group, on the stack (a query has at most maxQueryTerms groups):
	// its concept key, and whether it holds a catalogue word or a verb
	// after the first.
	var keys [maxQueryTerms]string
	var catalogue, laterVerb [maxQueryTerms]bool
	catalogues := 0
	firstVerb := ""
	for i, w := range ws {
		if w == meConcept && i > 0 && askingVerbs[ws[i-1]] {
			continue
		}
		key := w
		if c, ok := synonymConcept[w]; ok {
			key = c
		}
		gi := slices.Index(keys[:len(groups)], key)
		if gi < 0 {
			if len(groups) == maxQueryTerms {
				continue
			}
			gi = len(groups)
			keys[gi] = key
			if gi < cap(groups) {
				groups = groups[:gi+1]
				groups[gi] = groups[gi][:0]
			} else {
				groups = append(groups, nil)
			}
		}
		g := groups[gi]
		add := func(term string, weight float32) {
			id, ok := ix.terms[term]
			if !ok {
				return
			}
			for i := range g {
				if g[i].term == id {
					g[i].weight = max(g[i].weight, weight)
					return
				}
			}
			g = append(g, alt{term: id, weight: weight})
		}
		if catalogueWords[w] && !catalogue[gi] {
			catalogue[gi] = true
			catalogues++
		}
		if _, verb := verbClass[key]; verb {
			if firstVerb == "" {
				firstVerb = key
			} else if key != firstVerb {
				laterVerb[gi] = true
			}
		}
		if syns := synonyms[w]; len(syns) > 0 {
			// A verb is scored as a class: every member, the word itself
			// included, at the idf of the group's most common member, so a
			// rare member ("new", "add") weighs no more than "create".
			ref := float32(math.MaxFloat32)
			if id, ok := ix.terms[w]; ok {
				ref = ix.idf[id]
			}
			for _, t := range syns { // never append to syns: it is shared
				if id, ok := ix.terms[t]; ok {
					ref = min(ref, ix.idf[id])
				}
			}
			if id, ok := ix.terms[w]; ok {
				add(w, weightExact*ref/ix.idf[id])
			}
			for _, syn := range syns {
				if id, ok := ix.terms[syn]; ok {
					add(syn, weightSynonym*ref/ix.idf[id])
				}
			}
		} else {
			add(w, weightExact)
			lw := float32(weightLexical)
			if _, exact := ix.terms[w]; !exact {
				lw = weightLexicalAbsent
			}
			for _, t := range lexicalSynonyms()[w] {
				add(t, lw)
			}
		}
		if _, exact := ix.terms[w]; !exact && len(w) >= minPrefixLen {
			i := sort.SearchStrings(ix.sorted, w)
			for n := 0; i < len(ix.sorted) && n < maxPrefixAlts && strings.HasPrefix(ix.sorted[i], w); i, n = i+1, n+1 {
				add(ix.sorted[i], weightPrefix)
			}
		}
		groups[gi] = g
	}
	s.groups = groups
	out := groups[:0]
	for gi, g := range groups {
		if len(g) > 0 {
			if catalogue[gi] && catalogues < len(groups) {
				for i := range g {
					g[i].weight *= weightCatalogue
				}
			}
			if laterVerb[gi] {
				for i := range g {
					g[i].weight *= laterVerbWeight
				}
			}
			// swapped, not copied: the empty group's array stays in s
			groups[len(out)], groups[gi] = g, groups[len(out)]
			out = out[:len(out)+1]
		}
	}
	return out, len(ws)
}

// hasIdiom reports whether a lower-case query may hold one of the idioms:
// each contains one of these words, so a query without them is left as
// it is (strings.Replacer copies the query even when it replaces nothing).
func hasIdiom(q string) bool {
	for _, w := range []string{"logged", "signed", "set", "rid of"} {
		if strings.Contains(q, w) {
			return true
		}
	}
	return false
}

// catalogueWords name which list of things a query wants (the latest, the
// most popular), not the things: scaled by weightCatalogue when the query
// says anything else. Stemmed, as queries are.
var catalogueWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{"latest", "popular", "top", "trending", "recent", "upcoming", "best", "most", "least", "today", "now"} {
		for _, t := range tokenize(nil, w) {
			m[t] = true
		}
	}
	return m
}()

//go:embed wordnet.txt
var wordnetTable string

// lexicalSynonyms is the WordNet table (wordnet.txt, generated by
// internal/wordnetgen) as stemmed term → stemmed synonyms, read once on
// first use. Words the verb synonym groups or the stop words cover are
// left out: those meet by their own rules.
var lexicalSynonyms = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(wordnetTable, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		ws := tokenize(nil, f[0])
		if len(ws) != 1 || synonyms[ws[0]] != nil {
			continue
		}
		w := ws[0]
		for _, syn := range f[1:] {
			ts := tokenize(nil, syn)
			if len(ts) == 1 && ts[0] != w && synonyms[ts[0]] == nil && !contains(m[w], ts[0]) {
				m[w] = append(m[w], ts[0])
			}
		}
	}
	return m
})

// synonymGroups are the verbs (and a few nouns) agents use for the same
// intent; every member of a group reaches every other.
var synonymGroups = [][]string{
	{"get", "list", "fetch", "show", "retrieve", "view", "read", "see", "display", "lookup", "inspect", "describe", "print", "tell"},
	{"create", "add", "new", "make", "submit", "insert", "register", "start", "launch"},
	{"delete", "remove", "destroy", "drop", "erase", "purge", "unset"},
	{"update", "edit", "change", "modify", "set", "rename", "patch", "replace", "alter", "close", "reopen", "mark"},
	{"search", "find", "query"},
	{"me", "my", "mine", "myself", "your", "yours", "authenticated", "current", "self"},
	{"user", "person", "people", "account", "who"},
}

// idioms rewrites phrases of a query that name an API concept in other
// words before it is tokenised.
var idioms = strings.NewReplacer(
	"logged in", "authenticated", "logged-in", "authenticated",
	"signed in", "authenticated", "signed-in", "authenticated",
	"set up", "create", "set-up", "create",
	"get rid of", "remove",
)

// askingVerbs are the stemmed verbs after which "me" is who the answer
// goes to, not whose things are asked about ("show me the trailer", "give
// me a list"): queryGroups drops such a "me"; "show me my pulls" keeps "my".
var askingVerbs = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{"show", "give", "tell", "get", "find", "send", "bring"} {
		m[stem(w)] = true
	}
	return m
}()

// synonyms maps a stemmed query word to the other terms of its group;
// synonymConcept maps it to its group's first term, the group's key.
var synonyms, synonymConcept = func() (map[string][]string, map[string]string) {
	syn, concept := map[string][]string{}, map[string]string{}
	for _, words := range synonymGroups {
		var terms []string
		for _, w := range words {
			terms = append(terms, tokenize(nil, w)...)
		}
		for _, a := range terms {
			concept[a] = terms[0]
			for _, b := range terms {
				if a != b && !contains(syn[a], b) {
					syn[a] = append(syn[a], b)
				}
			}
		}
	}
	// "who" asks for a person: it reaches user, person and people, but not
	// account, which a person has (a movie service's "rated account
	// movies" is not who directed a film).
	who, account := stem("who"), stem("account")
	syn[who] = slices.DeleteFunc(slices.Clone(syn[who]), func(t string) bool { return t == account })
	return syn, concept
}()

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scratch is the per-search accumulator, pooled so that a search allocates
// only its result.
type scratch struct {
	words                 []string // the query's terms (queryGroups)
	groups                [][]alt  // the query's concepts (queryGroups)
	total, group          []float32
	termW                 []float32 // by term id: the query's best weight for it, at most 1 (markTerms)
	mask                  []uint32  // the query concepts each entry matched
	touched, groupTouched []uint32
	cands                 []scored
	// bestSearch is the best-ranked search among rank's rerankDepth best
	// matches (noDoc when none), for addSearch.
	bestSearch uint32
}

// noDoc is no entry.
const noDoc = ^uint32(0)

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// markTerms sets termW, sized for n terms, to each alternative's weight
// (at most 1, the best per term); unmarkTerms clears those entries again,
// so the table is all zero between searches.
func (s *scratch) markTerms(n int, groups [][]alt) {
	if len(s.termW) < n {
		s.termW = make([]float32, n)
	}
	for _, g := range groups {
		for _, a := range g {
			s.termW[a.term] = max(s.termW[a.term], min(a.weight, 1))
		}
	}
}

func (s *scratch) unmarkTerms(groups [][]alt) {
	for _, g := range groups {
		for _, a := range g {
			s.termW[a.term] = 0
		}
	}
}

func (s *scratch) reset(n int) {
	if cap(s.total) < n {
		s.total = make([]float32, n)
		s.group = make([]float32, n)
		s.mask = make([]uint32, n)
	}
	s.total = s.total[:n]
	s.group = s.group[:n]
	s.mask = s.mask[:n]
	s.touched = s.touched[:0]
	s.groupTouched = s.groupTouched[:0]
}

// Explain describes how the entry named name scores for the query: one
// line per query word with the term that matched and its contribution. It
// is a diagnostic for tuning and for operators asking why a tool ranks
// where it does.
func (ix *Index) Explain(query, name string) string {
	doc := -1
	for i := range ix.entries {
		if ix.entries[i].Name == name {
			doc = i
			break
		}
	}
	if doc < 0 {
		return name + ": not indexed\n"
	}
	byID := make([]string, len(ix.sorted))
	for t, id := range ix.terms {
		byID[id] = t
	}
	var sb strings.Builder
	total := float32(0)
	groups, _ := ix.queryGroups(new(scratch), strings.ToLower(query))
	for _, g := range groups {
		best, bestTerm := float32(0), ""
		for _, a := range g {
			ps := ix.postings[a.term]
			j := sort.Search(len(ps), func(k int) bool { return ps[k].doc >= uint32(doc) })
			if j < len(ps) && ps[j].doc == uint32(doc) {
				if v := a.weight * ps[j].impact; v > best {
					best, bestTerm = v, byID[a.term]
				}
			}
		}
		total += best
		fmt.Fprintf(&sb, "  %-16s %-16s %.3f (idf %.2f)\n", byID[g[0].term], bestTerm, best, ix.idf[g[0].term])
	}
	fmt.Fprintf(&sb, "  total %.3f\n", total)
	return sb.String()
}
