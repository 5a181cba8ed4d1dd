package air

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strconv"
	"testing"
)

// refSchema mirrors Schema with the encoding/json marshalling Schema used to
// have, as the reference appendSchemaJSON must match byte for byte.
type refSchema struct {
	Ref                  string                `json:"$ref,omitempty"`
	Defs                 map[string]*refSchema `json:"$defs,omitempty"`
	Title                string                `json:"title,omitempty"`
	Description          string                `json:"description,omitempty"`
	Type                 Types                 `json:"type,omitempty"`
	Format               string                `json:"format,omitempty"`
	Enum                 []json.RawMessage     `json:"enum,omitempty"`
	Const                json.RawMessage       `json:"const,omitempty"`
	Default              json.RawMessage       `json:"default,omitempty"`
	Examples             []json.RawMessage     `json:"examples,omitempty"`
	Properties           map[string]*refSchema `json:"properties,omitempty"`
	Required             []string              `json:"required,omitempty"`
	AdditionalProperties *refSchema            `json:"additionalProperties,omitempty"`
	Items                *refSchema            `json:"items,omitempty"`
	PrefixItems          []*refSchema          `json:"prefixItems,omitempty"`
	OneOf                []*refSchema          `json:"oneOf,omitempty"`
	AnyOf                []*refSchema          `json:"anyOf,omitempty"`
	AllOf                []*refSchema          `json:"allOf,omitempty"`
	Not                  *refSchema            `json:"not,omitempty"`
	Minimum              *json.Number          `json:"minimum,omitempty"`
	Maximum              *json.Number          `json:"maximum,omitempty"`
	ExclusiveMinimum     *json.Number          `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum     *json.Number          `json:"exclusiveMaximum,omitempty"`
	MultipleOf           *json.Number          `json:"multipleOf,omitempty"`
	MinLength            *int                  `json:"minLength,omitempty"`
	MaxLength            *int                  `json:"maxLength,omitempty"`
	Pattern              string                `json:"pattern,omitempty"`
	MinItems             *int                  `json:"minItems,omitempty"`
	MaxItems             *int                  `json:"maxItems,omitempty"`
	UniqueItems          bool                  `json:"uniqueItems,omitempty"`
	MinProperties        *int                  `json:"minProperties,omitempty"`
	MaxProperties        *int                  `json:"maxProperties,omitempty"`
	ReadOnly             bool                  `json:"readOnly,omitempty"`
	WriteOnly            bool                  `json:"writeOnly,omitempty"`
	Deprecated           bool                  `json:"deprecated,omitempty"`
	Bool                 *bool                 `json:"-"`
}

type refAlias refSchema

func (s *refSchema) MarshalJSON() ([]byte, error) {
	if s.Bool != nil {
		return json.Marshal(*s.Bool)
	}
	return json.Marshal((*refAlias)(s))
}

func toRef(s *Schema) *refSchema {
	if s == nil {
		return nil
	}
	m := func(in map[string]*Schema) map[string]*refSchema {
		if in == nil {
			return nil
		}
		out := make(map[string]*refSchema, len(in))
		for k, v := range in {
			out[k] = toRef(v)
		}
		return out
	}
	l := func(in []*Schema) []*refSchema {
		if in == nil {
			return nil
		}
		out := make([]*refSchema, len(in))
		for i, v := range in {
			out[i] = toRef(v)
		}
		return out
	}
	return &refSchema{s.Ref, m(s.Defs), s.Title, s.Description, s.Type, s.Format, s.Enum, s.Const, s.Default, s.Examples,
		m(s.Properties), s.Required, toRef(s.AdditionalProperties), toRef(s.Items), l(s.PrefixItems), l(s.OneOf), l(s.AnyOf),
		l(s.AllOf), toRef(s.Not), s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum, s.MultipleOf, s.MinLength,
		s.MaxLength, s.Pattern, s.MinItems, s.MaxItems, s.UniqueItems, s.MinProperties, s.MaxProperties, s.ReadOnly,
		s.WriteOnly, s.Deprecated, s.Bool}
}

var tricky = []string{"", "plain", "<b>&amp;</b>", "quote\" back\\slash", "ctl\x01\b\f\n\r\t", "\u2028\u2029", "bad\xffutf8", "é接口", "$ref"}

// randSchema builds a random schema tree of bounded depth.
func randSchema(r *rand.Rand, depth int) *Schema {
	switch {
	case depth > 2 && r.Intn(2) == 0:
		return nil
	case depth > 2:
		return BoolSchema(r.Intn(2) == 0)
	case r.Intn(10) == 0:
		return BoolSchema(r.Intn(2) == 0)
	}
	str := func() string { return tricky[r.Intn(len(tricky))] }
	num := func() *json.Number {
		if r.Intn(2) == 0 {
			return nil
		}
		n := json.Number([]string{"0", "-1.5", "1e10", "42", ""}[r.Intn(5)])
		return &n
	}
	in := func() *int {
		if r.Intn(2) == 0 {
			return nil
		}
		v := r.Intn(100)
		return &v
	}
	raw := func() json.RawMessage {
		if r.Intn(9) == 0 {
			return nil
		}
		return json.RawMessage([]string{`"<x>"`, `{ "a" : [1, 2] }`, `null`, `true`, `"\u003c"`, "\"é\"", " 7 ", "\"a\u2028b\u2029\""}[r.Intn(8)])
	}
	s := &Schema{Ref: str(), Title: str(), Description: str(), Format: str(), Pattern: str(),
		Minimum: num(), Maximum: num(), ExclusiveMinimum: num(), ExclusiveMaximum: num(), MultipleOf: num(),
		MinLength: in(), MaxLength: in(), MinItems: in(), MaxItems: in(), MinProperties: in(), MaxProperties: in(),
		UniqueItems: r.Intn(2) == 0, ReadOnly: r.Intn(2) == 0, WriteOnly: r.Intn(2) == 0, Deprecated: r.Intn(2) == 0}
	switch r.Intn(4) {
	case 1:
		s.Type = Types{"string"}
	case 2:
		s.Type = Types{"string", "null"}
	case 3:
		s.Type = Types{}
	}
	if r.Intn(2) == 0 {
		s.Const, s.Default = raw(), raw()
		s.Enum = []json.RawMessage{raw(), raw()}
		s.Examples = []json.RawMessage{raw()}
	}
	if r.Intn(2) == 0 {
		s.Required = []string{str(), str()}
	}
	kids := func() map[string]*Schema {
		switch r.Intn(3) {
		case 0:
			return nil
		case 1:
			return map[string]*Schema{}
		}
		m := map[string]*Schema{}
		for i := 0; i < 3; i++ {
			m[str()+strconv.Itoa(i)] = randSchema(r, depth+1)
		}
		return m
	}
	list := func() []*Schema {
		if r.Intn(2) == 0 {
			return nil
		}
		return []*Schema{randSchema(r, depth+1), randSchema(r, depth+1)}
	}
	s.Defs, s.Properties = kids(), kids()
	s.PrefixItems, s.OneOf, s.AnyOf, s.AllOf = list(), list(), list(), list()
	if r.Intn(2) == 0 {
		s.AdditionalProperties, s.Items, s.Not = randSchema(r, depth+1), randSchema(r, depth+1), randSchema(r, depth+1)
	}
	return s
}

// TestSchemaJSONMatchesEncodingJSON: the one-pass encoder writes exactly what
// encoding/json wrote for the same schema, inside documents too.
func TestSchemaJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 400; i++ {
		s := randSchema(r, 0)
		if s == nil {
			continue
		}
		want, wantErr := json.Marshal(toRef(s))
		got, gotErr := json.Marshal(s)
		if (wantErr != nil) != (gotErr != nil) || !bytes.Equal(got, want) {
			j := 0
			for j < len(got) && j < len(want) && got[j] == want[j] {
				j++
			}
			t.Fatalf("case %d differs at byte %d:\n got …%s (%v)\nwant …%s (%v)", i, j,
				got[max(0, j-60):min(len(got), j+60)], gotErr, want[max(0, j-60):min(len(want), j+60)], wantErr)
		}
		// Indented, inside a struct, as the bundle writes it.
		wrapW, _ := Marshal(struct{ S *refSchema }{toRef(s)})
		wrapG, _ := Marshal(struct{ S *Schema }{s})
		if !bytes.Equal(wrapG, wrapW) {
			t.Fatalf("case %d indented:\n got %s\nwant %s", i, wrapG, wrapW)
		}
	}
}

func TestSchemaJSONErrors(t *testing.T) {
	bad := json.Number("0x1F")
	for _, s := range []*Schema{{Minimum: &bad}, {Const: json.RawMessage(`{"a":`)}, {Enum: []json.RawMessage{json.RawMessage(`nope`)}}, {Examples: []json.RawMessage{json.RawMessage(``)}},
		{Properties: map[string]*Schema{"a": {Maximum: &bad}}}} {
		if _, err := json.Marshal(s); err == nil {
			t.Errorf("%+v: want an error", s)
		}
		if _, err := json.Marshal(toRef(s)); err == nil {
			t.Errorf("reference %+v: want an error", s)
		}
	}
}
