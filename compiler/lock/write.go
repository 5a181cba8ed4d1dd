package lock

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/anvil-dev/anvil/runtime/air"
)

// write streams the lock's canonical bytes (air.Marshal's: indented
// JSON, then a newline) to w one entry at a time, so a lock of tens of
// thousands of operations is never whole in memory. It stops with ctx's
// error when ctx ends.
func (l *Lock) write(ctx context.Context, w io.Writer) error {
	l.Schema = Schema
	if l.Approvals == nil {
		l.Approvals = []Entry{}
	}
	head, err := air.MarshalCompact(Lock{Schema: Schema, Approvals: []Entry{}})
	if err != nil {
		return err
	}
	if !bytes.HasSuffix(head, []byte("[]}")) {
		return fmt.Errorf("lock: unexpected lock encoding %s", head)
	}
	ind := &indenter{w: w, cache: map[indentKey][]byte{}}
	ind.write(head[:len(head)-2])
	for i, e := range l.Approvals {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i > 0 {
			ind.write([]byte{','})
		}
		pieces, err := e.pieces()
		if err != nil {
			return err
		}
		l.Approvals[i].c = nil // written: held no longer
		for _, p := range pieces {
			ind.piece(p)
		}
		if err := ind.flush(1 << 16); err != nil {
			return err
		}
	}
	ind.write([]byte("]}"))
	ind.buf = append(ind.buf, '\n')
	return ind.flush(0)
}

// pieces is the entry's compact JSON: encoded from the document when
// Record made it, else from its stored contract.
func (e Entry) pieces() ([]piece, error) {
	if e.op == nil {
		b, err := air.MarshalCompact(e)
		return []piece{{b: b}}, err
	}
	c := e.c
	if c == nil {
		var err error
		if c, err = e.enc.contract(e.op); err != nil {
			return nil, err
		}
	}
	return entry(e.Operation, e.op, e.Fingerprint, c)
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

// indenter indents compact JSON written to it in runs, as air.Marshal
// indents (two spaces, no prefix, empty objects and arrays kept as {} and
// []); a run may end anywhere, even inside a string.
type indenter struct {
	w     io.Writer
	buf   []byte
	depth int
	open  bool // just after { or [: the line break waits for a first member
	inStr bool // inside a string
	esc   bool // inside a string, just after a backslash
	// cache holds a shared schema's indented form at a depth: every copy
	// of a named schema in a lock is indented alike.
	cache map[indentKey][]byte
}

// piece writes p, a shared schema's whole value from the cache.
func (ind *indenter) piece(p piece) {
	if p.def == nil || ind.open || ind.inStr || ind.cache == nil {
		ind.write(p.b)
		return
	}
	k := indentKey{p.def, ind.depth}
	b, ok := ind.cache[k]
	if !ok {
		sub := &indenter{depth: ind.depth}
		sub.write(p.b)
		b = sub.buf
		ind.cache[k] = b
	}
	ind.buf = append(ind.buf, b...)
}

func (ind *indenter) write(src []byte) {
	for i := 0; i < len(src); i++ {
		if ind.inStr {
			j := i
			for ; j < len(src); j++ {
				if ind.esc {
					ind.esc = false
				} else if src[j] == '\\' {
					ind.esc = true
				} else if src[j] == '"' {
					ind.inStr = false
					break
				}
			}
			j = min(j, len(src)-1)
			ind.buf = append(ind.buf, src[i:j+1]...)
			i = j
			continue
		}
		c := src[i]
		if ind.open && c != '}' && c != ']' {
			ind.open = false
			ind.depth++
			ind.newline()
		}
		switch c {
		case '"':
			ind.inStr = true
			ind.buf = append(ind.buf, c)
		case '{', '[':
			ind.open = true
			ind.buf = append(ind.buf, c)
		case ',':
			ind.buf = append(ind.buf, c)
			ind.newline()
		case ':':
			ind.buf = append(ind.buf, ':', ' ')
		case '}', ']':
			if ind.open {
				ind.open = false
			} else {
				ind.depth--
				ind.newline()
			}
			ind.buf = append(ind.buf, c)
		default:
			ind.buf = append(ind.buf, c)
		}
	}
}

func (ind *indenter) newline() {
	ind.buf = append(ind.buf, '\n')
	for range ind.depth {
		ind.buf = append(ind.buf, ' ', ' ')
	}
}

// flush writes the buffered bytes once there are more than keep.
func (ind *indenter) flush(keep int) error {
	if len(ind.buf) <= keep {
		return nil
	}
	_, err := ind.w.Write(ind.buf)
	ind.buf = ind.buf[:0]
	return err
}
