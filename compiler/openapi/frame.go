package openapi

import (
	"fmt"
	"slices"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// Frame returns the document-level parts of the description data (JSON
// or YAML, read with the loader's bounded parsers) as JSON: the version,
// info, servers (with host, basePath and schemes), the document's security
// requirement and the security schemes, with an empty "paths". Every
// member written starts on the line it had in data (newlines pad the
// JSON), so positions read from the frame are the description's own.
//
// It is what `anvil diff` gives libopenapi's what-changed model. A model of
// a whole description takes up to hundreds of times its size (1 GB for
// GitHub's pair, 13 MB each; 5.3 GB for a hostile 16 MB one), and even one
// with only the operations' parameters and responses, schemas and prose
// dropped, 30 times Stripe's: the operations are compared by Anvil's own
// code instead (the AIR contracts and diff.Surface), and libopenapi sees
// only this frame, whose size does not grow with the number of operations.
func Frame(name string, data []byte) ([]byte, error) {
	l := &loader{}
	root, fail := l.parse(name, data, true)
	if fail != nil {
		return nil, fail
	}
	keep(root, "openapi", "swagger", "info", "servers", "host", "basePath", "schemes", "security", "securityDefinitions", "components", "paths")
	if c := root.get("components"); c != nil {
		keep(c, "securitySchemes")
	}
	if p := root.member("paths"); p != nil {
		p.val = &node{kind: kObject, line: p.val.line}
	} else {
		root.kids = append(root.kids, member{key: "paths", val: &node{kind: kObject}})
	}
	w := skeletonWriter{line: 1, budget: 4*l.nodes + 1024}
	w.value(root)
	if w.budget < 0 {
		return nil, fmt.Errorf("%s: YAML aliases expand past %d nodes", name, 4*l.nodes+1024)
	}
	return append(w.b, '\n'), nil
}

// keep drops the members of an object node not named in keys.
func keep(n *node, keys ...string) {
	if n.kind != kObject {
		return
	}
	kept := n.kids[:0]
	for _, m := range n.kids {
		if slices.Contains(keys, m.key) {
			kept = append(kept, m)
		}
	}
	n.kids = kept
}

// skeletonWriter writes nodes as JSON, padding with newlines so that each
// member starts on its source line.
type skeletonWriter struct {
	b      []byte
	line   int32
	budget int
}

func (w *skeletonWriter) to(line int32) {
	for w.line < line {
		w.b = append(w.b, '\n')
		w.line++
	}
}

func (w *skeletonWriter) value(n *node) {
	if w.budget--; w.budget < 0 {
		return
	}
	switch n.kind {
	case kNull:
		w.b = append(w.b, "null"...)
	case kBool, kNumber:
		w.b = append(w.b, n.str...)
	case kString:
		w.b = canon.AppendString(w.b, n.str)
	case kArray:
		w.b = append(w.b, '[')
		for i := range n.kids {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.to(n.kids[i].val.line)
			w.value(n.kids[i].val)
		}
		w.b = append(w.b, ']')
	default:
		w.b = append(w.b, '{')
		for i := range n.kids {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.to(n.kids[i].line)
			w.b = canon.AppendString(w.b, n.kids[i].key)
			w.b = append(w.b, ':')
			w.value(n.kids[i].val)
		}
		w.b = append(w.b, '}')
	}
}
