package compose

import (
	"bytes"
	"encoding/json"
	"github.com/anvil-dev/anvil/compiler/emit"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Input types let a dry run stand in a value of the right JSON type for a
// result it cannot know yet (the gateway checks a dry run's arguments
// against the tool's schema like any call's). They are the composite's own
// data, kept out of compose.json.

// inputTypesJSON is {connector: {operation: {input key: JSON type}}}, keys
// in catalog order, with a trailing newline.
func inputTypesJSON(conns []emit.Connector, cat *Catalog) []byte {
	var b bytes.Buffer
	b.WriteString("{")
	for i, cc := range cat.Connectors {
		doc := conns[i].Doc
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		writeKey(&b, cc.ID)
		b.WriteString("{")
		for j, op := range cc.Operations {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n    ")
			writeKey(&b, op.ID)
			b.WriteString("{")
			aop := doc.Operation(op.ID)
			for k, in := range op.Inputs {
				if k > 0 {
					b.WriteString(", ")
				}
				writeKey(&b, in.Key)
				t, _ := json.Marshal(inputType(aop, in.Key))
				b.Write(t)
			}
			b.WriteString("}")
		}
		if len(cc.Operations) > 0 {
			b.WriteString("\n  ")
		}
		b.WriteString("}")
	}
	if len(cat.Connectors) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func writeKey(b *bytes.Buffer, k string) {
	q, _ := json.Marshal(k)
	b.Write(q)
	b.WriteString(": ")
}

// inputType is the JSON type of an operation's input: string, integer,
// number, boolean, array, object, or "" when the schema does not say.
func inputType(op *air.Operation, key string) string {
	if op == nil || op.Input.Schema == nil {
		return ""
	}
	root := op.Input.Schema
	s := root.Properties[key]
	for depth := 0; s != nil && depth < 8; depth++ {
		switch {
		case s.Ref != "":
			name, ok := strings.CutPrefix(s.Ref, "#/$defs/")
			if !ok || root.Defs == nil {
				return ""
			}
			s = root.Defs[name]
			continue
		case len(s.AllOf) == 1:
			s = s.AllOf[0]
			continue
		}
		for _, t := range s.Type {
			if t != "null" {
				return t
			}
		}
		switch {
		case s.Properties != nil:
			return "object"
		case s.Items != nil:
			return "array"
		}
		return ""
	}
	return ""
}
