// Package wirejson writes the JSON of the gateway's own answers (health,
// refusal details, JSON-RPC errors, MCP results): objects whose key order is
// part of the contract, and decoded values without HTML escaping. It is the
// one place both the executor and the front doors get these bytes from.
package wirejson

import (
	"bytes"
	"encoding/json"
)

// Object renders key/value pairs as a JSON object in the given order. A
// json.RawMessage value is written as is; any other value as json.Marshal
// writes it (null when it does not encode).
func Object(kv ...any) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		buf.Write(k)
		buf.WriteByte(':')
		switch v := kv[i+1].(type) {
		case json.RawMessage:
			buf.Write(v)
		default:
			b, err := json.Marshal(v)
			if err != nil {
				b = []byte("null")
			}
			buf.Write(b)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// Marshal renders a value compactly without HTML escaping (null and the
// error when it does not encode).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null"), err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
