package manifest

import (
	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/runtime/air"
)

// ToJSON returns the manifest document data as JSON, the form its JSON
// Schema (schemas/anvil.manifest.schema.json) describes: YAML read the way
// Decode reads it (aliases and merge keys expanded within the same budget,
// '?' allowed in flow scalars), without interpreting any key. An empty
// document is JSON null. A document that cannot be read yields nil and
// manifest/parse_error or manifest/type diagnostics.
func ToJSON(file string, data []byte) ([]byte, diag.List) {
	d := &decoder{file: file}
	var out []byte
	func() {
		defer func() {
			if r := recover(); r != nil {
				out = nil
				d.diags.Errorf(diag.Pos{File: file, Line: 1}, CodeParseError, "the YAML document cannot be decoded")
			}
		}()
		root, ok := d.parse(data)
		if !ok {
			return
		}
		if root == nil {
			out = []byte("null")
			return
		}
		v, good := d.toAny(root, "")
		if !good || d.aborted {
			return
		}
		b, err := air.MarshalCompact(v)
		if err != nil {
			d.errorf(d.pos(root), CodeType, "the document cannot be written as JSON")
			return
		}
		out = b
	}()
	d.diags.Sort()
	if d.diags.HasErrors() {
		return nil, dedupe(d.diags)
	}
	return out, dedupe(d.diags)
}
