package air

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// vocabularies lists every typed vocabulary of AIR: where the document
// holds it (field paths from Document; [] steps into a slice or map, *
// through a pointer implicitly) and, where air.schema.json enumerates it,
// the JSON Pointer of each enum with the constants that enum leaves out.
var vocabularies = []struct {
	typ    reflect.Type
	fields []string
	enums  map[string][]string // schema pointer → constants the enum leaves out
}{
	{reflect.TypeFor[SourceKind](), []string{"Service.Source.Kind"},
		map[string][]string{"/$defs/service/properties/source/properties/kind": nil}},
	{reflect.TypeFor[AuthType](), []string{"Service.Auth.Type", "Operations[].Auth.Type"},
		map[string][]string{"/$defs/auth/properties/type": nil}},
	{reflect.TypeFor[Location](), []string{"Operations[].Input.Params[].In", "Parameters[].In", "Service.Auth.Carrier.In"},
		map[string][]string{
			"/$defs/param/properties/in":                   nil,
			"/$defs/auth/properties/carrier/properties/in": {"path"}, // a credential never travels in the path
		}},
	{reflect.TypeFor[OAuthGrant](), []string{"Service.Auth.Provider.Grant"}, nil},
	{reflect.TypeFor[ClientAuthMethod](), []string{"Service.Auth.Provider.ClientAuth"}, nil},
	{reflect.TypeFor[OperationState](), []string{"Operations[].State"},
		map[string][]string{"/$defs/operation/properties/state": nil}},
	{reflect.TypeFor[EffectKind](), []string{"Operations[].Effect.Kind"},
		map[string][]string{"/$defs/effect/properties/kind": nil}},
	{reflect.TypeFor[Risk](), []string{"Operations[].Effect.Risk", "Operations[].Confirmation.Risk"},
		map[string][]string{"/$defs/effect/properties/risk": nil}},
	{reflect.TypeFor[EffectClass](), []string{"Operations[].Effect.Class"},
		map[string][]string{"/$defs/effect/properties/class": nil}},
	{reflect.TypeFor[LookupBy](), []string{"Operations[].Effect.Lookup.By"},
		map[string][]string{"/$defs/effect/properties/lookup/properties/by": nil}},
	{reflect.TypeFor[Projection](), []string{"Operations[].Input.Body.Projection"},
		map[string][]string{"/$defs/input/properties/body/properties/projection": nil}},
	{reflect.TypeFor[BodyEncoding](), []string{"Operations[].Input.Body.Encoding"},
		map[string][]string{"/$defs/input/properties/body/properties/encoding": nil}},
	{reflect.TypeFor[ParamStyle](), []string{"Operations[].Input.Params[].Style"}, nil},
	{reflect.TypeFor[IdempotencyMode](), []string{"Operations[].Idempotency.Mode"},
		map[string][]string{"/$defs/operation/properties/idempotency/properties/mode": nil}},
	{reflect.TypeFor[KeyMechanism](), []string{"Operations[].Idempotency.Mechanism"},
		map[string][]string{"/$defs/operation/properties/idempotency/properties/mechanism": nil}},
	{reflect.TypeFor[KeyDerivation](), []string{"Operations[].Idempotency.KeyDerivation"},
		map[string][]string{"/$defs/operation/properties/idempotency/properties/keyDerivation": nil}},
	{reflect.TypeFor[RetryMode](), []string{"Operations[].Retries.Mode"},
		map[string][]string{"/$defs/operation/properties/retries/properties/mode": nil}},
	{reflect.TypeFor[RetryBasis](), []string{"Operations[].Retries.Basis"}, nil},
	{reflect.TypeFor[Backoff](), []string{"Operations[].Retries.Backoff"}, nil},
	{reflect.TypeFor[PaginationStyle](), []string{"Operations[].Pagination.Style"},
		map[string][]string{"/$defs/operation/properties/pagination/properties/style": nil}},
	{reflect.TypeFor[ProducerBasis](), []string{"Operations[].Needs[].From[].Basis"},
		map[string][]string{"/$defs/operation/properties/needs/items/properties/from/items/properties/basis": nil}},
	{reflect.TypeFor[Level](), []string{"Diagnostics[].Level"},
		map[string][]string{"/$defs/diagnostic/properties/level": nil}},
}

// TestVocabularies checks each typed vocabulary against the package's own
// constants (read from its source, so a constant added later is checked
// too): every string type the package declares with constants is listed
// above, each constant round-trips through JSON as its plain string, the
// listed fields have the type, and where air.schema.json enumerates the
// vocabulary its enum holds exactly the constants (less the listed
// exceptions), so the schema accepts every value the code can write and
// nothing else.
func TestVocabularies(t *testing.T) {
	consts := vocabularyConstants(t)
	listed := map[string]bool{}
	for _, v := range vocabularies {
		listed[v.typ.Name()] = true
	}
	for name := range consts {
		if !listed[name] {
			t.Errorf("the string type %s has constants but is not in vocabularies: list it, with its fields and schema enum", name)
		}
	}

	var schema any
	if err := json.Unmarshal(JSONSchema, &schema); err != nil {
		t.Fatal(err)
	}
	for _, v := range vocabularies {
		name := v.typ.Name()
		values := consts[name]
		if len(values) == 0 {
			t.Errorf("%s: no constants found", name)
			continue
		}
		for _, s := range values {
			val := reflect.New(v.typ).Elem()
			val.SetString(s)
			b, err := json.Marshal(val.Interface())
			if err != nil || string(b) != strconv.Quote(s) {
				t.Errorf("%s %q marshals to %s, %v", name, s, b, err)
			}
			back := reflect.New(v.typ)
			if err := json.Unmarshal(b, back.Interface()); err != nil || back.Elem().String() != s {
				t.Errorf("%s %q does not read back: %v, %v", name, s, back.Elem(), err)
			}
		}
		for _, path := range v.fields {
			if got := fieldType(t, reflect.TypeFor[Document](), path); got != v.typ {
				t.Errorf("Document.%s is %v, want %v", path, got, v.typ)
			}
		}
		for ptr, except := range v.enums {
			enum, ok := pointer(schema, ptr+"/enum").([]any)
			if !ok {
				t.Errorf("%s: air.schema.json has no enum at %s", name, ptr)
				continue
			}
			var got []string
			for _, e := range enum {
				s, _ := e.(string)
				got = append(got, s)
			}
			var want []string
			for _, s := range values {
				if !slices.Contains(except, s) {
					want = append(want, s)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: the schema's enum at %s is %q, the constants %q", name, ptr, got, want)
			}
		}
	}
}

// vocabularyConstants reads the package's non-test source and returns, per
// named type, the values of the string constants declared with it.
func vocabularyConstants(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string][]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				typ, ok := vs.Type.(*ast.Ident)
				if !ok {
					continue
				}
				for _, val := range vs.Values {
					lit, ok := val.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: a %s constant is not a string literal", fset.Position(val.Pos()), typ.Name)
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[typ.Name] = append(out[typ.Name], s)
				}
			}
		}
	}
	return out
}

// fieldType follows a dotted path of Go field names from typ; "[]" after
// a name steps into the slice's or map's element, and pointers are
// followed. It returns nil for a path that does not exist.
func fieldType(t *testing.T, typ reflect.Type, path string) reflect.Type {
	t.Helper()
	for _, step := range strings.Split(path, ".") {
		name, elem := strings.CutSuffix(step, "[]")
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct {
			return nil
		}
		f, ok := typ.FieldByName(name)
		if !ok {
			return nil
		}
		typ = f.Type
		if elem {
			for typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
			typ = typ.Elem()
		}
	}
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	return typ
}

// pointer resolves a JSON Pointer (RFC 6901, without escapes) in v.
func pointer(v any, ptr string) any {
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[tok]
	}
	return v
}
