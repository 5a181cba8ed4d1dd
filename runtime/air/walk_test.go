package air

import (
	"reflect"
	"testing"
)

// TestEachChildCoversEveryNestedKeyword fills every schema-valued field of
// Schema (except $defs) with a distinct child and checks EachChild reports
// each exactly once, so a nested keyword added to Schema without being
// added to the walk fails here.
func TestEachChildCoversEveryNestedKeyword(t *testing.T) {
	var s Schema
	want := map[*Schema]string{}
	child := func(field string) *Schema {
		c := &Schema{Title: field}
		want[c] = field
		return c
	}
	v := reflect.ValueOf(&s).Elem()
	schemaPtr := reflect.TypeOf((*Schema)(nil))
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case name == "Defs":
			f.Set(reflect.ValueOf(map[string]*Schema{"skipped": {Title: "defs"}}))
		case f.Type() == schemaPtr:
			f.Set(reflect.ValueOf(child(name)))
		case f.Type() == reflect.SliceOf(schemaPtr):
			f.Set(reflect.ValueOf([]*Schema{child(name + "[0]"), nil, child(name + "[2]")}))
		case f.Type() == reflect.MapOf(reflect.TypeOf(""), schemaPtr):
			f.Set(reflect.ValueOf(map[string]*Schema{"b": child(name + ".b"), "a": child(name + ".a"), "nil": nil}))
		}
	}
	var order []string
	s.EachChild(func(c *Schema) {
		field, ok := want[c]
		if !ok {
			t.Fatalf("EachChild passed a schema that is not a direct child: %q", c.Title)
		}
		delete(want, c)
		order = append(order, field)
	})
	for _, field := range want {
		t.Errorf("EachChild skipped %s", field)
	}
	if len(order) >= 2 && (order[0] != "Properties.a" || order[1] != "Properties.b") {
		t.Errorf("properties not in name order: %v", order)
	}
	var nilSchema *Schema
	nilSchema.EachChild(func(*Schema) { t.Error("a nil schema has no children") })
}
