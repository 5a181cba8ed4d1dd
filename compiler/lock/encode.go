package lock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/canon"
)

// encoder writes the canonical contracts of one document's operations
// without building them. A contract carries every named schema its
// operation reaches, and its fingerprint covers them all, so
// fingerprinting every operation of Microsoft Graph beta hashes about a
// million copies of named schemas. Building each contract (canonical)
// copies those schemas and encodes them again, operation after operation;
// the encoder instead encodes each named schema once, without its
// documentation, and assembles a contract's bytes from those pieces, byte
// for byte what air.MarshalCompact writes for canonical(doc, op)
// (TestEncoderMatchesCanonical). The same pieces, less the named schemas,
// are a v2 lock entry (shared.go).
type encoder struct {
	doc *air.Document
	// refs caches the names a shared schema (a named schema or a $defs
	// entry) refers to, anywhere below it (deepRefs).
	refs map[*air.Schema][]string
	// defRefs keeps the references air.DefsClosure walks, across the
	// entries whose input $defs are rebuilt.
	defRefs *air.RefCache
	// compact caches a shared schema's JSON without its documentation.
	compact map[*air.Schema][]byte
	// keys caches ',' and a name as a map key and ':', as encoding/json
	// writes a key of the contract's defs (plain) and the schema encoder
	// one of $defs (HTML characters escaped).
	keys, htmlKeys map[string][]byte
}

// indentKey names a shared schema's indented form from an indenter state.
type indentKey struct {
	s  *air.Schema
	at air.Indenter
}

func newEncoder(doc *air.Document) *encoder {
	return &encoder{doc: doc, refs: map[*air.Schema][]string{}, defRefs: air.NewRefCache(), compact: map[*air.Schema][]byte{},
		keys: map[string][]byte{}, htmlKeys: map[string][]byte{}}
}

// piece is a run of a contract's compact JSON: literal bytes, or, when def
// is set, the whole JSON value of that shared schema (b is its compact
// form), which the indenting writer takes from its cache.
type piece struct {
	b   []byte
	def *air.Schema
}

// contractLayout is the JSON member order of diff.Contract that contract
// assembles around: the input goes right after method and path, and the
// defs come last. Another order makes the encoder fall back to encoding
// the built contract.
var contractLayout = []string{"method", "path", "input", "status", "output", "auth", "effectClass", "undo", "confirmation", "defs"}

// layoutHolds reports whether diff.Contract still has contractLayout.
var layoutHolds = func() bool {
	t := reflect.TypeOf(diff.Contract{})
	var names []string
	for i := 0; i < t.NumField(); i++ {
		names = append(names, strings.Split(t.Field(i).Tag.Get("json"), ",")[0])
	}
	return slices.Equal(names, contractLayout)
}()

// contract returns the compact JSON of canonical(doc, op) as pieces.
func (e *encoder) contract(op *air.Operation) ([]piece, error) {
	c := diff.ContractOf(e.doc, op)
	if !layoutHolds {
		b, err := air.MarshalCompact(canonical(e.doc, op))
		return []piece{{b: b}}, err
	}
	return e.pieces(c, nil, true)
}

// pieces returns the compact JSON of c's canonical form as pieces: c's
// Defs is the table its references resolve in (a document's named
// schemas, or a lock's), and its input's $defs are written but for the
// names in elide; with defs, the named schemas c reaches follow as
// "defs" (the self-contained contract), else they are left out (a v2
// lock entry, whose named schemas the lock stores once).
func (e *encoder) pieces(c *diff.Contract, elide map[string]bool, defs bool) ([]piece, error) {
	var names []string
	if defs {
		names = e.closure(c)
	}
	return e.piecesOf(c, elide, names)
}

// piecesOf is pieces with the names of the named schemas c reaches
// (closure) given, nil to leave them out.
func (e *encoder) piecesOf(c *diff.Contract, elide map[string]bool, names []string) ([]piece, error) {
	memo := map[*air.Schema]*air.Schema{}
	shell := *c
	shell.Input, shell.Defs = nil, nil
	shell.Output = withoutDocs(c.Output, memo)
	sb, err := air.MarshalCompact(&shell)
	if err != nil {
		return nil, err
	}
	method, _ := air.MarshalCompact(c.Method)
	path, _ := air.MarshalCompact(c.Path)
	head := slices.Concat([]byte(`{"method":`), method, []byte(`,"path":`), path)
	if !bytes.HasPrefix(sb, head) || len(sb) < len(head)+2 || sb[len(head)] != ',' || sb[len(sb)-1] != '}' {
		return nil, fmt.Errorf("lock: unexpected contract encoding %.80s", sb)
	}
	out := []piece{{b: head}}
	if c.Input != nil {
		out = append(out, piece{b: []byte(`,"input":`)})
		if out, err = e.input(out, c.Input, elide, memo); err != nil {
			return nil, err
		}
	}
	out = append(out, piece{b: sb[len(head) : len(sb)-1]})
	if len(names) > 0 {
		out = append(out, piece{b: []byte(`,"defs":{`)})
		for i, name := range names {
			out = append(out, piece{b: e.key(e.keys, name, i == 0, false)})
			if out, err = e.def(out, c.Defs[name]); err != nil {
				return nil, err
			}
		}
		out = append(out, piece{b: []byte{'}'}})
	}
	return append(out, piece{b: []byte{'}'}}), nil
}

// input appends the pieces of the contract's input schema without its
// documentation: its $defs (the named schemas it reaches, shared) from the
// cache, but for the names in elide, and the rest encoded here.
func (e *encoder) input(out []piece, in *air.Schema, elide map[string]bool, memo map[*air.Schema]*air.Schema) ([]piece, error) {
	if len(in.Defs) == 0 || in.Ref != "" || in.Bool != nil {
		b, err := air.MarshalCompact(withoutDocs(in, memo))
		return append(out, piece{b: b}), err
	}
	shell := *in
	shell.Defs = nil
	rest, err := air.MarshalCompact(withoutDocs(&shell, memo))
	if err != nil {
		return nil, err
	}
	first := true
	for _, name := range slices.Sorted(maps.Keys(in.Defs)) {
		if elide[name] {
			continue
		}
		if first {
			out = append(out, piece{b: []byte(`{"$defs":{`)})
		}
		out = append(out, piece{b: e.key(e.htmlKeys, name, first, true)})
		first = false
		if out, err = e.def(out, in.Defs[name]); err != nil {
			return nil, err
		}
	}
	if first { // every entry elided
		return append(out, piece{b: rest}), nil
	}
	if len(rest) > 2 {
		return append(out, piece{b: slices.Concat([]byte("},"), rest[1:])}), nil
	}
	return append(out, piece{b: []byte("}}")}), nil
}

// compactSchema is s's JSON without its documentation, encoded once.
func (e *encoder) compactSchema(s *air.Schema) ([]byte, error) {
	b, ok := e.compact[s]
	if !ok {
		var err error
		if b, err = withoutDocs(s, map[*air.Schema]*air.Schema{}).MarshalJSON(); err != nil {
			return nil, err
		}
		e.compact[s] = b
	}
	return b, nil
}

// def appends the piece of a shared schema, encoded once.
func (e *encoder) def(out []piece, s *air.Schema) ([]piece, error) {
	if s == nil {
		return append(out, piece{b: []byte("null")}), nil
	}
	b, err := e.compactSchema(s)
	if err != nil {
		return nil, err
	}
	return append(out, piece{b: b, def: s}), nil
}

// key returns `,"name":` (without the comma for the first member) from
// cache, the name escaped as the schema encoder writes it when html, else
// as encoding/json writes a map key with HTML escaping off.
func (e *encoder) key(cache map[string][]byte, name string, first, html bool) []byte {
	k, ok := cache[name]
	if !ok {
		k = []byte{','}
		if html {
			k = canon.AppendStringHTML(k, name)
		} else {
			q, _ := air.MarshalCompact(name)
			k = append(k, q...)
		}
		k = append(k, ':')
		cache[name] = k
	}
	if first {
		return k[1:]
	}
	return k
}

// closure lists, sorted, the names of c.Defs (the document's schemas, or
// a lock's) that diff.Contract.Closure would give c: those its input and output refer
// to, and those these refer to, and so on.
func (e *encoder) closure(c *diff.Contract) []string {
	var queue []string
	queue = e.walkRefs(queue, c.Input)
	queue = e.walkRefs(queue, c.Output)
	seen := map[string]bool{}
	var names []string
	for len(queue) > 0 {
		name := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if seen[name] {
			continue
		}
		d := c.Defs[name]
		if d == nil {
			continue
		}
		seen[name] = true
		names = append(names, name)
		queue = append(queue, e.deepRefs(d)...)
	}
	slices.Sort(names)
	return names
}

// deepRefs is walkRefs of a shared schema, cached.
func (e *encoder) deepRefs(s *air.Schema) []string {
	if r, ok := e.refs[s]; ok {
		return r
	}
	r := slices.Clip(e.walkRefs(nil, s))
	e.refs[s] = r
	return r
}

// walkRefs appends the names of the "#/$defs/" references in s and below
// it, its $defs entries' included (as Closure visits them), without
// following the references.
func (e *encoder) walkRefs(names []string, s *air.Schema) []string {
	if s == nil {
		return names
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
		names = append(names, name)
	}
	for _, d := range s.Defs {
		if d != nil {
			names = append(names, e.deepRefs(d)...)
		}
	}
	s.EachChild(func(x *air.Schema) { names = e.walkRefs(names, x) })
	return names
}

// entry returns the compact pieces of a lock entry whose contract is the
// pieces c.
func entry(e Entry, c []piece) ([]piece, error) {
	env, err := air.MarshalCompact(Entry{Operation: e.Operation, Method: e.Method, Path: e.Path, Names: e.Names, Fingerprint: e.Fingerprint})
	if err != nil {
		return nil, err
	}
	const tail = `"contract":null}`
	if !bytes.HasSuffix(env, []byte(tail)) {
		return nil, fmt.Errorf("lock: unexpected entry encoding %.80s", env)
	}
	out := make([]piece, 0, len(c)+2)
	out = append(out, piece{b: env[:len(env)-len("null}")]})
	out = append(out, c...)
	return append(out, piece{b: []byte{'}'}}), nil
}

// fingerprintOf is Fingerprint of the contract whose compact pieces are c.
func fingerprintOf(c []piece) string {
	h := sha256.New()
	for _, p := range c {
		h.Write(p.b)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// compactOf joins pieces.
func compactOf(c []piece) []byte {
	var b []byte
	for _, p := range c {
		b = append(b, p.b...)
	}
	return b
}
