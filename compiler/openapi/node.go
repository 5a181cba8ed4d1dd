package openapi

import (
	"strconv"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

func (k kind) String() string {
	switch k {
	case kNull:
		return "null"
	case kBool:
		return "a boolean"
	case kNumber:
		return "a number"
	case kString:
		return "a string"
	case kArray:
		return "a list"
	case kObject:
		return "an object"
	}
	return "unknown"
}

// node is one value of a parsed document, JSON or YAML, with its position.
// Scalars keep their text in str: the string itself, a JSON number literal,
// or "true"/"false". Arrays and objects keep their members in kids (array
// members have an empty key and no key position).
type node struct {
	kind kind
	line int32
	col  int32
	str  string
	kids []member
}

// member is one entry of an object (or an array, with key unset).
type member struct {
	key     string
	line    int32
	col     int32
	val     *node
	written bool // the key was written in the source (always, for objects)
}

// get returns the value of key in an object node, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kObject {
		return nil
	}
	for i := range n.kids {
		if n.kids[i].key == key {
			return n.kids[i].val
		}
	}
	return nil
}

// member returns the member of key in an object node, or nil.
func (n *node) member(key string) *member {
	if n == nil || n.kind != kObject {
		return nil
	}
	for i := range n.kids {
		if n.kids[i].key == key {
			return &n.kids[i]
		}
	}
	return nil
}

// text returns a scalar's text, or "" for containers and null.
func (n *node) text() string {
	if n == nil || n.kind == kNull || n.kind == kArray || n.kind == kObject {
		return ""
	}
	return n.str
}

// isTrue reports whether n is the boolean true.
func (n *node) isTrue() bool {
	return n != nil && n.kind == kBool && n.str == "true"
}

// nodeAlloc hands out nodes from slabs, to keep allocations few.
type nodeAlloc struct {
	slab  []node
	count int
}

func (a *nodeAlloc) new() *node {
	a.count++
	if len(a.slab) == 0 {
		a.slab = make([]node, 512)
	}
	n := &a.slab[0]
	a.slab = a.slab[1:]
	return n
}

// appendJSON appends n as compact JSON. It stops (returning ok=false) once
// budget runs out, which bounds the work that aliased YAML could cause.
func appendJSON(b []byte, n *node, budget *int) ([]byte, bool) {
	*budget--
	if *budget < 0 {
		return b, false
	}
	switch n.kind {
	case kNull:
		return append(b, "null"...), true
	case kBool, kNumber:
		return append(b, n.str...), true
	case kString:
		return canon.AppendString(b, n.str), true
	case kArray:
		b = append(b, '[')
		for i := range n.kids {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJSON(b, n.kids[i].val, budget); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	default:
		b = append(b, '{')
		for i := range n.kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = canon.AppendString(b, n.kids[i].key)
			b = append(b, ':')
			var ok bool
			if b, ok = appendJSON(b, n.kids[i].val, budget); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
}

// quote quotes s for a message.
func quote(s string) string { return strconv.Quote(s) }
