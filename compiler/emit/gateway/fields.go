package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"

	"github.com/anvil-dev/anvil/compiler/naming"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/canon"
)

// kind is how a typed input field holds its value.
type kind int

const (
	kString kind = iota // string
	kNumber             // json.Number (integer or number)
	kBool               // bool
	kAny                // any decoded JSON value
)

// field is one property of an operation's input schema.
type field struct {
	prop     string // the JSON key
	goName   string // the struct field (a Controls field for a slot)
	slot     bool   // a control input held by handler.Controls (DryRunInput, ConfirmInput, KeyInput)
	secret   bool   // the audit hash redacts it (air.Input.Sensitive)
	kind     kind
	integer  bool // type integer (kNumber)
	nullable bool // null is allowed besides the scalar type
	required bool
	schema   *air.Schema
	// never is set for the false schema: any value is invalid.
	never bool

	// Scalar checks, validated in generated code.
	strEnum    []string // allowed strings (enum ∩ string); nil: no enum
	numEnum    []string // allowed numbers as JSON (enum ∩ number)
	boolEnum   []bool   // allowed booleans (enum ∩ boolean)
	hasEnum    bool     // an enum (or const) applies
	nullInEnum bool     // null is a member of the enum
	minLen     *int
	maxLen     *int
	pattern    string
	minimum    string // JSON numbers; "" when absent
	maximum    string
	exclMin    string
	exclMax    string
}

// input is the analysed input of one operation.
type input struct {
	typeName    string
	fields      []*field // canonical order (UTF-16 code units of the key)
	byProp      map[string]*field
	closed      bool // additionalProperties: false
	schemaCheck bool // the shared validator runs too
}

// analyseInput reads an operation's input schema.
func analyseInput(typeName string, op *air.Operation) *input {
	in := &input{typeName: typeName, byProp: map[string]*field{}}
	s := op.Input.Schema
	if s == nil || s.Bool != nil {
		// No object schema: anything the shared validator takes.
		in.schemaCheck = true
		return in
	}
	if !s.Type.Has("object") || len(s.Type) != 1 {
		in.schemaCheck = true
	}
	switch ap := s.AdditionalProperties; {
	case ap == nil:
	case ap.Bool != nil && !*ap.Bool:
		in.closed = true
	case ap.Bool != nil && *ap.Bool:
	default:
		in.schemaCheck = true
	}
	if s.Ref != "" || len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0 || s.Not != nil ||
		s.MinProperties != nil || s.MaxProperties != nil || len(s.Enum) > 0 || s.Const != nil {
		in.schemaCheck = true
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return canon.CompareUTF16(names[i], names[j]) < 0 })
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
		if _, ok := s.Properties[r]; !ok {
			in.schemaCheck = true
		}
	}
	used := map[string]bool{}
	reserved := map[string]bool{}
	for _, m := range reservedMethods {
		reserved[m] = true
	}
	for _, name := range names {
		f := analyseField(s.Properties[name])
		f.prop = name
		f.required = required[name]
		goName := exportedName(name)
		if reserved[goName] {
			goName += "Arg"
		}
		f.goName = uniqueName(goName, used)
		if f.kind == kAny && !trivialSchema(f.schema) {
			in.schemaCheck = true
		}
		in.fields = append(in.fields, f)
		in.byProp[name] = f
	}
	// The idempotency carrier may be set to a string key: a field of another
	// type holds any value, checked by the shared validator.
	if k := op.Input.Safety.IdempotencyKey; k != "" {
		if f := in.byProp[k]; f != nil && f.kind != kString && f.kind != kAny {
			f.kind = kAny
			in.schemaCheck = true
		}
	}
	for _, k := range op.Input.Sensitive {
		if f := in.byProp[k]; f != nil {
			f.secret = true
		}
	}
	// The control inputs live in handler.Controls when the schema declares
	// them as the runtime's accessors expect; any other declaration gets
	// accessors of its own (controlOverrides).
	in.slot(air.DryRunKey, kBool, slotDryRun)
	in.slot(confirmKey(op), kBool, slotConfirm)
	if k := op.Input.Safety.IdempotencyKey; k != "" {
		in.slot(k, kString, slotKey)
	}
	return in
}

// The Controls fields of the control inputs.
const (
	slotDryRun  = "DryRunInput"
	slotConfirm = "ConfirmInput"
	slotKey     = "KeyInput"
)

// slot moves control input key into Controls field name when the schema
// declares it as a non-nullable k.
func (in *input) slot(key string, k kind, name string) {
	if f := in.byProp[key]; f != nil && f.kind == k && !f.nullable && !f.slot && !f.never {
		f.goName, f.slot = name, true
	}
}

// confirmKey is the input the confirmation gate reads.
func confirmKey(op *air.Operation) string {
	if op.Input.Safety.ConfirmKey != "" {
		return op.Input.Safety.ConfirmKey
	}
	return "confirm"
}

// reservedMethods are the names of handler.Controls (its fields and the
// methods it gives every input) and of the generated methods: a property's
// Go name must not take one.
var reservedMethods = []string{"Validate", "Fields", "Args", "InputSHA256", "IdempotencyKey", "SetIdempotencyKey",
	"Confirm", "SetConfirm", "DryRun", "SetDryRun", "Controls", "Extra", "Wrong", "Loose", "LooseBool", "LooseString",
	"SetExtra", "SetWrong", "CheckLoose", slotDryRun, slotConfirm, slotKey}

// checkSensitive refuses an operation whose AIR does not record the audit
// hash's redaction of its inputs as canon.SensitiveKey decides it (a
// bundle compiled before lowering recorded it, or edited by hand): the
// generated hasher writes what the AIR records, the generic one applies the
// rule, and the two must agree.
func checkSensitive(op *air.Operation) error {
	recorded := map[string]bool{}
	for _, k := range op.Input.Sensitive {
		recorded[k] = true
	}
	var props map[string]*air.Schema
	if s := op.Input.Schema; s != nil {
		props = s.Properties
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if canon.SensitiveKey(k) != recorded[k] {
			return fmt.Errorf("%w: operation %s: its AIR does not record that the audit hash redacts input %q as the contract's rule says (air.Input.Sensitive; compiled by an older anvil?): compile the bundle again", ErrInvalid, op.ID, k)
		}
		delete(recorded, k)
	}
	for _, k := range slices.Sorted(maps.Keys(recorded)) {
		return fmt.Errorf("%w: operation %s: air.Input.Sensitive names %q, which is not one of its inputs", ErrInvalid, op.ID, k)
	}
	return nil
}

// trivialSchema reports a schema that takes any value.
func trivialSchema(s *air.Schema) bool {
	if s == nil {
		return true
	}
	if s.Bool != nil {
		return *s.Bool
	}
	c := *s
	c.Title, c.Description, c.Default, c.Examples, c.Format = "", "", nil, nil, ""
	c.Deprecated, c.ReadOnly, c.WriteOnly = false, false, false
	c.Defs = nil
	b, _ := json.Marshal(&c)
	return string(b) == "{}"
}

// analyseField classifies one property schema.
func analyseField(s *air.Schema) *field {
	f := &field{schema: s, kind: kAny}
	if s == nil {
		return f
	}
	if s.Bool != nil {
		f.never = !*s.Bool
		return f
	}
	if s.Ref != "" || len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0 || s.Not != nil {
		return f
	}
	var scalar string
	nullable := false
	for _, t := range s.Type {
		switch t {
		case "null":
			nullable = true
		case "string", "integer", "number", "boolean":
			if scalar != "" && !(scalar == "integer" && t == "number" || scalar == "number" && t == "integer") {
				return f
			}
			if scalar == "" || t == "number" {
				scalar = t
			}
		default:
			return f
		}
	}
	switch scalar {
	case "string":
		f.kind = kString
	case "integer":
		f.kind, f.integer = kNumber, true
	case "number":
		f.kind = kNumber
	case "boolean":
		f.kind = kBool
	default:
		return f
	}
	f.nullable = nullable
	values := s.Enum
	if s.Const != nil {
		values = append([]json.RawMessage(nil), s.Const)
		if len(s.Enum) > 0 {
			// Both apply: keep the const only when the enum allows it.
			keep := false
			for _, e := range s.Enum {
				if jsonEqual(e, s.Const) {
					keep = true
				}
			}
			if !keep {
				values = []json.RawMessage{}
			}
		}
	}
	if values != nil || s.Const != nil || len(s.Enum) > 0 {
		f.hasEnum = true
		for _, raw := range values {
			v := decodeJSON(raw)
			switch x := v.(type) {
			case nil:
				f.nullInEnum = true
			case string:
				f.strEnum = append(f.strEnum, x)
			case json.Number:
				f.numEnum = append(f.numEnum, string(x))
			case bool:
				f.boolEnum = append(f.boolEnum, x)
			}
		}
	}
	switch f.kind {
	case kString:
		f.minLen, f.maxLen = s.MinLength, s.MaxLength
		if s.Pattern != "" {
			if _, err := regexp.Compile(s.Pattern); err != nil {
				f.kind = kAny
				return f
			}
			f.pattern = s.Pattern
		}
	case kNumber:
		if s.MultipleOf != nil {
			f.kind = kAny
			return f
		}
		if s.Minimum != nil {
			f.minimum = s.Minimum.String()
		}
		if s.Maximum != nil {
			f.maximum = s.Maximum.String()
		}
		if s.ExclusiveMinimum != nil {
			f.exclMin = s.ExclusiveMinimum.String()
		}
		if s.ExclusiveMaximum != nil {
			f.exclMax = s.ExclusiveMaximum.String()
		}
	}
	return f
}

// decodeJSON decodes a JSON value with numbers as json.Number.
func decodeJSON(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// jsonEqual compares two JSON values by their decoded form.
func jsonEqual(a, b json.RawMessage) bool {
	x, _ := json.Marshal(decodeJSON(a))
	y, _ := json.Marshal(decodeJSON(b))
	return bytes.Equal(x, y)
}

// Go identifiers follow compiler/naming's rules.
var (
	exportedName = naming.GoExported   // a JSON key as an exported Go identifier
	lowerName    = naming.GoUnexported // an id as an unexported Go identifier
)

// uniqueName returns name, or name with a numeric suffix, not yet in used.
func uniqueName(name string, used map[string]bool) string { return naming.Unique(name, used, "") }
