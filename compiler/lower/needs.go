package lower

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/naming"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Producer links (air.Operation.Needs): for each identifier input of an
// operation (a path parameter that is not an enumeration, or a query
// parameter or body field named like an id), the operations whose answers
// yield its value, so that an agent that knows a name ("the director of
// Heat") finds the search it must call before the operation that takes the
// id. Three sources, strongest first:
//
//  1. the manifest's needs: {<argument>: [<operation>...]}, which replaces
//     what is inferred for that argument (an empty list: no producer);
//  2. OpenAPI response links: a link from P's response to C whose
//     parameter takes $response.body#/<field>;
//  3. inference from response schemas: P's answer has a property of the
//     argument's own name (owner_id, season_number; an object such as
//     owner gives its login, name or id), or an identifying property (id,
//     number, login, name, …) of an object of the argument's resource (a
//     movie_id comes from the id of a movie: an object under a property
//     named movie or movies, a schema named Movie…, or the items of an
//     operation whose path ends in /movie or /movies; failing those, of
//     the resource the path segment before the argument's placeholder
//     names: /tv/{series_id} takes a tv's id). An object that has a
//     property of the argument's own name gives it rather than its id
//     (seasons[].season_number); the answer of a sub-collection
//     (GET /movie/{movie_id}/credits) is no member of it (subCollection).
//
// A producer is a read or a create, is not the consumer, and does not itself
// need the argument it would produce. Inferred producers are ranked reads
// before creates, then by the path segments they share with the consumer
// (sharedSegments: the consumer's own context first), then the grade (the
// resource's own identifier, a kind's, an echo: see grade), then the fewest
// identifiers the consumer does not already have (missingInputs), then the
// action (search before list before get before create: a name becomes an id
// through a search, or through a read of the member by its name, which
// ranks as one: yieldRank, byName), then the fewest inputs the consumer does
// not already have, then the shallower field (fieldDepth), then the shorter path; at
// most maxProducers are kept per identifier argument and maxNameProducers
// per name argument.

// maxProducers bounds the inferred producers recorded per identifier
// argument (an id, number, key, uuid or sha: what a person rarely knows,
// so search returns its first visible producer with the consumer; a
// second is the fallback when the caller's grant hides the first), and
// maxNameProducers per name argument (owner, repo, org, namespace: a
// person usually knows the name, so one way to look it up is enough).
// GitHub's answers hold owners and repositories almost everywhere: three
// producers for each of its ~530 owner/repo inputs made a sixth of its
// AIR document.
const (
	maxProducers     = 2
	maxNameProducers = 1
)

// nameArgument: an argument that takes a name rather than an opaque
// identifier (the complement of discover's id-like inputs).
func nameArgument(snake string) bool {
	i := strings.LastIndexByte(snake, '_')
	switch snake[i+1:] {
	case "id", "ids", "number", "key", "uuid", "sha":
		return false
	}
	return true
}

// Bounds of the response schema walk, per producer: depth (object levels)
// and schema nodes visited, so a huge or recursive answer costs little.
const (
	maxYieldDepth = 4
	maxYieldNodes = 400
)

// idFields are the property names that identify an object, in the order a
// bare-noun argument ("owner", "repo") prefers them.
var idFields = []string{"login", "slug", "key", "name", "id", "number", "sha", "uuid", "code", "handle", "username"}

// containerProps are property names that hold a list of the producer's own
// resource (results[], items[], data[]): their objects keep the context of
// the level above.
var containerProps = map[string]bool{"result": true, "item": true, "data": true, "value": true, "entry": true,
	"record": true, "node": true, "edge": true, "hit": true, "list": true, "content": true, "element": true, "object": true}

// yield is one place in a producer's answer where identifiers are found.
type yield struct {
	op   int    // producer, index into lowerer.ops
	path string // "results[].owner" or "results[].movie_id"
	// kids are the identifying properties of the object at path (for an
	// object yield); nil for a scalar property.
	kids []string
	// obj is the object at path (nil for a scalar): a property named
	// exactly like the argument beats its generic identifier (pickFor).
	obj *air.Schema
}

// yieldIndex indexes every producer's yields by property name and by the
// resource noun of the object.
type yieldIndex struct {
	byField map[string][]yield
	byNoun  map[string][]yield
	nouns   []string // byNoun's keys, sorted (prefix matching)
	// heads maps the last word of each compound noun in byNoun to the
	// nouns it ends (run → workflow_run), sorted.
	heads map[string][]string
	words map[string]words
	keys  map[*air.Schema][]string
	kids  map[*air.Schema][]string
	// wantField and wantNouns are the argument names and nouns some
	// consumer asks for: only those are indexed.
	wantField map[string]bool
	wantNouns map[string]bool
	// ranked caches, per argument shape, its producers in consumer-free
	// order (rankedProducers).
	ranked map[argShape][]candidate
}

// argShape is what the producers of an argument depend on, the consumer
// aside.
type argShape struct {
	snake, noun, fields, kinds, seg string
}

// word returns the memoised snake_case and noun of a name.
func (ix *yieldIndex) word(name string) words {
	if w, ok := ix.words[name]; ok {
		return w
	}
	snake := naming.Snake(name)
	w := words{snake: snake, noun: nounOf(snake), bare: nounOf(schemaNoun(snake))}
	ix.words[name] = w
	return w
}

// schemaSuffixes are the words a spec's schema names end in that say
// what the schema is, not what it describes (Spotify's PrivateUserObject
// is a user, a PetResponse a pet).
var schemaSuffixes = []string{"_object", "_schema", "_response", "_dto", "_model"}

// schemaNoun is a snake_case schema name without a schemaSuffixes word
// (private_user_object → private_user); a name that is only the suffix
// is kept.
func schemaNoun(snake string) string {
	for _, suf := range schemaSuffixes {
		if n, ok := strings.CutSuffix(snake, suf); ok && n != "" {
			return n
		}
	}
	return snake
}

// argSpec is one identifier input of a consumer.
type argSpec struct {
	key   string // input key
	snake string // snake_case of the wire name
	noun  string // resource the identifier names ("" when unknown)
	// kinds are further resources a bare id or ids may name: the values
	// of the consumer's enumerated type input (PUT /me/following?type=
	// artist|user&ids=…: artist and user ids).
	kinds []string
	// seg is the resource the path names where an identifier argument
	// (not a name) sits, when its own name says another word: /tv/{series_id} takes the id of a
	// tv (a series), /tv/episode_group/{tv_episode_group_id} that of an
	// episode_group. A fallback, like kinds.
	seg    string
	fields []string
}

func (l *lowerer) producerLinks() {
	all := make([][]argSpec, len(l.ops))
	for ci, st := range l.ops {
		all[ci] = l.identifierArgs(st)
	}
	ix := l.indexYields(all)
	links := l.responseLinks()
	for ci, st := range l.ops {
		args := all[ci]
		overrides := map[string]*manifest.Need{}
		if st.m != nil {
			for _, n := range st.m.Needs {
				if n == nil {
					continue
				}
				if !slices.ContainsFunc(args, func(a argSpec) bool { return a.key == n.Argument }) && !hasInput(st.op, n.Argument) {
					l.addDiag(n.Pos, diag.Error, "manifest/unknown_argument", ci, "needs.%s: %s has no input %q", n.Argument, st.op.ID, n.Argument)
					continue
				}
				overrides[n.Argument] = n
				if !slices.ContainsFunc(args, func(a argSpec) bool { return a.key == n.Argument }) {
					args = append(args, argSpec{key: n.Argument})
				}
			}
		}
		var needs []air.Need
		for _, a := range args {
			var from []air.Producer
			if n, ok := overrides[a.key]; ok {
				from = l.manifestProducers(ci, n)
			} else {
				from = l.inferProducers(ci, a, ix, links[ci][a.key])
			}
			if len(from) > 0 {
				needs = append(needs, air.Need{Argument: a.key, From: from})
			}
		}
		st.op.Needs = needs
	}
}

func hasInput(op *air.Operation, key string) bool {
	for i := range op.Input.Params {
		if op.Input.Params[i].InputKey() == key {
			return true
		}
	}
	if op.Input.Body != nil {
		for i := range op.Input.Body.Fields {
			if op.Input.Body.Fields[i].InputKey() == key {
				return true
			}
		}
	}
	return false
}

func (l *lowerer) manifestProducers(ci int, n *manifest.Need) []air.Producer {
	out := []air.Producer{}
	for i, ref := range n.From {
		pos := n.Pos
		if i < len(n.FromPos) {
			pos = n.FromPos[i]
		}
		p, hits := l.lookupRef(ref)
		switch {
		case p == nil && len(hits) == 0:
			l.addDiag(pos, diag.Error, "manifest/unknown_operation", ci, "needs.%s: %q names no operation of the service", n.Argument, ref)
		case p == nil:
			l.addDiag(pos, diag.Error, "manifest/ambiguous_operation", ci, "needs.%s: %q names more than one operation; use an AIR id", n.Argument, ref)
		case p.i == ci:
			l.addDiag(pos, diag.Error, "manifest/invalid_need", ci, "needs.%s: an operation cannot produce its own input", n.Argument)
		default:
			if !slices.ContainsFunc(out, func(q air.Producer) bool { return q.Operation == p.op.ID }) {
				out = append(out, air.Producer{Operation: p.op.ID, Basis: air.ProducerManifest})
			}
		}
	}
	return out
}

// identifierArgs lists the consumer's identifier inputs, in input order.
func (l *lowerer) identifierArgs(st *opState) []argSpec {
	var out []argSpec
	op := st.op
	for i := range op.Input.Params {
		p := &op.Input.Params[i]
		snake := naming.Snake(p.Name)
		switch {
		case p.In == air.InPath:
			if p.Schema != nil && (len(p.Schema.Enum) > 0 || p.Schema.Const != nil || slices.Contains(p.Schema.Type, "boolean")) {
				continue
			}
		case p.In == air.InQuery && idLike(snake):
		default:
			continue
		}
		out = append(out, l.argSpec(p.InputKey(), snake, p.Name, st.spec.Path))
	}
	if op.Input.Body != nil {
		for i := range op.Input.Body.Fields {
			f := &op.Input.Body.Fields[i]
			if snake := naming.Snake(f.Name); idLike(snake) {
				out = append(out, l.argSpec(f.InputKey(), snake, f.Name, st.spec.Path))
			}
		}
	}
	if kinds := typeKinds(op); len(kinds) > 0 {
		for i := range out {
			if out[i].snake == "id" || out[i].snake == "ids" {
				out[i].kinds = kinds
			}
		}
	}
	return out
}

// maxTypeKinds bounds the values of a type input read as resource kinds:
// a longer enumeration is a format or a filter, not the kind of an id.
const maxTypeKinds = 8

// typeKinds lists the resources an operation's enumerated type input
// names (type, item_type…: "The ID type", one of artist, user): a bare
// id or ids beside it is the id of one of them. Nil when there is no
// such input, or more than one.
func typeKinds(op *air.Operation) []string {
	var out []string
	found := 0
	for i := range op.Input.Params {
		p := &op.Input.Params[i]
		snake := naming.Snake(p.Name)
		if snake != "type" && !strings.HasSuffix(snake, "_type") || p.Schema == nil || len(p.Schema.Enum) == 0 || len(p.Schema.Enum) > maxTypeKinds {
			continue
		}
		found++
		out = out[:0]
		for _, e := range p.Schema.Enum {
			var v string
			if json.Unmarshal(e, &v) == nil && v != "" && !slices.Contains(out, nounOf(v)) {
				out = append(out, nounOf(v))
			}
		}
	}
	if found != 1 {
		return nil
	}
	return out
}

// idLike reports whether a snake_case input name reads as an identifier.
func idLike(snake string) bool {
	return snake == "id" || snake == "ids" || strings.HasSuffix(snake, "_id") || strings.HasSuffix(snake, "_ids")
}

// argSpec derives the noun and identifying fields of an argument from its
// name: movie_id → movie/id, pull_number → pull/number, owner → owner/
// login…, a bare id → the path segment before it (/albums/{id} → album).
func (l *lowerer) argSpec(key, snake, wire, path string) argSpec {
	a := argSpec{key: key, snake: snake}
	parts := strings.Split(snake, "_")
	last := parts[len(parts)-1]
	head := strings.Join(parts[:len(parts)-1], "_")
	switch last {
	case "id", "ids":
		a.noun, a.fields = head, []string{"id"}
	case "number":
		a.noun, a.fields = head, []string{"number", "id"}
	case "key", "slug", "sha", "uuid", "code", "handle", "login":
		a.noun, a.fields = head, []string{last}
	case "name":
		a.noun, a.fields = head, []string{"name", "login", "slug"}
	case "username":
		a.noun, a.fields = "user", []string{"login", "username", "name"}
	default:
		a.noun, a.fields = snake, idFields
	}
	if a.noun == "" {
		a.noun = segmentBefore(path, wire)
	}
	a.noun = nounOf(a.noun)
	if !nameArgument(snake) && strings.Contains(path, "{"+wire+"}") {
		if seg := segmentBefore(path, wire); seg != "" && !versionSegment(seg) {
			if n := nounOf(seg); n != a.noun {
				a.seg = n
			}
		}
	}
	return a
}

// segmentBefore is the literal path segment just before {name} (or the
// last literal segment when name is not in the path).
func segmentBefore(path, name string) string {
	segs := strings.Split(path, "/")
	lit := ""
	for _, s := range segs {
		if s == "{"+name+"}" {
			return lit
		}
		if s != "" && !strings.HasPrefix(s, "{") {
			lit = s
		}
	}
	return lit
}

// nounOf normalises a resource word: snake_case, singular.
func nounOf(w string) string {
	w = naming.Snake(w)
	if i := strings.LastIndexByte(w, '_'); i >= 0 {
		return w[:i+1] + Singularize(w[i+1:])
	}
	return Singularize(w)
}

// indexYields walks every possible producer's answer once.
func (l *lowerer) indexYields(args [][]argSpec) *yieldIndex {
	ix := &yieldIndex{byField: map[string][]yield{}, byNoun: map[string][]yield{}, words: map[string]words{},
		keys: map[*air.Schema][]string{}, kids: map[*air.Schema][]string{}, wantField: map[string]bool{}, wantNouns: map[string]bool{}}
	for _, as := range args {
		for _, a := range as {
			ix.wantField[a.snake] = true
			ix.wantNouns[a.noun] = true
			for _, k := range a.kinds {
				ix.wantNouns[k] = true
			}
			if a.seg != "" {
				ix.wantNouns[a.seg] = true
			}
		}
	}
	w := &yieldWalk{l: l, ix: ix, seen: map[string]bool{}}
	for i, st := range l.ops {
		if !producerKind(st.op) || st.op.Output.Schema == nil {
			continue
		}
		w.op, w.nodes, w.collection = i, 0, subCollection(st)
		w.walk(st.op.Output.Schema, producerNouns(st), 0)
	}
	for n := range ix.byNoun {
		ix.nouns = append(ix.nouns, n)
	}
	sort.Strings(ix.nouns)
	ix.heads = map[string][]string{}
	for _, n := range ix.nouns {
		if h := nounHead(n); h != "" {
			ix.heads[h] = append(ix.heads[h], n)
		}
	}
	return ix
}

// producerKind: reads and creates produce identifiers; updates and deletes
// are not how an agent finds one.
func producerKind(op *air.Operation) bool {
	return op.Effect.Kind == air.KindRead || op.Effect.Action == "create" || op.Effect.Action == "search"
}

// producerNouns are the resources the top level of an answer is about: the
// last literal path segment, the effect's resource, and the values of an
// enumerated path parameter (/trending/{media_type} with media_type one of
// movie, tv: its results are movies or shows).
func producerNouns(st *opState) []string {
	var out []string
	for i := range st.op.Input.Params {
		p := &st.op.Input.Params[i]
		if p.In != air.InPath || p.Schema == nil || len(p.Schema.Enum) > 8 {
			continue
		}
		for _, e := range p.Schema.Enum {
			var v string
			if json.Unmarshal(e, &v) == nil && v != "" {
				out = append(out, nounOf(v))
			}
		}
	}
	segs := strings.Split(st.spec.Path, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if s := segs[i]; s != "" && !strings.HasPrefix(s, "{") {
			out = append(out, nounOf(s))
			break
		}
	}
	if r := st.op.Effect.Resource; r != "" && !slices.Contains(out, nounOf(r)) {
		out = append(out, nounOf(r))
	}
	return out
}

type yieldWalk struct {
	l     *lowerer
	ix    *yieldIndex
	op    int
	nodes int
	seen  map[string]bool // named schemas on the current path (cycles)
	path  []string        // the walk's position: property names, "[]" for items
	// collection marks a producer whose answer is a sub-collection of the
	// resource its path's placeholder names (subCollection): the answer's
	// own identifiers are that resource's, not a member's.
	collection bool
	// nounBuf[d] holds the context of a property at depth d, reused.
	nounBuf [maxYieldDepth + 2][]string
}

// words memoises the snake_case and noun of property and schema names,
// which repeat across a spec's answers; bare is the noun of a schema name
// without a schemaSuffixes word, which names the resource of a whole
// answer (GET /me's PrivateUserObject is a user) but not of an object
// nested in it, where only the property's own name counts (the current
// playback's item is a TrackObject, not a track the caller keeps).
type words struct{ snake, noun, bare string }

func (w *yieldWalk) walk(s *air.Schema, nouns []string, depth int) {
	if s == nil || w.nodes >= maxYieldNodes || depth > maxYieldDepth {
		return
	}
	w.nodes++
	if name, ok := air.RefName(s.Ref); ok {
		if w.seen[name] {
			return
		}
		target := w.l.spec.Schemas[name]
		if target == nil {
			return
		}
		w.seen[name] = true
		defer delete(w.seen, name)
		wd := w.ix.word(name)
		noun := wd.noun
		if len(w.path) == 0 {
			noun = wd.bare // the answer itself
		}
		nouns = append(slices.Clip(nouns), noun)
		w.walk(target, nouns, depth)
		return
	}
	for _, group := range [][]*air.Schema{s.AllOf, s.OneOf, s.AnyOf} {
		for _, sub := range group {
			w.walk(sub, nouns, depth)
		}
	}
	if s.Items != nil {
		w.path = append(w.path, "[]")
		w.walk(s.Items, nouns, depth)
		w.path = w.path[:len(w.path)-1]
	}
	if len(s.Properties) == 0 {
		return
	}
	if kids := w.ix.idKids(s); len(kids) > 0 && !(w.collection && len(w.path) == 0) {
		for _, n := range nouns {
			if w.ix.wantNoun(n) {
				w.ix.byNoun[n] = w.add(w.ix.byNoun[n], kids, s)
			}
		}
	}
	for _, k := range w.ix.sortedKeys(s) {
		v := s.Properties[k]
		wk := w.ix.word(k)
		w.path = append(w.path, k)
		if w.ix.wantField[wk.snake] {
			if sub := w.object(v); sub != nil {
				if kids := w.ix.idKids(sub); len(kids) > 0 {
					w.ix.byField[wk.snake] = w.add(w.ix.byField[wk.snake], kids, sub)
				}
			} else {
				w.ix.byField[wk.snake] = w.add(w.ix.byField[wk.snake], nil, nil)
			}
		}
		next := nouns
		if !containerProps[wk.noun] {
			w.nounBuf[depth+1] = append(w.nounBuf[depth+1][:0], wk.noun)
			next = w.nounBuf[depth+1]
		}
		w.walk(v, next, depth+1)
		w.path = w.path[:len(w.path)-1]
	}
}

// idKids lists the identifying properties (idFields) an object schema
// has, memoised per schema.
func (ix *yieldIndex) idKids(s *air.Schema) []string {
	if k, ok := ix.kids[s]; ok {
		return k
	}
	var kids []string
	for _, f := range idFields {
		if _, ok := s.Properties[f]; ok {
			kids = append(kids, f)
		}
	}
	ix.kids[s] = kids
	return kids
}

// pathLen is the length joinPath(path) would have.
func pathLen(path []string) int {
	n := 0
	for i, seg := range path {
		if i > 0 && seg != "[]" {
			n++
		}
		n += len(seg)
	}
	return n
}

// joinPath writes a walk path: property names joined by ".", "[]" for
// array items ("results[].owner").
func joinPath(path []string) string {
	var b strings.Builder
	for i, seg := range path {
		if i > 0 && seg != "[]" {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// sortedKeys memoises, per schema (named schemas are shared), its property
// names in byte order: the walk is bounded, so its order decides what it
// reaches and must not be map order.
func (ix *yieldIndex) sortedKeys(s *air.Schema) []string {
	if ks, ok := ix.keys[s]; ok {
		return ks
	}
	ks := slices.Sorted(maps.Keys(s.Properties))
	ix.keys[s] = ks
	return ks
}

// wantNoun reports whether some consumer's argument names the resource n,
// exactly or as a prefix of four letters or more (nounsMatching).
func (ix *yieldIndex) wantNoun(n string) bool {
	if n == "" {
		return false
	}
	if ix.wantNouns[n] {
		return true
	}
	for i := 4; i < len(n); i++ {
		if ix.wantNouns[n[:i]] {
			return true
		}
	}
	return ix.wantNouns[nounHead(n)]
}

// nounHead is the last word of a compound noun (workflow_run → run), ""
// for a single word: a workflow run is a run, so its id is a run_id.
func nounHead(n string) string {
	if i := strings.LastIndexByte(n, '_'); i >= 0 {
		return n[i+1:]
	}
	return ""
}

// add appends the yield at the walk's position (kids: the identifying
// properties of the object there, nil for a scalar) to ys, keeping one
// yield per producer: the one nearest the top of the answer, then the
// first in byte order, whatever order the walk met them in (a producer's
// yields are added one after the other, so only the last element can be
// its own). The path string is built only for a yield that is kept.
func (w *yieldWalk) add(ys []yield, kids []string, obj *air.Schema) []yield {
	if n := len(ys); n > 0 && ys[n-1].op == w.op {
		o := ys[n-1].path
		if l := pathLen(w.path); l < len(o) || l == len(o) && joinPath(w.path) < o {
			ys[n-1] = yield{op: w.op, path: joinPath(w.path), kids: kids, obj: obj}
		}
		return ys
	}
	return append(ys, yield{op: w.op, path: joinPath(w.path), kids: kids, obj: obj})
}

// object resolves s to the object schema it names (one reference deep),
// or nil when it is not an object with properties.
func (w *yieldWalk) object(s *air.Schema) *air.Schema {
	if s == nil {
		return nil
	}
	if name, ok := air.RefName(s.Ref); ok {
		s = w.l.spec.Schemas[name]
	}
	if s == nil || len(s.Properties) == 0 {
		return nil
	}
	return s
}

// responseLinks collects the OpenAPI links of every operation's success
// responses: consumer index → argument key → producers.
func (l *lowerer) responseLinks() map[int]map[string][]air.Producer {
	out := map[int]map[string][]air.Producer{}
	var byRoute map[string]int
	for pi, st := range l.ops {
		for _, r := range st.spec.Responses {
			if r == nil || len(r.Status) == 0 || r.Status[0] != '2' {
				continue
			}
			for _, lk := range r.Links {
				target, hits := l.lookupRef(lk.OperationID)
				if target == nil && len(hits) == 0 {
					if byRoute == nil {
						byRoute = map[string]int{}
						for i, o := range l.ops {
							byRoute[o.spec.Method+" "+o.spec.Path] = i
						}
					}
					if i, ok := byRoute[lk.OperationID]; ok {
						target = l.ops[i]
					}
				}
				if target == nil {
					l.addDiag(l.opPos(st), diag.Warning, "lower/unknown_link_target", pi,
						"response link %q names %q, which is not an operation of the service; it is ignored", lk.Name, lk.OperationID)
					continue
				}
				if target.i == pi {
					continue
				}
				for _, lp := range lk.Parameters {
					field, ok := linkField(lp.Expression)
					if !ok {
						continue
					}
					name := lp.Name
					if _, after, found := strings.Cut(name, "."); found && slices.Contains([]string{"path", "query", "header", "cookie"}, name[:strings.IndexByte(name, '.')]) {
						name = after
					}
					key := ""
					for i := range target.op.Input.Params {
						if target.op.Input.Params[i].Name == name {
							key = target.op.Input.Params[i].InputKey()
						}
					}
					if key == "" {
						continue
					}
					if out[target.i] == nil {
						out[target.i] = map[string][]air.Producer{}
					}
					out[target.i][key] = append(out[target.i][key], air.Producer{Operation: st.op.ID, Field: field, Basis: air.ProducerLink})
				}
			}
		}
	}
	return out
}

// linkField turns a link's "$response.body#/results/0/id" into the field
// path "results[].id"; other expressions are not a field of the answer.
func linkField(expr string) (string, bool) {
	ptr, ok := strings.CutPrefix(expr, "$response.body#")
	if !ok {
		return "", false
	}
	ptr = strings.TrimPrefix(ptr, "/")
	if ptr == "" {
		return "", true
	}
	var b strings.Builder
	for i, seg := range strings.Split(ptr, "/") {
		seg = air.UnescapePointer(seg)
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String(), true
}

// candidate is one inferred producer with its ranking key.
type candidate struct {
	p     air.Producer
	op    int
	rank  int   // action rank
	req   int   // required inputs
	segs  int   // path segments
	grade grade // how surely the field is the resource's own identifier
}

// grade says how surely a producer's field is the identifier of the
// argument's own resource, surest first.
type grade int

const (
	// gradeOwn: an identifying property of the resource the answer lists
	// or returns (the items of GET …/actions/runs for a run_id, or of
	// GET /search/issues for an issue_number).
	gradeOwn grade = iota
	// gradeKind: the same, of a resource whose name ends in the argument's
	// (workflow_runs[].id for a run_id): a kind of it, less sure than the
	// resource itself (a gpg_key is a key, but not what /user/keys/{key_id}
	// takes).
	gradeKind
	// gradeEcho: a value the answer merely mentions: a property named like
	// the argument (a job's run_id, a foreign key) or an object nested in
	// another resource (an event's issue). Such a producer is kept only
	// when nothing better in the consumer's own context comes before it
	// (inferProducers).
	gradeEcho
)

// maxProducerDepth bounds the objects a producer's field descends
// through (fieldDepth): a value three objects deep in an answer
// (items[].performed_via_github_app.owner.slug) is a detail of a detail,
// not what the answer gives.
const maxProducerDepth = 2

// ownPath reports whether an object yield's path is the answer's own
// resource: the answer itself, the items of a top-level list property
// (workflow_runs[]), or items under container properties (results[],
// data.items[]). Any other property on the way (an event's issue, a
// group's members[]) makes the object one the answer only mentions.
func ownPath(path string) bool {
	if path == "" {
		return true
	}
	for i, seg := range strings.Split(path, ".") {
		name := strings.TrimRight(seg, "[]")
		switch {
		case name == "" || containerProps[nounOf(name)]:
		case i == 0 && name != seg:
		default:
			return false
		}
	}
	return true
}

// pagedOwn reports whether an object yield's path is a page of the
// argument's resource under a property named for it: a search's
// artists.items[] (or albums.items[]) for an artist's (an album's) id.
// Only the first property may name something; the rest are containers.
func pagedOwn(path, noun string) bool {
	segs := strings.Split(path, ".")
	if len(segs) < 2 || !nounNames(noun, nounOf(strings.TrimRight(segs[0], "[]"))) {
		return false
	}
	for _, seg := range segs[1:] {
		if name := strings.TrimRight(seg, "[]"); name != "" && !containerProps[nounOf(name)] {
			return false
		}
	}
	return true
}

// envelope reports whether producer op's answer is only a wrapper: an
// object without identifying properties of its own (Spotify's search
// answer {artists: {items: […]}, albums: …}), whose properties name what
// it holds. A resource's answer (a file with its links) is not one: its
// nested pages are details of it.
func (l *lowerer) envelope(ix *yieldIndex, op int) bool {
	s := l.ops[op].op.Output.Schema
	if name, ok := air.RefName(s.Ref); ok {
		s = l.spec.Schemas[name]
	}
	if s == nil || len(s.Properties) == 0 {
		return false
	}
	return len(ix.idKids(s)) == 0
}

// rankedProducers lists the producers of an argument shape, best first by
// action, required inputs, path length, field path and id; computed once
// per shape.
func (l *lowerer) rankedProducers(ix *yieldIndex, a argSpec) []candidate {
	shape := argShape{snake: a.snake, noun: a.noun, fields: strings.Join(a.fields, ","), kinds: strings.Join(a.kinds, ","), seg: a.seg}
	if c, ok := ix.ranked[shape]; ok {
		return c
	}
	best := map[int]candidate{}
	consider := func(y yield, field string, g grade, noun string) {
		if field == "" || fieldDepth(field) > maxProducerDepth || strings.Contains(field, "[]") && l.serverPicked(ix, y.op) {
			return
		}
		if y.kids != nil && !ownPath(y.path) && !(pagedOwn(y.path, noun) && l.envelope(ix, y.op)) {
			// A nested object is the argument's resource only when its
			// property says so (an event's issue): one whose property names
			// a role (owner, account, actor) is that resource at most in one
			// alternative of its type (an app's owner: a user or an
			// enterprise).
			if g != gradeEcho && !nounNames(noun, ix.word(lastProp(y.path)).noun) {
				return
			}
			g = gradeEcho
		}
		p := l.ops[y.op]
		c := candidate{p: air.Producer{Operation: p.op.ID, Field: field, Basis: air.ProducerField}, op: y.op,
			rank: yieldRank(p.op, p.spec.Path, field, noun), req: requiredInputs(p.op), segs: strings.Count(p.spec.Path, "/"), grade: g}
		if o, ok := best[y.op]; !ok || c.grade < o.grade || c.grade == o.grade && (len(c.p.Field) < len(o.p.Field) || len(c.p.Field) == len(o.p.Field) && c.p.Field < o.p.Field) {
			best[y.op] = c
		}
	}
	if !slices.Contains(idFields, a.snake) && a.snake != "ids" {
		for _, y := range ix.byField[a.snake] {
			consider(y, pick(y, a.fields), gradeEcho, a.noun)
		}
	}
	// The kinds of a type input are a fallback: the resource the path
	// names comes first (Jira's avatar/{id} beside a type of the avatar's
	// owner, issuetype or project, takes an avatar's id). So is the path
	// word before the placeholder when the argument's name says another
	// (TMDB's /tv/{series_id}: nothing answers a "series", search/tv
	// answers tvs).
	fallbacks := append([]string{a.noun}, a.kinds...)
	if a.seg != "" {
		fallbacks = append(fallbacks, a.seg)
	}
	for i, noun := range fallbacks {
		if noun == "" || i > 0 && len(best) > 0 {
			continue
		}
		// A kind of the path's resource (a pages_deployment under
		// …/pages/deployments/) comes from the producers whose path says
		// the kind's other words (…/pages/deployments, not …/deployments).
		var kind []string
		if noun == a.seg && strings.HasSuffix(a.noun, "_"+a.seg) {
			kind = strings.Split(strings.TrimSuffix(a.noun, "_"+a.seg), "_")
		}
		// Through the path word, an operation whose own path takes an id
		// after that word (Jira's POST …/owner/{entityId}, beside the
		// consumer's …/owner/{owningObjectId}) needs the id, whatever its
		// answer holds: it produces something else (an avatar).
		takesIt := func(path string) bool { return noun == a.seg && strings.Contains(path, "/"+a.seg+"/{") }
		for _, n := range nounsMatching(ix, noun) {
			for _, y := range ix.byNoun[n] {
				if path := l.ops[y.op].spec.Path; pathSays(path, kind) && !takesIt(path) {
					consider(y, ix.pickFor(y, a), gradeOwn, noun)
				}
			}
		}
		for _, n := range ix.heads[noun] {
			for _, y := range ix.byNoun[n] {
				if path := l.ops[y.op].spec.Path; pathSays(path, kind) && !takesIt(path) {
					consider(y, ix.pickFor(y, a), gradeKind, noun)
				}
			}
		}
	}
	cands := slices.Collect(maps.Values(best))
	slices.SortFunc(cands, func(x, y candidate) int {
		return cmp.Or(cmp.Compare(x.rank, y.rank), cmp.Compare(x.grade, y.grade), cmp.Compare(x.req, y.req), cmp.Compare(fieldDepth(x.p.Field), fieldDepth(y.p.Field)),
			cmp.Compare(x.segs, y.segs), cmp.Compare(len(x.p.Field), len(y.p.Field)), strings.Compare(x.p.Operation, y.p.Operation))
	})
	if ix.ranked == nil {
		ix.ranked = map[argShape][]candidate{}
	}
	ix.ranked[shape] = cands
	return cands
}

func (l *lowerer) inferProducers(ci int, a argSpec, ix *yieldIndex, linked []air.Producer) []air.Producer {
	out := linked
	limit := maxProducers
	if a.snake != "" && nameArgument(a.snake) {
		limit = maxNameProducers
	}
	if a.snake == "" || len(out) >= limit {
		return out
	}
	cons := l.ops[ci].op
	consPath := l.ops[ci].spec.Path
	// The consumer-specific part first: the most path segments shared with
	// the consumer, then the grade, then the fewest identifiers the
	// consumer's caller does not already have (GET /artists?ids= is no way
	// to the id GET /artists/{id} takes: it needs ids itself), then the
	// action, then the fewest inputs the caller does not already have,
	// then the shared ranking's order: an insertion into a fixed array.
	type pickd struct {
		c                  *candidate
		shared, ids, extra int
	}
	better := func(x, y pickd) bool {
		return cmp.Or(cmp.Compare(x.c.rank/rankWrite, y.c.rank/rankWrite), cmp.Compare(y.shared, x.shared),
			cmp.Compare(x.c.grade, y.c.grade), cmp.Compare(x.ids, y.ids), cmp.Compare(x.c.rank, y.c.rank), cmp.Compare(x.extra, y.extra)) < 0
	}
	// best holds more than are kept: an echo after an own producer is
	// dropped below, and the next one must still be there.
	const keep = maxProducers + 2
	var best [keep]pickd
	n := 0
	ranked := l.rankedProducers(ix, a)
	for i := range ranked {
		c := &ranked[i]
		p := l.ops[c.op].op
		if c.op == ci || hasInput(p, a.key) || slices.ContainsFunc(out, func(q air.Producer) bool { return q.Operation == p.ID }) {
			continue
		}
		x := pickd{c: c, shared: sharedSegments(consPath, l.ops[c.op].spec.Path)}
		if n == keep && better(best[n-1], pickd{c: c, shared: x.shared, ids: -1, extra: -1}) {
			continue // cannot enter whatever its inputs: skip counting them
		}
		x.extra, x.ids = missingInputs(p, cons)
		j := n
		for j > 0 && better(x, best[j-1]) {
			j--
		}
		if j >= keep {
			continue
		}
		copy(best[j+1:], best[j:min(n, keep-1)])
		best[j] = x
		n = min(n+1, keep)
	}
	// An echo (a job's run_id, an event's issue) is a producer only when
	// it is the best the consumer's context offers: once an operation
	// that returns the resource itself is kept, echoes add only noise.
	own := false
	for _, b := range best[:n] {
		if len(out) >= limit {
			break
		}
		if b.c.grade == gradeEcho && own {
			continue
		}
		own = own || b.c.grade != gradeEcho
		out = append(out, b.c.p)
	}
	return out
}

// fieldDepth counts the objects a field path descends through: an answer
// whose items are the resource ("[].login" of GET /user/orgs) names it more
// surely than one that mentions it inside something else ("[].org.login"
// of GET /events).
func fieldDepth(field string) int { return strings.Count(field, ".") }

// pick is the field path of y that yields an argument preferring fields:
// the scalar itself, or the first preferred identifying property of the
// object.
func pick(y yield, fields []string) string {
	if y.kids == nil {
		return y.path
	}
	for _, f := range fields {
		if slices.Contains(y.kids, f) {
			if y.path == "" {
				return f
			}
			return y.path + "." + f
		}
	}
	return ""
}

// pickFor is pick for an object of the argument's resource: a property
// named exactly like the argument comes before the generic identifiers
// (a TMDB season's season_number, not its id, is what /season/
// {season_number} takes; an episode's episode_number likewise).
func (ix *yieldIndex) pickFor(y yield, a argSpec) string {
	if y.obj != nil && !slices.Contains(idFields, a.snake) {
		for _, k := range ix.sortedKeys(y.obj) {
			if ix.word(k).snake == a.snake {
				if y.path == "" {
					return k
				}
				return y.path + "." + k
			}
		}
	}
	return pick(y, a.fields)
}

// pathSays reports whether path's literal segments hold each of words
// (compared singular).
func pathSays(path string, words []string) bool {
	if len(words) == 0 {
		return true
	}
	have := map[string]bool{}
	for _, seg := range splitPath(path) {
		if !isParamSeg(seg) {
			for _, w := range strings.Split(naming.Snake(cleanSegment(seg)), "_") {
				have[Singularize(w)] = true
			}
		}
	}
	for _, w := range words {
		if !have[Singularize(w)] {
			return false
		}
	}
	return true
}

// subCollection reports a read whose path ends in a plural literal word
// after a placeholder (GET /movie/{movie_id}/credits, …/reviews): it
// answers that resource's credits or reviews, so an object answer's own
// identifiers are the movie's (TMDB answers {id, cast[], crew[]} with
// the movie's id), never one member's: only its members name the
// resource.
func subCollection(st *opState) bool {
	if st.op.Effect.Kind != air.KindRead {
		return false
	}
	path := strings.TrimSuffix(st.spec.Path, "/")
	i := strings.LastIndexByte(path, '/')
	if i < 0 || isParamSeg(path[i+1:]) || !strings.Contains(path[:i], "{") {
		return false
	}
	w := naming.Snake(cleanSegment(path[i+1:]))
	if i := strings.LastIndexByte(w, '_'); i >= 0 {
		w = w[i+1:]
	}
	return w != "" && Singularize(w) != w
}

// nounsMatching lists the indexed nouns that name the argument's resource:
// the noun itself, and nouns it is a prefix of when it has four letters or
// more (repo → repository).
func nounsMatching(ix *yieldIndex, noun string) []string {
	var out []string
	if _, ok := ix.byNoun[noun]; ok {
		out = append(out, noun)
	}
	if len(noun) >= 4 {
		i := sort.SearchStrings(ix.nouns, noun)
		for ; i < len(ix.nouns) && strings.HasPrefix(ix.nouns[i], noun); i++ {
			if ix.nouns[i] != noun && !strings.Contains(ix.nouns[i][len(noun):], "_") {
				out = append(out, ix.nouns[i])
			}
		}
	}
	return out
}

// nounNames reports whether the noun n names the argument's resource noun
// as nounsMatching and the heads index match it: itself, a longer word it
// begins (repo → repository), or a compound ending in it (workflow_run).
func nounNames(noun, n string) bool {
	return n == noun || len(noun) >= 4 && strings.HasPrefix(n, noun) && !strings.Contains(n[len(noun):], "_") || nounHead(n) == noun
}

// lastProp is the last property name of a yield path ("[].issue" → issue).
func lastProp(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	return strings.TrimRight(path, "[]")
}

// requiredInputs counts the operation's required inputs.
func requiredInputs(p *air.Operation) int {
	n := 0
	for i := range p.Input.Params {
		if p.Input.Params[i].Required {
			n++
		}
	}
	if p.Input.Body != nil {
		for i := range p.Input.Body.Fields {
			if p.Input.Body.Fields[i].Required {
				n++
			}
		}
	}
	return n
}

// missingInputs counts the producer's required inputs the consumer does not
// take (n), and how many of them are identifiers (ids: an id, number, key…
// in nameArgument's sense): a producer callable with what the caller
// already has ranks first, and one that needs an identifier the caller
// must first find elsewhere ranks after one that needs only words.
func missingInputs(p, c *air.Operation) (n, ids int) {
	count := func(key, name string) {
		if !hasInput(c, key) {
			n++
			if !nameArgument(naming.Snake(name)) {
				ids++
			}
		}
	}
	for i := range p.Input.Params {
		if q := &p.Input.Params[i]; q.Required {
			count(q.InputKey(), q.Name)
		}
	}
	if p.Input.Body != nil {
		for i := range p.Input.Body.Fields {
			if f := &p.Input.Body.Fields[i]; f.Required {
				count(f.InputKey(), f.Name)
			}
		}
	}
	return n, ids
}

// sharedSegments counts the leading path segments two paths have in common
// (placeholders compared by name). A producer that shares more of the
// consumer's path answers in the consumer's own context: the public key of
// the repository's Actions secrets (/repos/{owner}/{repo}/actions/secrets/
// public-key) for a repository Actions secret's key_id, not the user's SSH
// keys; the repository's releases for a release_id.
//
// A shared prefix without a placeholder (/repos) is no shared context and
// counts 0: POST /repos/{template_owner}/{template_repo}/generate is no
// place to find a repository's name.
func sharedSegments(a, b string) int {
	n, context := 0, false
	for {
		a, b = strings.TrimPrefix(a, "/"), strings.TrimPrefix(b, "/")
		i, j := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		if i < 0 {
			i = len(a)
		}
		if j < 0 {
			j = len(b)
		}
		if i == 0 || a[:i] != b[:j] {
			break
		}
		n++
		context = context || a[0] == '{'
		a, b = a[i:], b[j:]
	}
	if !context {
		return 0
	}
	return n
}

// yieldRank is the action rank of a producer (at path) for one field of
// its answer, for an argument of resource noun: a read of a word under the
// resource's collection (GET …/releases/latest for a release_id) whose
// field is in no list answers one member of the collection, so it ranks
// as the get it is, after the list of the resource (GET …/releases),
// whatever action its path made of it.
func yieldRank(op *air.Operation, path, field, noun string) int {
	r := actionRank(op)
	if r < rankGet && !strings.Contains(field, "[]") && memberPath(path, noun) {
		return rankGet
	}
	if r == rankGet && !strings.ContainsAny(field, "[.") && byName(path) && underNoun(path, noun) {
		return 0
	}
	return r
}

// underNoun reports whether a literal segment of path is the collection
// of noun (/repos/{owner}/{repo}/releases/tags/{tag} for release): the
// read answers a member of it, whose own identifier it yields.
func underNoun(path, noun string) bool {
	for _, seg := range strings.Split(path, "/") {
		if seg != "" && !isParamSeg(seg) && noun != "" && nounNames(noun, nounOf(seg)) {
			return true
		}
	}
	return false
}

// byName reports a path that ends in a placeholder for a name, not an
// identifier, that the literal segment before it names
// (/repos/{owner}/{repo}/releases/tags/{tag}, /users/{username}): a read
// of one member by the name a person knows is, like a search, where that
// name becomes an id, so for the member's own identifier (a top-level
// field, the path under the noun's collection: underNoun) it ranks with
// the searches, before a list that must be paged through. A placeholder
// the segment does not name is a selector, not a name (/me/top/{type}).
func byName(path string) bool {
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	if len(segs) < 2 {
		return false
	}
	last, prev := segs[len(segs)-1], segs[len(segs)-2]
	if !isParamSeg(last) || isParamSeg(prev) || prev == "" {
		return false
	}
	name := naming.Snake(strings.Trim(last, "{}"))
	return nameArgument(name) && strings.HasPrefix(name, Singularize(naming.Snake(prev)))
}

// memberPath reports whether path ends in a literal word under the
// literal collection segment of noun (/repos/{owner}/{repo}/releases/
// latest for release).
func memberPath(path, noun string) bool {
	coll, ok := wordUnder(path)
	return ok && noun != "" && nounNames(noun, nounOf(coll))
}

// wordUnder returns the collection segment of a path that ends in a
// literal word under a literal segment (/tv/latest: tv).
func wordUnder(path string) (coll string, ok bool) {
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	if len(segs) < 2 {
		return "", false
	}
	last, coll := segs[len(segs)-1], segs[len(segs)-2]
	return coll, last != "" && !strings.HasPrefix(last, "{") && coll != "" && !strings.HasPrefix(coll, "{")
}

// serverPicked reports a producer that answers one member of a
// collection the server picks, not the caller: a read with no required
// input whose path ends in a word under the collection (TMDB's GET
// /tv/latest, the newest series) and whose answer is a resource with
// identifiers of its own. The lists inside it (that series' seasons[])
// are no way to the member of another series the caller means; its own
// identifiers still are (the latest movie is a movie).
func (l *lowerer) serverPicked(ix *yieldIndex, op int) bool {
	st := l.ops[op]
	if _, ok := wordUnder(st.spec.Path); !ok || st.op.Effect.Kind != air.KindRead || requiredInputs(st.op) > 0 {
		return false
	}
	s := st.op.Output.Schema
	if name, ok := air.RefName(s.Ref); ok {
		s = l.spec.Schemas[name]
	}
	return s != nil && len(s.Properties) > 0 && len(ix.idKids(s)) > 0
}

// actionRank orders producers by how an agent finds an identifier from a
// name: search, then list, then get, then anything else (rankWrite: a
// create, which makes a new thing rather than finding the one meant).
func actionRank(op *air.Operation) int {
	switch op.Effect.Action {
	case "search":
		return 0
	case "list":
		return 1
	case "get":
		return rankGet
	}
	return rankWrite
}

const (
	rankGet   = 2
	rankWrite = 3
)
