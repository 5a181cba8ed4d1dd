package air

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Schema is a JSON Schema (2020-12 vocabulary) as AIR stores it. The compiler
// normalises OpenAPI 3.0 and Swagger 2.0 forms into it (nullable becomes a
// type list, references point at #/$defs/<name>). Unknown keywords are dropped.
type Schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Defs                 map[string]*Schema `json:"$defs,omitempty"`
	Title                string             `json:"title,omitempty"`
	Description          string             `json:"description,omitempty"`
	Type                 Types              `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Enum                 []json.RawMessage  `json:"enum,omitempty"`
	Const                json.RawMessage    `json:"const,omitempty"`
	Default              json.RawMessage    `json:"default,omitempty"`
	Examples             []json.RawMessage  `json:"examples,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	PrefixItems          []*Schema          `json:"prefixItems,omitempty"`
	OneOf                []*Schema          `json:"oneOf,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`
	Not                  *Schema            `json:"not,omitempty"`
	Minimum              *json.Number       `json:"minimum,omitempty"`
	Maximum              *json.Number       `json:"maximum,omitempty"`
	ExclusiveMinimum     *json.Number       `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum     *json.Number       `json:"exclusiveMaximum,omitempty"`
	MultipleOf           *json.Number       `json:"multipleOf,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MaxLength            *int               `json:"maxLength,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	MaxItems             *int               `json:"maxItems,omitempty"`
	UniqueItems          bool               `json:"uniqueItems,omitempty"`
	MinProperties        *int               `json:"minProperties,omitempty"`
	MaxProperties        *int               `json:"maxProperties,omitempty"`
	ReadOnly             bool               `json:"readOnly,omitempty"`
	WriteOnly            bool               `json:"writeOnly,omitempty"`
	Deprecated           bool               `json:"deprecated,omitempty"`

	// Bool is set for the boolean schemas true and false; every other field is then empty.
	Bool *bool `json:"-"`
}

// Types is a JSON Schema "type": one name (written as a string) or several.
type Types []string

// MarshalJSON writes a single type as a string.
func (t Types) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return json.Marshal(t[0])
	}
	return json.Marshal([]string(t))
}

// UnmarshalJSON reads a string or a list.
func (t *Types) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Types{s}
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("air: schema type must be a string or a list of strings")
	}
	*t = l
	return nil
}

// Has reports whether the type list names typ.
func (t Types) Has(typ string) bool {
	for _, x := range t {
		if x == typ {
			return true
		}
	}
	return false
}

type schemaAlias Schema

// MarshalJSON writes boolean schemas as true/false.
func (s *Schema) MarshalJSON() ([]byte, error) {
	return appendSchemaJSON(nil, s)
}

// UnmarshalJSON reads boolean schemas and objects: in one pass
// (decodeSchema) when b is in the form Marshal writes, else through
// encoding/json.
func (s *Schema) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if fast, ok := decodeSchema(b); ok {
		*s = *fast
		return nil
	}
	if bytes.Equal(b, []byte("true")) || bytes.Equal(b, []byte("false")) {
		v := b[0] == 't'
		*s = Schema{Bool: &v}
		return nil
	}
	var a schemaAlias
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	*s = Schema(a)
	return nil
}

// BoolSchema returns the schema true or false.
func BoolSchema(v bool) *Schema { return &Schema{Bool: &v} }
