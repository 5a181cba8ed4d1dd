package lock

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/runtime/air"
)

// A v2 lock stores each named schema its approvals reach once, in the
// lock's "schemas", and each entry's contract without them: no "defs",
// and its input's "$defs" without the entries that are those schemas (the
// input keeps its "$ref": "#/$defs/<name>" references). Reading an entry
// gives it back whole (restore): the input's $defs are what the input
// reaches, as AIR links them (air.DefsClosure: its references, and the
// references of what they name, resolved first in the $defs it kept and
// then in the lock's schemas), and the contract's defs are its
// diff.Contract.Closure over the lock's schemas. The fingerprint is that
// whole contract's, as in v1, so an approval keeps its fingerprint from
// v1 to v2.
//
// An entry whose named schemas cannot be shared is written whole, as in
// v1 (its contract carries "defs"): one that reaches a name whose schema
// differs from the lock's (an approval recorded against an older spec),
// or whose input $defs the rule above would not give back.

// restore returns c with its input's $defs given back from table and
// table as its Defs (diff.Contract.Closure trims it), and the names it
// took from table for the input.
func (e *encoder) restore(c *diff.Contract, table map[string]*air.Schema) (*diff.Contract, []string) {
	out := *c
	out.Defs = table
	var used []string
	if in := c.Input; in != nil && in.Ref == "" && in.Bool == nil {
		var defs map[string]*air.Schema
		defs, used = e.inputDefs(in, table)
		if len(used) > 0 {
			cp := *in
			cp.Defs = defs
			out.Input = &cp
		}
	}
	return &out, used
}

// restore is encoder.restore with its Defs trimmed to the closure: the
// self-contained contract (nil when c is).
func restore(c *diff.Contract, table map[string]*air.Schema) *diff.Contract {
	if c == nil {
		return nil
	}
	full, _ := newEncoder(nil).restore(c, table)
	return full.Closure()
}

// inputDefs returns the $defs of the input schema in as a lock entry
// gives them back (air.DefsClosure over table, as AIR links them), and
// the names among them that are table's.
func (e *encoder) inputDefs(in *air.Schema, table map[string]*air.Schema) (map[string]*air.Schema, []string) {
	out := air.DefsClosure(in, table, e.defRefs)
	var used []string
	for n := range out {
		if _, own := in.Defs[n]; !own {
			used = append(used, n)
		}
	}
	return out, used
}

// resolveDef finds the schema a $defs name stands for, as air's linker
// does: the input's own entry, else table's, trying the name as written
// and then JSON Pointer unescaped. shared says it is table's.
func resolveDef(ref string, own, table map[string]*air.Schema) (string, *air.Schema, bool) {
	for _, n := range []string{ref, air.UnescapePointer(ref)} {
		if s := own[n]; s != nil {
			return n, s, false
		}
		if s := table[n]; s != nil {
			return n, s, true
		}
	}
	return ref, nil, false
}

// split is how a v2 lock writes the whole contract c (its Defs the table
// its references resolve in): the names of the schemas it shares and the
// input $defs entries it leaves out for them (elide). ok is false when
// the input's $defs would not come back from the shared schemas, and
// the contract must be written whole.
func (e *encoder) split(c *diff.Contract) (shared map[string]*air.Schema, elide map[string]bool, ok bool, err error) {
	shared = map[string]*air.Schema{}
	for _, n := range e.closure(c) {
		shared[n] = c.Defs[n]
	}
	in := c.Input
	if in == nil || len(in.Defs) == 0 || in.Ref != "" || in.Bool != nil {
		return shared, nil, true, nil
	}
	elide = map[string]bool{}
	kept := map[string]*air.Schema{}
	for n, s := range in.Defs {
		same, err := e.sameSchema(s, c.Defs[n])
		if err != nil {
			return nil, nil, false, err
		}
		if same {
			elide[n] = true
			shared[n] = c.Defs[n]
		} else {
			kept[n] = s
		}
	}
	if len(elide) == 0 {
		return shared, nil, true, nil
	}
	trimmed := *in
	trimmed.Defs = kept
	back, _ := e.inputDefs(&trimmed, shared)
	if len(back) != len(in.Defs) {
		return shared, nil, false, nil
	}
	for n, s := range back {
		if orig, ok := in.Defs[n]; !ok || (s != orig && !elide[n]) {
			return shared, nil, false, nil
		}
	}
	return shared, elide, true, nil
}

// sameSchema reports whether a and b have one canonical form.
func (e *encoder) sameSchema(a, b *air.Schema) (bool, error) {
	if a == nil || b == nil {
		return false, nil
	}
	if a == b {
		return true, nil
	}
	x, err := e.compactSchema(a)
	if err != nil {
		return false, err
	}
	y, err := e.compactSchema(b)
	return bytes.Equal(x, y), err
}

// verify checks a loaded lock: each entry complete, its fingerprint that
// of its whole contract, and in a v2 lock every shared schema reached by
// some entry. It links each v2 entry that leaves its schemas out to the
// lock's schemas.
func (l *Lock) verify() error {
	for _, name := range slices.Sorted(maps.Keys(l.Schemas)) {
		if l.Schemas[name] == nil {
			return fmt.Errorf("schemas[%q] is null", name)
		}
	}
	enc := newEncoder(nil)
	reached := map[string]bool{}
	for i := range l.Approvals {
		e := &l.Approvals[i]
		c := e.Contract
		if e.Operation == "" || c == nil || e.Method != c.Method || e.Path != c.Path {
			return fmt.Errorf("the entry for %q is incomplete or its fingerprint does not match its contract (edited by hand?)", e.Operation)
		}
		if l.Schema == SchemaV1 || c.Defs != nil {
			if e.Fingerprint != Fingerprint(c) {
				return fmt.Errorf("the entry for %q: its fingerprint does not match its contract (edited by hand?)", e.Operation)
			}
			continue
		}
		e.table = l.Schemas
		if e.table == nil {
			e.table = map[string]*air.Schema{}
		}
		full, used := enc.restore(c, e.table)
		names := enc.closure(full)
		var fp string
		if layoutHolds {
			pieces, err := enc.piecesOf(full, nil, names)
			if err != nil {
				return fmt.Errorf("the entry for %q: %v", e.Operation, err)
			}
			fp = fingerprintOf(pieces)
		} else {
			fp = Fingerprint(full.Closure())
		}
		if fp != e.Fingerprint {
			if missing := enc.dangling(full); missing != "" {
				return fmt.Errorf("the entry for %q refers to the schema %q, which the lock's schemas lack (edited by hand?)", e.Operation, missing)
			}
			return fmt.Errorf("the entry for %q: its fingerprint does not match its contract (edited by hand?)", e.Operation)
		}
		for _, n := range slices.Concat(used, names) {
			reached[n] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(l.Schemas)) {
		if !reached[name] {
			return fmt.Errorf("schemas[%q] is reached by no approval (edited by hand?)", name)
		}
	}
	return nil
}

// dangling returns a name c's schemas refer to through "#/$defs/" that
// neither its input's $defs nor its Defs hold, or "".
func (e *encoder) dangling(c *diff.Contract) string {
	var refs []string
	refs = e.walkRefs(refs, c.Input)
	refs = e.walkRefs(refs, c.Output)
	for _, n := range e.closure(c) {
		refs = append(refs, e.deepRefs(c.Defs[n])...)
	}
	for _, r := range refs {
		var own map[string]*air.Schema
		if c.Input != nil {
			own = c.Input.Defs
		}
		if _, s, _ := resolveDef(r, own, c.Defs); s == nil {
			return r
		}
	}
	return ""
}
