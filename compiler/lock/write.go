package lock

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/runtime/air"
)

// write streams the lock's canonical bytes (air.Marshal's: indented
// JSON, then a newline) to w one entry at a time, so a lock of tens of
// thousands of operations is never whole in memory. It always writes v3
// (shared.go; an entry loaded from v1 or v2 keeps having no names until it
// is approved again): a first pass picks the named schemas the lock shares, the
// second writes each entry without them and then each of them once. It
// stops with ctx's error when ctx ends.
func (l *Lock) write(ctx context.Context, w io.Writer) error {
	l.Schema = Schema
	if l.Approvals == nil {
		l.Approvals = []Entry{}
	}
	enc := newEncoder(nil)
	table, whole, err := l.share(ctx, enc)
	if err != nil {
		return err
	}
	head, err := air.MarshalCompact(Lock{Schema: Schema, Approvals: []Entry{}})
	if err != nil {
		return err
	}
	if !bytes.HasSuffix(head, []byte("[]}")) {
		return fmt.Errorf("lock: unexpected lock encoding %s", head)
	}
	ind := newIndenter(w)
	ind.write(head[:len(head)-2])
	for i, e := range l.Approvals {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i > 0 {
			ind.write([]byte{','})
		}
		pieces, err := e.pieces(enc, whole[i])
		if err != nil {
			return err
		}
		for _, p := range pieces {
			ind.piece(p)
		}
		if err := ind.flush(1 << 16); err != nil {
			return err
		}
	}
	ind.write([]byte("]"))
	if len(table) > 0 {
		ind.write([]byte(`,"schemas":{`))
		for i, name := range slices.Sorted(maps.Keys(table)) {
			ind.write(enc.key(enc.keys, name, i == 0, false))
			p, err := enc.def(nil, table[name])
			if err != nil {
				return err
			}
			ind.piece(p[0])
			if err := ind.flush(1 << 16); err != nil {
				return err
			}
		}
		ind.write([]byte("}"))
	}
	ind.write([]byte("}"))
	ind.buf = append(ind.buf, '\n')
	return ind.flush(0)
}

// whole is the entry's contract with its named schemas resolvable: c.Defs
// is the table its references resolve in (the document's schemas, the
// lock's, or its own defs).
func (e Entry) whole(enc *encoder) *diff.Contract {
	switch {
	case e.op != nil:
		return diff.ContractOf(e.enc.doc, e.op)
	case e.table != nil:
		c, _ := enc.restore(e.Contract, e.table)
		return c
	}
	return e.Contract
}

// share picks the named schemas the lock stores once: each entry's, in
// the order entries recorded now, entries that shared them when loaded,
// entries written whole (v1 ones), each in operation order; an entry
// reaching a name whose schema differs from the one already picked is
// written whole (whole[i]), as is one whose input split refuses.
func (l *Lock) share(ctx context.Context, enc *encoder) (map[string]*air.Schema, []bool, error) {
	table := map[string]*air.Schema{}
	whole := make([]bool, len(l.Approvals))
	rank := func(e Entry) int {
		switch {
		case e.op != nil:
			return 0
		case e.table != nil:
			return 1
		}
		return 2
	}
	for r := range 3 {
		for i, e := range l.Approvals {
			if rank(e) != r {
				continue
			}
			if i%256 == 0 && ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if !layoutHolds {
				whole[i] = true
				continue
			}
			shared, _, ok, err := enc.split(e.whole(enc))
			if err != nil {
				return nil, nil, err
			}
			for n, s := range shared {
				if !ok {
					break
				}
				if t, in := table[n]; in {
					if ok, err = enc.sameSchema(s, t); err != nil {
						return nil, nil, err
					}
				}
			}
			if !ok {
				whole[i] = true
				continue
			}
			for n, s := range shared {
				if _, in := table[n]; !in {
					table[n] = s
				}
			}
		}
	}
	// An entry must read back the same against the whole table: a
	// reference its own schemas left dangling must not find another
	// entry's schema. One that would is written whole, and the table
	// keeps only what the shared entries reach (they reach the same
	// names in it, so they still read back the same).
	demoted := false
	for i, e := range l.Approvals {
		if whole[i] {
			continue
		}
		c := *e.whole(enc)
		own, _, _, err := enc.split(&c)
		if err != nil {
			return nil, nil, err
		}
		c.Defs = table
		all, _, ok, err := enc.split(&c)
		if err != nil {
			return nil, nil, err
		}
		if !ok || len(all) != len(own) {
			whole[i], demoted = true, true
		}
	}
	if demoted {
		kept := map[string]*air.Schema{}
		for i, e := range l.Approvals {
			if !whole[i] {
				own, _, _, _ := enc.split(e.whole(enc))
				for n := range own {
					kept[n] = table[n]
				}
			}
		}
		table = kept
	}
	return table, whole, nil
}

// pieces is the entry's compact JSON: its contract whole, or without the
// named schemas the lock shares.
func (e Entry) pieces(enc *encoder, whole bool) ([]piece, error) {
	if !layoutHolds {
		b, err := air.MarshalCompact(Entry{Operation: e.Operation, Method: e.Method, Path: e.Path, Names: e.Names, Fingerprint: e.Fingerprint, Contract: e.contract()})
		return []piece{{b: b}}, err
	}
	c := e.whole(enc)
	var elide map[string]bool
	if !whole {
		_, el, ok, err := enc.split(c)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("lock: the contract of %s cannot be split", e.Operation)
		}
		elide = el
	}
	p, err := enc.pieces(c, elide, whole)
	if err != nil {
		return nil, err
	}
	if whole && len(enc.closure(c)) == 0 {
		// "defs" marks an entry written whole; the fingerprint leaves an
		// empty one out (omitempty), as it does for every contract.
		last := p[len(p)-1]
		p = append(p[:len(p)-1], piece{b: []byte(`,"defs":{}`)}, last)
	}
	return entry(e, p)
}

// WriteFile writes the lock to path atomically: into a temporary file
// beside it, renamed over path only once complete, so neither an error
// nor ctx ending midway leaves a partial lock.
func (l *Lock) WriteFile(ctx context.Context, path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := l.write(ctx, tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// indenter streams indented JSON to w: air.Indenter's indentation (as
// air.Marshal indents, to every depth) over runs written to it, buffered.
type indenter struct {
	w   io.Writer
	buf []byte
	at  air.Indenter
	// cache holds a shared schema's indented form from an indenter state:
	// every copy of a named schema in a lock is indented alike.
	cache map[indentKey]indented
}

// indented is a run's indented bytes and the state they leave.
type indented struct {
	b   []byte
	end air.Indenter
}

func newIndenter(w io.Writer) *indenter {
	return &indenter{w: w, at: air.Indenter{MaxDepth: air.IndentAll}, cache: map[indentKey]indented{}}
}

// piece writes p, a shared schema's whole value from the cache.
func (ind *indenter) piece(p piece) {
	if p.def == nil {
		ind.write(p.b)
		return
	}
	k := indentKey{p.def, ind.at}
	c, ok := ind.cache[k]
	if !ok {
		sub := ind.at
		c = indented{b: sub.Append(nil, p.b), end: sub}
		ind.cache[k] = c
	}
	ind.buf = append(ind.buf, c.b...)
	ind.at = c.end
}

func (ind *indenter) write(src []byte) { ind.buf = ind.at.Append(ind.buf, src) }

// flush writes the buffered bytes once there are more than keep.
func (ind *indenter) flush(keep int) error {
	if len(ind.buf) <= keep {
		return nil
	}
	_, err := ind.w.Write(ind.buf)
	ind.buf = ind.buf[:0]
	return err
}
