package gosdk

import (
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/naming"
	"github.com/anvil-dev/anvil/runtime/air"
)

// goType is a Go type for a schema and whether its zero value is nil (a
// slice, map or json.RawMessage), so that an optional one needs no pointer.
type goType struct {
	code   jen.Code
	nilish bool
	object bool // a generated struct: fields of it are pointers
}

// goTypes writes Go types for schemas and collects the struct types they
// need: each named schema once (by its name), each inline object under the
// name of where it appears.
type goTypes struct {
	doc   *air.Document
	taken map[string]bool   // the package's exported names
	names map[string]string // named schema → Go type
	want  []wanted
}

// wanted is a type declaration still to write.
type wanted struct {
	name         string
	root, schema *air.Schema
}

// maxDepth bounds nested schemas; deeper ones are json.RawMessage.
const maxDepth = 10

func raw() goType { return goType{code: jen.Qual("encoding/json", "RawMessage"), nilish: true} }

// refPrefixes are the reference forms AIR schemas use for named schemas.
var refPrefixes = []string{"#/$defs/", "#/components/schemas/", "#/definitions/", "#/schemas/"}

// named resolves a local reference against root's $defs, then the
// document's schemas.
func (g *goTypes) named(root *air.Schema, ref string) (*air.Schema, string) {
	for _, p := range refPrefixes {
		n, ok := strings.CutPrefix(ref, p)
		if !ok || n == "" || strings.Contains(n, "/") {
			continue
		}
		if root != nil && root.Defs[n] != nil {
			return root.Defs[n], n
		}
		if s := g.doc.Schemas[n]; s != nil {
			return s, n
		}
	}
	return nil, ""
}

// expr is the Go type of s (references resolved against root); ctx names
// an inline object's struct.
func (g *goTypes) expr(s, root *air.Schema, ctx string, depth int) jen.Code {
	return g.typeOf(s, root, ctx, depth).code
}

func (g *goTypes) typeOf(s, root *air.Schema, ctx string, depth int) goType {
	if s == nil || s.Bool != nil || depth > maxDepth {
		return raw()
	}
	if s.Ref != "" {
		t, n := g.named(root, s.Ref)
		if t == nil {
			return raw()
		}
		name, ok := g.names[n]
		if !ok {
			name = naming.Unique(naming.GoExported(naming.Pascal(n)), g.taken, "")
			g.names[n] = name
			r := root
			if root == nil || root.Defs[n] != t {
				r = t
			}
			g.want = append(g.want, wanted{name: name, root: r, schema: t})
		}
		inner := g.shape(t)
		return goType{code: jen.Id(name), nilish: inner.nilish, object: inner.object}
	}
	if len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0 {
		return raw()
	}
	t := mainType(s)
	switch t {
	case "string":
		return goType{code: jen.String()}
	case "integer":
		return goType{code: jen.Int64()}
	case "number":
		return goType{code: jen.Float64()}
	case "boolean":
		return goType{code: jen.Bool()}
	case "array":
		if s.Items == nil {
			return goType{code: jen.Index().Qual("encoding/json", "RawMessage"), nilish: true}
		}
		return goType{code: jen.Index().Add(g.typeOf(s.Items, root, ctx+"Item", depth+1).code), nilish: true}
	case "object":
		if len(s.Properties) == 0 {
			if ap := s.AdditionalProperties; ap != nil && ap.Bool == nil {
				return goType{code: jen.Map(jen.String()).Add(g.typeOf(ap, root, ctx+"Value", depth+1).code), nilish: true}
			}
			return goType{code: jen.Map(jen.String()).Any(), nilish: true}
		}
		name := naming.Unique(ctx, g.taken, "")
		g.want = append(g.want, wanted{name: name, root: root, schema: s})
		return goType{code: jen.Id(name), object: true}
	}
	return raw()
}

// shape is what kind of Go type a named schema becomes, without recording it.
func (g *goTypes) shape(s *air.Schema) goType {
	if s == nil || s.Bool != nil || s.Ref != "" || len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0 {
		return goType{nilish: s == nil || s.Ref == ""}
	}
	switch mainType(s) {
	case "array":
		return goType{nilish: true}
	case "object":
		if len(s.Properties) == 0 {
			return goType{nilish: true}
		}
		return goType{object: true}
	case "string", "integer", "number", "boolean":
		return goType{}
	}
	return goType{nilish: true}
}

// mainType is the one JSON type of s ("" when it has several or none that
// its keywords imply).
func mainType(s *air.Schema) string {
	var types []string
	for _, t := range s.Type {
		if t != "null" {
			types = append(types, t)
		}
	}
	switch {
	case len(types) == 1:
		return types[0]
	case len(types) > 1:
		return ""
	case len(s.Properties) > 0 || s.AdditionalProperties != nil:
		return "object"
	case s.Items != nil:
		return "array"
	case len(s.Enum) > 0:
		return emit.LiteralType(s.Enum[0])
	case len(s.Const) > 0:
		return emit.LiteralType(s.Const)
	}
	return ""
}

// optional is the type of an optional field of type t: a pointer, unless t
// is nil when absent already.
func optional(t jen.Code, s *air.Schema, g *goTypes) jen.Code {
	return g.optionalOf(goType{code: t, nilish: g.isNilish(s)})
}

func (g *goTypes) isNilish(s *air.Schema) bool {
	if s == nil || s.Bool != nil {
		return true
	}
	if s.Ref != "" {
		t, _ := g.named(nil, s.Ref)
		return t == nil || g.shape(t).nilish
	}
	return g.shape(s).nilish
}

func (g *goTypes) optionalOf(t goType) jen.Code {
	if t.nilish {
		return t.code
	}
	return jen.Op("*").Add(t.code)
}

// drain writes every wanted declaration (and the ones those need), in the
// order they were first wanted.
func (g *goTypes) drain(f *jen.File) {
	for i := 0; i < len(g.want); i++ {
		w := g.want[i]
		s := w.schema
		if mainType(s) != "object" || len(s.Properties) == 0 || s.Ref != "" {
			f.Comment(w.name + " is a type of the API's schemas.")
			f.Type().Id(w.name).Op("=").Add(g.typeOf(s, w.root, w.name, 1).code)
			continue
		}
		req := map[string]bool{}
		for _, r := range s.Required {
			req[r] = true
		}
		fields := []jen.Code{}
		used := map[string]bool{}
		for _, k := range sortedKeys(s.Properties) {
			p := s.Properties[k]
			fname := naming.Unique(naming.GoExported(k), used, "")
			t := g.typeOf(p, w.root, w.name+fname, 1)
			code, tag := t.code, k
			switch {
			case t.object:
				code = jen.Op("*").Add(t.code) // a struct field of a struct type is a pointer: schemas may recur
				tag += ",omitempty"
			case !req[k]:
				code = g.optionalOf(t)
				tag += ",omitempty"
			}
			if d := comment(description(p)); d != "" {
				fields = append(fields, jen.Comment(d))
			}
			fields = append(fields, jen.Id(fname).Add(code).Tag(map[string]string{"json": tag}))
		}
		if d := comment(description(s)); d != "" {
			f.Comment(w.name + ": " + d)
		} else {
			f.Comment(w.name + " is a type of the API's schemas.")
		}
		f.Type().Id(w.name).Struct(fields...)
	}
}
