package handler

// Generated input structs keep the arguments without a typed field in a
// map (extra); these helpers read and write the control inputs there, one
// shared copy instead of the same lines in every operation.

// ExtraBool reads the boolean control input key from extra: its value when
// it is a boolean (false otherwise) and whether it is present.
func ExtraBool(extra map[string]any, key string) (v, present bool) {
	x, ok := extra[key]
	b, _ := x.(bool)
	return b, ok
}

// ExtraString reads the idempotency carrier key from extra: present is
// false when it is absent or null; isString tells a string value (s) from
// another one.
func ExtraString(extra map[string]any, key string) (s string, isString, present bool) {
	if v, ok := extra[key]; ok && v != nil {
		s, isString = v.(string)
		return s, isString, true
	}
	return "", false, false
}

// SetExtra sets key to v in extra, making the map when it is nil.
func SetExtra(extra map[string]any, key string, v any) map[string]any {
	if extra == nil {
		extra = map[string]any{}
	}
	extra[key] = v
	return extra
}

// As stores v in *dst when it holds a T and reports whether it did: the
// type check of a generated FromArgs conversion, one line per field.
func As[T any](v any, dst *T) bool {
	x, ok := v.(T)
	if ok {
		*dst = x
	}
	return ok
}
