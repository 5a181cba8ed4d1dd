// Package jsstring is the former home of the JSON string rules, now in
// runtime/canon; its functions forward there. Its last importers are
// runtime/frontdoor and runtime/handler (one call each); once they call
// canon.AppendString / canon.AppendStringHTML directly, delete this
// package. New code must not import it.
package jsstring

import "github.com/anvil-dev/anvil/runtime/canon"

// Append appends s quoted as JSON.stringify would (canon.AppendString).
func Append(b []byte, s string) []byte { return canon.AppendString(b, s) }

// AppendHTML appends s quoted as encoding/json.Marshal writes a string
// (canon.AppendStringHTML).
func AppendHTML(b []byte, s string) []byte { return canon.AppendStringHTML(b, s) }
