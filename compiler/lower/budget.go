package lower

import (
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/runtime/air"
)

// CodeSchemaTruncated is the warning for an operation whose published input
// schema would exceed the input schema budget: some of the named schemas in
// its $defs are replaced by permissive stand-ins.
const CodeSchemaTruncated = "spec/schema_truncated"

// DefaultInputSchemaBudget is the most bytes an operation's published input
// schema (compact JSON, $defs included) may take. It is well above the
// largest input schema of the GitHub, Stripe, Kubernetes and Jira
// descriptions (147 KiB, Kubernetes) and below what MCP clients handle
// comfortably; descriptions such as Microsoft Graph, whose entities reach
// hundreds of others, would otherwise publish megabytes per operation.
const DefaultInputSchemaBudget = 256 << 10

// schemaBudget is the input schema budget of this Lower call.
func (l *lowerer) schemaBudget() int {
	if l.opts.schemaBudget > 0 {
		return l.opts.schemaBudget
	}
	return DefaultInputSchemaBudget
}

// budgetCache memoises, per named schema, what bounding input schemas needs:
// encoded sizes, direct references and stand-ins. Each is computed once per
// Lower call, however many operations reach the schema.
type budgetCache struct {
	nameSize  map[string]int         // len of the JSON string of the name
	defSize   map[string]int         // len of the compact JSON of the schema
	defRefs   map[string][]string    // names the schema refers to directly, sorted
	stand     map[string]*air.Schema // the stand-in
	standSize map[string]int         // len of the stand-in's compact JSON
}

func (l *lowerer) cache() *budgetCache {
	if l.budget == nil {
		l.budget = &budgetCache{
			nameSize: map[string]int{}, defSize: map[string]int{}, defRefs: map[string][]string{},
			stand: map[string]*air.Schema{}, standSize: map[string]int{},
		}
	}
	return l.budget
}

// encodedSize is the length of the compact JSON of s, as the gateway and
// bundle encode it (air.Schema's own MarshalJSON); -1 when it cannot be
// encoded.
func encodedSize(s *air.Schema) int {
	b, err := s.MarshalJSON()
	if err != nil {
		return -1
	}
	return len(b)
}

// entrySize is the size of the $defs member "name":<schema>.
func (l *lowerer) entrySize(name string) int {
	c := l.cache()
	ns, ok := c.nameSize[name]
	if !ok {
		b, _ := json.Marshal(name) // a string always encodes
		ns = len(b)
		c.nameSize[name] = ns
	}
	ds, ok := c.defSize[name]
	if !ok {
		ds = encodedSize(l.spec.Schemas[name])
		c.defSize[name] = ds
	}
	if ds < 0 {
		return -1
	}
	return ns + 1 + ds
}

// standEntrySize is the size of the $defs member "name":<stand-in>.
func (l *lowerer) standEntrySize(name string) int {
	l.standIn(name)
	c := l.cache()
	return c.nameSize[name] + 1 + c.standSize[name]
}

// standIn is the permissive schema that takes a left-out named schema's
// place in $defs: it keeps the JSON types the schema declares (so a string,
// number or boolean stays one, and an object stays an object) and says why
// the rest is gone. A schema with no declared types gets none, so that it
// accepts any value.
func (l *lowerer) standIn(name string) *air.Schema {
	c := l.cache()
	if s, ok := c.stand[name]; ok {
		return s
	}
	s := &air.Schema{
		Description: "Schema omitted: this operation's input schema would exceed " + budgetText(l.schemaBudget()) + ".",
		Type:        append(air.Types(nil), l.schemaTypes(l.spec.Schemas[name])...),
	}
	c.stand[name] = s
	c.standSize[name] = encodedSize(s)
	if _, ok := c.nameSize[name]; !ok {
		b, _ := json.Marshal(name)
		c.nameSize[name] = len(b)
	}
	return s
}

// budgetText writes a budget for people: "256 KiB", or bytes when it is not
// a whole number of KiB.
func budgetText(n int) string {
	if n%1024 == 0 {
		return strconv.Itoa(n/1024) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// namedRefs lists, sorted and once each, the named schemas s refers to
// directly (through its subschemas, but not through the schemas its
// references name).
func (l *lowerer) namedRefs(s *air.Schema) []string {
	seen := map[string]bool{}
	l.walkRefs(s, seen)
	return slices.Sorted(maps.Keys(seen))
}

// defRefs is namedRefs of the named schema name, memoised.
func (l *lowerer) defRefs(name string) []string {
	c := l.cache()
	if r, ok := c.defRefs[name]; ok {
		return r
	}
	r := l.namedRefs(l.spec.Schemas[name])
	c.defRefs[name] = r
	return r
}

// walkRefs adds to seen the names s refers to, over the same keywords
// collectRefs follows.
func (l *lowerer) walkRefs(s *air.Schema, seen map[string]bool) {
	if s == nil || s.Bool != nil {
		return
	}
	if s.Ref != "" {
		if name, ok := l.refName(s.Ref); ok {
			seen[name] = true
		}
	}
	s.EachChild(func(x *air.Schema) { l.walkRefs(x, seen) })
}

// defsTally is the compact JSON size of a schema object whose $defs are
// being chosen: the object without $defs (root bytes, at least "{}") plus n
// $defs members of entries bytes in all.
type defsTally struct {
	root, entries, n int
}

// size is the encoded size with the $defs member ("$defs" is the first key
// an object without $ref writes).
func (t defsTally) size() int {
	if t.n == 0 {
		return t.root
	}
	s := t.root + len(`"$defs":{}`) + t.entries + t.n - 1
	if t.root > 2 {
		s++ // the comma before the object's next member
	}
	return s
}

// boundInputSchema keeps an operation's published input schema within the
// budget. When the schema with every named schema it reaches fits, it is left
// as it is. Otherwise named schemas are taken breadth-first from the
// schema's own references (each level in name order), each one kept whole if
// the total still fits with it, and every name that the schema or a kept
// definition refers to but that is not kept gets a stand-in (standIn) in
// $defs, so no reference dangles; the schema itself and every kept
// definition are unchanged. Each bounded operation gets one warning,
// CodeSchemaTruncated.
func (l *lowerer) boundInputSchema(st *opState) {
	s := st.op.Input.Schema
	if s == nil || len(s.Defs) == 0 || s.Ref != "" {
		return
	}
	budget := l.schemaBudget()
	root := *s
	root.Defs = nil
	t := defsTally{root: encodedSize(&root)}
	if t.root < 0 {
		return
	}
	names := slices.Sorted(maps.Keys(s.Defs))
	for _, n := range names {
		e := l.entrySize(n)
		if e < 0 {
			return // an unencodable schema: leave it to the encoder to report
		}
		t.entries += e
		t.n++
	}
	full := t.size()
	if full <= budget {
		return
	}

	t = defsTally{root: t.root}
	kept := map[string]bool{}
	stand := map[string]bool{}
	var level []string
	for _, n := range l.namedRefs(&root) {
		if _, ok := s.Defs[n]; ok {
			stand[n] = true
			level = append(level, n)
			t.entries += l.standEntrySize(n)
			t.n++
		}
	}
	for len(level) > 0 {
		var next []string
		for _, n := range level {
			delta := l.entrySize(n) - l.standEntrySize(n)
			var fresh []string
			for _, r := range l.defRefs(n) {
				if _, ok := s.Defs[r]; ok && !kept[r] && !stand[r] {
					fresh = append(fresh, r)
					delta += l.standEntrySize(r)
				}
			}
			try := t
			try.entries += delta
			try.n += len(fresh)
			if try.size() > budget {
				continue
			}
			t = try
			delete(stand, n)
			kept[n] = true
			for _, r := range fresh {
				stand[r] = true
			}
			next = append(next, fresh...)
		}
		sort.Strings(next)
		level = next
	}

	out := root
	out.Defs = make(map[string]*air.Schema, len(kept)+len(stand))
	for n := range kept {
		out.Defs[n] = s.Defs[n]
	}
	for n := range stand {
		out.Defs[n] = l.standIn(n)
	}
	st.op.Input.Schema = &out
	st.op.Input.StandIns = slices.Sorted(maps.Keys(stand))

	msg := st.spec.Method + " " + st.spec.Path + ": the input schema and the " + strconv.Itoa(len(names)) +
		" named schemas it reaches take " + kibText(full) + ", over the " + budgetText(budget) + " budget; " +
		strconv.Itoa(len(kept)) + " are kept whole, " + strconv.Itoa(len(stand)) + " are replaced by permissive stand-ins and " +
		strconv.Itoa(len(names)-len(kept)-len(stand)) + " are left out"
	if t.size() > budget {
		msg += " (even so the schema takes " + kibText(t.size()) + ")"
	}
	l.addDiag(l.opPos(st), diag.Warning, CodeSchemaTruncated, st.i, "%s", msg)
}

// kibText writes a size in KiB, rounded up.
func kibText(n int) string {
	return strconv.Itoa((n+1023)/1024) + " KiB"
}
