package manifest

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/anvil-dev/anvil/runtime/air"
	"go.yaml.in/yaml/v3"
)

// jsonValue converts any YAML value to canonical compact JSON: integers and
// floats become JSON numbers, mappings become objects with sorted keys, and
// strings, booleans and null map to themselves. Null (or no value) yields
// nil unless keepNull is set, in which case it is the JSON null.
func (d *decoder) jsonValue(v *yaml.Node, label string, keepNull bool) json.RawMessage {
	r := d.resolve(v)
	if r == nil {
		return nil
	}
	if isNull(r) && !keepNull {
		return nil
	}
	val, ok := d.toAny(v, label)
	if !ok {
		return nil
	}
	b, err := air.MarshalCompact(val)
	if err != nil {
		d.errorf(d.pos(v), CodeType, "%s: the value cannot be written as JSON", label)
		return nil
	}
	return b
}

// toAny converts v to a value encoding/json writes canonically.
func (d *decoder) toAny(v *yaml.Node, label string) (any, bool) {
	r := d.resolve(v)
	if r == nil {
		return nil, false
	}
	switch r.Kind {
	case yaml.MappingNode:
		if !d.enter(r, v) {
			return nil, false
		}
		defer d.leave(r, v)
		obj := map[string]any{}
		ok := true
		for _, p := range d.pairs(r, label) {
			if !d.copied(p.k, len(p.key)) {
				return nil, false
			}
			x, good := d.toAny(p.v, p.label)
			if !good {
				ok = false
				continue
			}
			obj[p.key] = x
		}
		return obj, ok
	case yaml.SequenceNode:
		if !d.enter(r, v) {
			return nil, false
		}
		defer d.leave(r, v)
		arr := make([]any, 0, len(r.Content))
		ok := true
		for i, item := range r.Content {
			if d.aborted {
				return nil, false
			}
			x, good := d.toAny(item, index(label, i))
			if !good {
				ok = false
				continue
			}
			arr = append(arr, x)
		}
		return arr, ok
	case yaml.ScalarNode:
		if !d.copied(v, len(r.Value)) {
			return nil, false
		}
		return d.scalarAny(v, r, label)
	}
	d.typeError(v, r, label, "a YAML value")
	return nil, false
}

// scalarAny converts one scalar.
func (d *decoder) scalarAny(v, r *yaml.Node, label string) (any, bool) {
	switch r.ShortTag() {
	case "!!null":
		return nil, true
	case "!!bool":
		switch r.Value {
		case "true":
			return true, true
		case "false":
			return false, true
		}
		var b bool
		if err := r.Decode(&b); err == nil {
			return b, true
		}
	case "!!int":
		if isDecimal(r.Value) {
			// What the YAML library decodes too, without its per-call
			// decoder: a plain decimal that fits an int64.
			if n, err := strconv.ParseInt(r.Value, 10, 64); err == nil {
				return json.Number(strconv.FormatInt(n, 10)), true
			}
		}
		var x any
		if err := r.Decode(&x); err == nil {
			switch n := x.(type) {
			case int:
				return json.Number(strconv.FormatInt(int64(n), 10)), true
			case int64:
				return json.Number(strconv.FormatInt(n, 10)), true
			case uint64:
				return json.Number(strconv.FormatUint(n, 10)), true
			}
		}
	case "!!float":
		var f float64
		if err := r.Decode(&f); err == nil {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				d.errorf(d.pos(v), CodeType, "%s: %s has no JSON form", label, clip(r.Value))
				return nil, false
			}
			if f == 0 {
				f = 0 // no negative zero, as JSON.stringify
			}
			return f, true
		}
	case "!!str", "!!timestamp", "!!binary":
		return r.Value, true
	}
	d.typeError(v, r, label, "a JSON value")
	return nil, false
}

// isDecimal reports whether s is an optionally signed decimal integer
// without leading zeros (which the YAML library would read as octal) or
// underscores.
func isDecimal(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
