package air

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ArgSource is where one mapped argument's value comes from: a path string
// (request.<path>, response.<path>, idempotency_key, with an optional trailing
// "?") or a literal ({const: value}).
type ArgSource struct {
	Path  string          // set for a path source
	Const json.RawMessage // set for a literal; canonical JSON
}

// IsConst reports whether the source is a literal.
func (s ArgSource) IsConst() bool { return s.Const != nil }

// MarshalJSON writes a path as a JSON string and a literal as {"const": v}.
func (s ArgSource) MarshalJSON() ([]byte, error) {
	if s.IsConst() {
		return append(append([]byte(`{"const":`), s.Const...), '}'), nil
	}
	return json.Marshal(s.Path)
}

// UnmarshalJSON reads either form.
func (s *ArgSource) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		s.Const = nil
		return json.Unmarshal(b, &s.Path)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("air: argument source must be a path string or {\"const\": value}")
	}
	v, ok := obj["const"]
	if !ok || len(obj) != 1 {
		return fmt.Errorf("air: argument source object must have exactly the key \"const\"")
	}
	s.Path = ""
	s.Const = append(json.RawMessage(nil), v...)
	return nil
}

// MappingEntry is one argument of a follow-up call.
type MappingEntry struct {
	Name      string
	ArgSource ArgSource
}

// Mapping is an ordered argument mapping. Its JSON form is an object whose
// keys keep the order the manifest wrote them in; that order is part of the
// effect-report contract, so it is never a Go map.
type Mapping []MappingEntry

// Get returns the source for name.
func (m Mapping) Get(name string) (ArgSource, bool) {
	for _, e := range m {
		if e.Name == name {
			return e.ArgSource, true
		}
	}
	return ArgSource{}, false
}

// MarshalJSON writes the mapping as an object in order.
func (m Mapping) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(e.Name)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		v, err := e.ArgSource.MarshalJSON()
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads an object keeping its key order.
func (m *Mapping) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*m = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("air: argument mapping must be an object")
	}
	out := Mapping{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		var src ArgSource
		if err := src.UnmarshalJSON(raw); err != nil {
			return err
		}
		out = append(out, MappingEntry{Name: key, ArgSource: src})
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*m = out
	return nil
}

// ReadsResponse reports whether building the effect report of a call can
// read the upstream's answer: a follow-up, lookup or draft argument taken
// from response.*, a deadline at a response path, or a draft (its handle is
// a response path). A gateway decodes an answer only for such operations.
// A path that does not parse counts as reading the response.
func (e *Effect) ReadsResponse() bool {
	if e == nil {
		return false
	}
	if e.Draft != nil {
		return true
	}
	for _, f := range []*FollowUp{e.Inverse, e.Compensate} {
		if f == nil {
			continue
		}
		if f.Deadline != nil && f.Deadline.At != "" || f.Arguments.readsResponse() {
			return true
		}
	}
	return e.Lookup != nil && e.Lookup.Arguments.readsResponse()
}

// readsResponse reports whether a path source of m is rooted at response.
func (m Mapping) readsResponse() bool {
	for _, en := range m {
		if en.ArgSource.IsConst() {
			continue
		}
		if p, err := ParsePath(en.ArgSource.Path); err != nil || p.Root == RootResponse {
			return true
		}
	}
	return false
}
