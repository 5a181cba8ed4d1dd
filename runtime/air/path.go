package air

import (
	"fmt"
	"strconv"
)

// Path roots of effect argument sources.
const (
	RootRequest        = "request"
	RootResponse       = "response"
	RootIdempotencyKey = "idempotency_key"
)

// Segment is one step of a path: a property name or a list index.
type Segment struct {
	Name  string // set for a name segment
	Index int    // used when IsIndex
	// IsIndex marks an [n] segment.
	IsIndex bool
}

// Path is a parsed argument source path such as response.items[0].id.
type Path struct {
	Root     string
	Segments []Segment
	Optional bool // a trailing "?"
}

// String renders the path back in its source grammar.
func (p Path) String() string {
	s := p.Root
	for _, seg := range p.Segments {
		if seg.IsIndex {
			s += "[" + strconv.Itoa(seg.Index) + "]"
		} else {
			s += "." + seg.Name
		}
	}
	if p.Optional {
		s += "?"
	}
	return s
}

func isNameStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
}

func isNameChar(c byte) bool {
	return isNameStart(c) || c == '-' || (c >= '0' && c <= '9')
}

// ParsePath parses a root followed by any mix of .name and [n] segments, with
// an optional trailing "?". Names match [A-Za-z_$][A-Za-z0-9_$-]*.
// idempotency_key takes no segments; request and response need at least one.
func ParsePath(s string) (Path, error) {
	var p Path
	if len(s) > 0 && s[len(s)-1] == '?' {
		p.Optional = true
		s = s[:len(s)-1]
	}
	i := 0
	for i < len(s) && isNameChar(s[i]) {
		i++
	}
	p.Root = s[:i]
	switch p.Root {
	case RootRequest, RootResponse, RootIdempotencyKey:
	case "":
		return Path{}, fmt.Errorf("path %q has no root", s)
	default:
		return Path{}, fmt.Errorf("path %q has unknown root %q (want request, response or idempotency_key)", s, p.Root)
	}
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			j := i
			if j >= len(s) || !isNameStart(s[j]) {
				return Path{}, fmt.Errorf("path %q: expected a name at offset %d", s, i)
			}
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			p.Segments = append(p.Segments, Segment{Name: s[i:j]})
			i = j
		case '[':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i+1 || j >= len(s) || s[j] != ']' {
				return Path{}, fmt.Errorf("path %q: expected [n] at offset %d", s, i)
			}
			n, err := strconv.Atoi(s[i+1 : j])
			if err != nil {
				return Path{}, fmt.Errorf("path %q: index out of range", s)
			}
			p.Segments = append(p.Segments, Segment{Index: n, IsIndex: true})
			i = j + 1
		default:
			return Path{}, fmt.Errorf("path %q: unexpected %q at offset %d", s, s[i], i)
		}
	}
	if p.Root == RootIdempotencyKey && len(p.Segments) > 0 {
		return Path{}, fmt.Errorf("path %q: idempotency_key takes no segments", s)
	}
	if p.Root != RootIdempotencyKey && len(p.Segments) == 0 {
		return Path{}, fmt.Errorf("path %q: %s needs at least one segment", s, p.Root)
	}
	return p, nil
}

// Lookup follows the path's segments through a decoded JSON value (maps,
// slices, scalars as produced by encoding/json) and reports whether it names
// a non-null value.
func (p Path) Lookup(root any) (any, bool) {
	cur := root
	for _, seg := range p.Segments {
		if seg.IsIndex {
			l, ok := cur.([]any)
			if !ok || seg.Index < 0 || seg.Index >= len(l) {
				return nil, false
			}
			cur = l[seg.Index]
		} else {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			v, ok := m[seg.Name]
			if !ok {
				return nil, false
			}
			cur = v
		}
	}
	if cur == nil {
		return nil, false
	}
	return cur, true
}
