package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// maxNodes bounds the schema pairs one comparison (a memo: a whole `anvil
// diff`, or one contract pair of the lock) visits. Nesting has no bound of
// its own: inline schemas are finite (the loader bounds their depth and
// the input its size), and each pair of named definitions is walked once
// per memo however many operations and paths reach it ($ref cycles
// included), so the work ends within the input's own size. The budget only
// guards against pairings that multiply (alternatives of alternatives); a
// comparison that reaches it says so with a comparison_incomplete finding
// in each operation it could not finish, whose verdict is then unknown.
var maxNodes = 20_000_000

// maxRefHops bounds a chain of references to references; a longer chain is
// left unresolved and the comparison marked incomplete.
const maxRefHops = 64

// direction says whose values a schema describes: the caller's (input) or
// the upstream's (output). It decides which way a change breaks.
type direction int

const (
	input direction = iota
	output
)

// finding is one schema difference at a path, before it becomes a Change.
type finding struct {
	kind     string
	breaking bool
	detail   string
}

// pairKey names a pair of named definitions compared in one direction.
type pairKey struct {
	dir      direction
	old, new string
}

// entry is one item of a comparison: a difference at a path (kind set), or
// a pair of named definitions reached at that path (sub set). Paths are
// relative to the pair (or the root schema) the entry belongs to.
type entry struct {
	kind     string
	breaking bool
	path     string
	msg      string
	sub      *pairResult
}

// pairResult is the comparison of one pair of named definitions, made
// once and independent of where it is reached: nested pairs are entries,
// expanded when a finding list is made (expand).
type pairResult struct {
	key     pairKey
	entries []entry
	partial bool // cut short by the budget or an unresolvable chain
}

// memo holds the pair comparisons of one pair of definition tables.
type memo struct {
	oldDefs, newDefs map[string]*air.Schema
	pairs            map[pairKey]*pairResult
	nodes            int
	incomplete       string // why comparing stopped ("" while it has not)
}

func newMemo(oldDefs, newDefs map[string]*air.Schema) *memo {
	return &memo{oldDefs: oldDefs, newDefs: newDefs, pairs: map[pairKey]*pairResult{}}
}

// walker writes the entries of one schema pair of one direction.
type walker struct {
	m    *memo
	dir  direction
	out  *[]entry
	cut  bool // this walk stopped early
	into *pairResult
}

func compareSchemas(m *memo, dir direction, o, n *air.Schema) []finding {
	label := "response"
	if dir == input {
		label = "input"
	}
	return compareSchemasAs(m, dir, label, o, n)
}

// compareSchemasAs compares o and n, every detail starting with label. Each
// pair of named definitions is reported once, at the first path that
// reaches it; a comparison that could not finish ends with a
// comparison_incomplete finding.
func compareSchemasAs(m *memo, dir direction, label string, o, n *air.Schema) []finding {
	var entries []entry
	w := &walker{m: m, dir: dir, out: &entries}
	w.walk("", o, n)
	var out []finding
	partial := expand(label, "", entries, map[pairKey]bool{}, &out)
	if partial || w.cut {
		out = append(out, finding{kind: ComparisonIncomplete, detail: label + ": not compared to the end: " + m.incomplete})
	}
	return out
}

// expand turns entries into findings under label, the paths prefixed,
// each nested pair expanded once; it reports whether a partial pair was
// reached.
func expand(label, prefix string, entries []entry, seen map[pairKey]bool, out *[]finding) bool {
	partial := false
	for _, e := range entries {
		p := joinPath(prefix, e.path)
		if e.sub != nil {
			if seen[e.sub.key] {
				continue
			}
			seen[e.sub.key] = true
			if e.sub.partial {
				partial = true
			}
			if expand(label, p, e.sub.entries, seen, out) {
				partial = true
			}
			continue
		}
		where := label
		if p != "" {
			where += " `" + p + "`"
		}
		*out = append(*out, finding{kind: e.kind, breaking: e.breaking, detail: where + ": " + e.msg})
	}
	return partial
}

// joinPath puts a relative path under prefix: "a" and "b" make "a.b",
// "a" and "[]" make "a[]".
func joinPath(prefix, rel string) string {
	switch {
	case rel == "":
		return prefix
	case prefix == "":
		return rel
	case rel[0] == '[' || rel[0] == '{':
		return prefix + rel
	}
	return prefix + "." + rel
}

func (w *walker) add(kind string, breaking bool, path, format string, args ...any) {
	*w.out = append(*w.out, entry{kind: kind, breaking: breaking, path: path, msg: fmt.Sprintf(format, args...)})
}

// stop records why comparing stopped; what is left is not compared.
func (w *walker) stop(format string, args ...any) {
	if w.m.incomplete == "" {
		w.m.incomplete = fmt.Sprintf(format, args...)
	}
	w.cut = true
	if w.into != nil {
		w.into.partial = true
	}
}

// resolve follows $ref chains; it returns the schema, the last ref name,
// and false when a chain is longer than maxRefHops.
func resolve(s *air.Schema, defs map[string]*air.Schema) (*air.Schema, string, bool) {
	name := ""
	for i := 0; s != nil && s.Ref != ""; i++ {
		if i == maxRefHops {
			return s, name, false
		}
		n, ok := refName(s.Ref)
		if !ok || defs[n] == nil {
			return s, name, true
		}
		name, s = n, defs[n]
	}
	return s, name, true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// pair returns the comparison of two named definitions, walking them the
// first time. The result is entered before the walk, so a cycle back to
// the pair finds it (and expand stops there).
func (w *walker) pair(key pairKey, o, n *air.Schema) *pairResult {
	if r := w.m.pairs[key]; r != nil {
		return r
	}
	r := &pairResult{key: key}
	w.m.pairs[key] = r
	if w.m.incomplete != "" {
		r.partial = true
		return r
	}
	sub := &walker{m: w.m, dir: w.dir, out: &r.entries, into: r}
	sub.body("", o, n)
	if sub.cut {
		w.cut = true
		if w.into != nil {
			w.into.partial = true
		}
	}
	return r
}

func (w *walker) walk(path string, o, n *air.Schema) {
	if o == nil || n == nil {
		return
	}
	if w.m.incomplete != "" {
		w.stop("")
		return
	}
	if w.m.nodes++; w.m.nodes > maxNodes {
		w.stop("more than %d schema pairs compared", maxNodes)
		return
	}
	o, on, ok1 := resolve(o, w.m.oldDefs)
	n, nn, ok2 := resolve(n, w.m.newDefs)
	if !ok1 || !ok2 {
		w.stop("a $ref chain longer than %d hops (at `%s`)", maxRefHops, path)
		return
	}
	if on != "" && nn != "" {
		r := w.pair(pairKey{w.dir, on, nn}, o, n)
		*w.out = append(*w.out, entry{path: path, sub: r})
		return
	}
	w.body(path, o, n)
}

// body compares two resolved schemas.
func (w *walker) body(path string, o, n *air.Schema) {
	if !w.types(path, o, n) {
		return // disjoint types: what is under them is not comparable
	}
	w.format(path, o, n)
	w.enum(path, o, n)
	w.constraints(path, o, n)
	if w.dir == input && len(o.Default) > 0 && len(n.Default) > 0 && !sameJSON(o.Default, n.Default) {
		w.add(InputDefaultChanged, true, path, "default %s → %s", compact(o.Default), compact(n.Default))
	}
	w.properties(path, o, n)
	if o.Items != nil && n.Items != nil {
		w.walk(path+"[]", o.Items, n.Items)
	}
	if o.AdditionalProperties != nil && n.AdditionalProperties != nil {
		w.walk(path+"{}", o.AdditionalProperties, n.AdditionalProperties)
	}
	w.composition(path, "oneOf", o.OneOf, n.OneOf)
	w.composition(path, "anyOf", o.AnyOf, n.AnyOf)
	w.composition(path, "allOf", o.AllOf, n.AllOf)
}

// typeSet is the schema's type names; nil means any type.
func typeSet(s *air.Schema) []string {
	if len(s.Type) == 0 {
		return nil
	}
	t := slices.Clone([]string(s.Type))
	sort.Strings(t)
	return slices.Compact(t)
}

// covers reports whether the type set ts admits values of type t.
func covers(ts []string, t string) bool {
	return ts == nil || slices.Contains(ts, t) || (t == "integer" && slices.Contains(ts, "number"))
}

func typeText(ts []string) string {
	if ts == nil {
		return "any"
	}
	return strings.Join(ts, "|")
}

// types reports a type change; it returns false when the two sides share no
// type, so nothing below them is compared.
func (w *walker) types(path string, o, n *air.Schema) bool {
	ot, nt := typeSet(o), typeSet(n)
	if slices.Equal(ot, nt) {
		return true
	}
	lost := false // old values the new type does not admit
	for _, t := range orAny(ot) {
		if !covers(nt, t) {
			lost = true
		}
	}
	gained := false // new values the old type did not admit
	for _, t := range orAny(nt) {
		if !covers(ot, t) {
			gained = true
		}
	}
	if !lost && !gained {
		return true
	}
	if w.dir == input {
		w.add(InputTypeChanged, lost, path, "type %s → %s (%s)", typeText(ot), typeText(nt), wider(lost))
	} else {
		w.add(OutputTypeChanged, gained, path, "type %s → %s (%s)", typeText(ot), typeText(nt), wider(!gained))
	}
	if ot == nil || nt == nil {
		return true
	}
	for _, t := range ot {
		if covers(nt, t) {
			return true
		}
	}
	return false
}

// orAny stands for "any type" by a name no concrete set covers.
func orAny(ts []string) []string {
	if ts == nil {
		return []string{"any"}
	}
	return ts
}

func wider(narrowed bool) string {
	if narrowed {
		return "narrowed"
	}
	return "widened"
}

func (w *walker) format(path string, o, n *air.Schema) {
	if o.Format == n.Format {
		return
	}
	of, nf := orNone(o.Format), orNone(n.Format)
	if w.dir == input {
		// A format the caller's values must now meet narrows the input,
		// except a numeric width every SDK's numbers already have.
		w.add(InputFormatChanged, n.Format != "" && !widthOnly[n.Format], path, "format %s → %s", of, nf)
	} else {
		// An answer that no longer promises the old format breaks parsers of it.
		w.add(OutputFormatChanged, o.Format != "", path, "format %s → %s", of, nf)
	}
}

// widthOnly are formats that only name the width of a JSON number an SDK
// already sends in full (int64, double): adding one narrows nothing.
var widthOnly = map[string]bool{"int64": true, "double": true}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// values is a schema's enum (or const) as canonical JSON texts; nil means unrestricted.
func values(s *air.Schema) []string {
	var raw []json.RawMessage
	switch {
	case len(s.Enum) > 0:
		raw = s.Enum
	case len(s.Const) > 0:
		raw = []json.RawMessage{s.Const}
	default:
		return nil
	}
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		out = append(out, compact(r))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func (w *walker) enum(path string, o, n *air.Schema) {
	ov, nv := values(o), values(n)
	if slices.Equal(ov, nv) {
		return
	}
	var removed, added []string
	if ov != nil && nv != nil {
		for _, v := range ov {
			if !slices.Contains(nv, v) {
				removed = append(removed, v)
			}
		}
		for _, v := range nv {
			if !slices.Contains(ov, v) {
				added = append(added, v)
			}
		}
	}
	switch {
	case ov == nil: // restricted now
		if w.dir == input {
			w.add(InputEnumRemoved, true, path, "now restricted to %s", strings.Join(nv, ", "))
		} else {
			w.add(OutputEnumRemoved, false, path, "now restricted to %s", strings.Join(nv, ", "))
		}
	case nv == nil: // unrestricted now
		if w.dir == input {
			w.add(InputEnumAdded, false, path, "no longer restricted to %s", strings.Join(ov, ", "))
		} else {
			w.add(OutputEnumAdded, true, path, "no longer restricted to %s", strings.Join(ov, ", "))
		}
	default:
		if len(removed) > 0 {
			if w.dir == input {
				w.add(InputEnumRemoved, true, path, "enum values removed: %s", strings.Join(removed, ", "))
			} else {
				w.add(OutputEnumRemoved, false, path, "enum values removed: %s", strings.Join(removed, ", "))
			}
		}
		if len(added) > 0 {
			if w.dir == input {
				w.add(InputEnumAdded, false, path, "enum values added: %s", strings.Join(added, ", "))
			} else {
				w.add(OutputEnumAdded, true, path, "enum values added: %s", strings.Join(added, ", "))
			}
		}
	}
}

// bound is one numeric constraint: lower bounds tighten upward, upper bounds downward.
type bound struct {
	name  string
	lower bool
	get   func(*air.Schema) *big.Float
}

func num(n *json.Number) *big.Float {
	if n == nil {
		return nil
	}
	f, _, err := big.ParseFloat(string(*n), 10, 128, big.ToNearestEven)
	if err != nil {
		return nil
	}
	return f
}

func count(n *int) *big.Float {
	if n == nil {
		return nil
	}
	return new(big.Float).SetInt64(int64(*n))
}

var bounds = []bound{
	{"minimum", true, func(s *air.Schema) *big.Float { return num(s.Minimum) }},
	{"exclusiveMinimum", true, func(s *air.Schema) *big.Float { return num(s.ExclusiveMinimum) }},
	{"maximum", false, func(s *air.Schema) *big.Float { return num(s.Maximum) }},
	{"exclusiveMaximum", false, func(s *air.Schema) *big.Float { return num(s.ExclusiveMaximum) }},
	{"minLength", true, func(s *air.Schema) *big.Float { return count(s.MinLength) }},
	{"maxLength", false, func(s *air.Schema) *big.Float { return count(s.MaxLength) }},
	{"minItems", true, func(s *air.Schema) *big.Float { return count(s.MinItems) }},
	{"maxItems", false, func(s *air.Schema) *big.Float { return count(s.MaxItems) }},
	{"minProperties", true, func(s *air.Schema) *big.Float { return count(s.MinProperties) }},
	{"maxProperties", false, func(s *air.Schema) *big.Float { return count(s.MaxProperties) }},
}

func text(f *big.Float) string {
	if f == nil {
		return "none"
	}
	return f.Text('g', -1)
}

// constraint reports one constraint change; tighter says which way it went.
func (w *walker) constraint(path string, tighter bool, format string, args ...any) {
	if w.dir == input {
		if tighter {
			w.add(InputConstraintTighter, true, path, format, args...)
		} else {
			w.add(InputConstraintLooser, false, path, format, args...)
		}
		return
	}
	if tighter {
		w.add(OutputConstraintTighter, false, path, format, args...)
	} else {
		w.add(OutputConstraintLooser, true, path, format, args...)
	}
}

func (w *walker) constraints(path string, o, n *air.Schema) {
	for _, b := range bounds {
		ov, nv := b.get(o), b.get(n)
		if (ov == nil && nv == nil) || (ov != nil && nv != nil && ov.Cmp(nv) == 0) {
			continue
		}
		var tighter bool
		switch {
		case ov == nil:
			tighter = true
		case nv == nil:
			tighter = false
		case b.lower:
			tighter = nv.Cmp(ov) > 0
		default:
			tighter = nv.Cmp(ov) < 0
		}
		w.constraint(path, tighter, "%s %s → %s", b.name, text(ov), text(nv))
	}
	if om, nm := num(o.MultipleOf), num(n.MultipleOf); (om == nil) != (nm == nil) || (om != nil && om.Cmp(nm) != 0) {
		w.constraint(path, nm != nil, "multipleOf %s → %s", text(om), text(nm))
	}
	if o.Pattern != n.Pattern {
		w.constraint(path, n.Pattern != "", "pattern %q → %q", o.Pattern, n.Pattern)
	}
	if o.UniqueItems != n.UniqueItems {
		w.constraint(path, n.UniqueItems, "uniqueItems %v → %v", o.UniqueItems, n.UniqueItems)
	}
	closed := func(s *air.Schema) bool {
		return s.AdditionalProperties != nil && s.AdditionalProperties.Bool != nil && !*s.AdditionalProperties.Bool
	}
	if oc, nc := closed(o), closed(n); oc != nc && path != "" {
		w.constraint(path, nc, "additional properties %s", map[bool]string{true: "no longer allowed", false: "now allowed"}[nc])
	}
}

func (w *walker) properties(path string, o, n *air.Schema) {
	keys := make([]string, 0, len(o.Properties)+len(n.Properties))
	for k := range o.Properties {
		keys = append(keys, k)
	}
	for k := range n.Properties {
		if _, ok := o.Properties[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		op, inOld := o.Properties[k]
		np, inNew := n.Properties[k]
		oreq, nreq := slices.Contains(o.Required, k), slices.Contains(n.Required, k)
		p := join(path, k)
		switch {
		case !inNew && w.dir == input:
			w.add(InputRemoved, true, p, "removed")
		case !inNew:
			w.add(OutputPropertyRemoved, true, p, "removed")
		case !inOld && w.dir == input && nreq:
			w.add(InputRequiredAdded, true, p, "new required input")
		case !inOld && w.dir == input:
			w.add(InputAdded, false, p, "new optional input")
		case !inOld:
			w.add(OutputPropertyAdded, false, p, "new property")
		default:
			switch {
			case w.dir == input && !oreq && nreq:
				w.add(InputRequiredAdded, true, p, "now required")
			case w.dir == input && oreq && !nreq:
				w.add(InputConstraintLooser, false, p, "no longer required")
			case w.dir == output && oreq && !nreq:
				w.add(OutputConstraintLooser, true, p, "no longer always present")
			case w.dir == output && !oreq && nreq:
				w.add(OutputConstraintTighter, false, p, "now always present")
			}
			w.walk(p, op, np)
		}
	}
}

// composition compares oneOf/anyOf/allOf lists: pairwise when they have the
// same length, otherwise by how many alternatives there are.
func (w *walker) composition(path, word string, o, n []*air.Schema) {
	if len(o) == len(n) {
		for i := range o {
			w.walk(path, o[i], n[i])
		}
		return
	}
	// More oneOf/anyOf alternatives admit more values; more allOf parts fewer.
	more := len(n) > len(o)
	admitsMore := more != (word == "allOf")
	if w.dir == input {
		w.add(InputTypeChanged, !admitsMore, path, "%s has %d alternatives instead of %d (%s)", word, len(n), len(o), wider(!admitsMore))
	} else {
		w.add(OutputTypeChanged, admitsMore, path, "%s has %d alternatives instead of %d (%s)", word, len(n), len(o), wider(!admitsMore))
	}
}

func compact(r json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, r); err != nil {
		return string(r)
	}
	return b.String()
}

func sameJSON(a, b json.RawMessage) bool { return compact(a) == compact(b) }
