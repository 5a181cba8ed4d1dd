// Package grant parses Branchyard grants (a token's by_grants claim, or a
// grant file given to `anvil connectors index --grants`) and decides whether
// a grant allows an operation.
//
// A grant is a list of entries. An operation is allowed when some entry
// allows it, and the first such entry picks the account:
//
//	[{"connector":"github","operations":["issues.*","pulls.list"],"mode":"read","account":"work"}]
//
// Parsing fails closed: a known key with a bad type or value rejects the whole
// list (the error wraps [ErrInvalidGrant]); unknown keys are ignored.
//
// [List.Decide] answers one call; [List.Visible] filters tools/list; [Compile]
// precomputes every decision for a fixed operation table so that each call is
// a slice lookup.
package grant

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/jsonscan"
)

// ErrInvalidGrant is wrapped by every parse error.
var ErrInvalidGrant = errors.New("not a valid grant list")

// Limits and fixed values of the grant grammar.
const (
	MaxEntries    = 64  // entries in one list
	MaxOperations = 256 // globs in one entry
	MaxGlobLen    = 256 // characters (UTF-16 code units) in one glob
	MaxConnector  = 64  // characters in a connector id
	MaxAccount    = 128 // characters in an account name

	ModeRead       = "read"    // the entry allows only reads
	ModeWrite      = "write"   // the entry allows reads and mutations
	ConfirmAllow   = "allow"   // the only value confirm may take
	DefaultAccount = "default" // the account of an entry that names none
)

// Entry is one grant entry. Its JSON form is
// {"connector","operations","mode"[,"account"][,"confirm"]}, in that order,
// with account and confirm only when set.
type Entry struct {
	// Connector is the bundle's id in the served workspace ([A-Za-z0-9_-]{1,64}).
	Connector string `json:"connector"`
	// Operations are globs over AIR operation ids (1 to 256, each 1 to 256
	// characters).
	Operations []string `json:"operations"`
	// Mode is "read" or "write".
	Mode string `json:"mode"`
	// Account selects the vault record; empty means "default".
	Account string `json:"account,omitempty"`
	// Confirm is "allow" or empty: "allow" is needed for a mutation AIR marks
	// as needing confirmation.
	Confirm string `json:"confirm,omitempty"`
}

// List is a parsed grant: at most 64 entries, in the order given.
type List []Entry

// EffectiveAccount is the entry's account, or "default" when it names none.
func (e *Entry) EffectiveAccount() string {
	if e.Account == "" {
		return DefaultAccount
	}
	return e.Account
}

// MarshalJSON writes the entry in its canonical key order, without HTML
// escaping.
func (e Entry) MarshalJSON() ([]byte, error) {
	return e.appendJSON(make([]byte, 0, 96), -1), nil
}

// AuditJSON is the entry as audit lines and refusal details record it:
// {"index":n,"connector",…,"operations",…,"mode",…} followed by "account" and
// "confirm" when set.
func (e Entry) AuditJSON(index int) json.RawMessage {
	return e.appendJSON(make([]byte, 0, 112), index)
}

// appendJSON appends the entry's JSON object, led by "index" when index >= 0.
func (e *Entry) appendJSON(b []byte, index int) []byte {
	b = append(b, '{')
	if index >= 0 {
		b = append(b, `"index":`...)
		b = strconv.AppendInt(b, int64(index), 10)
		b = append(b, ',')
	}
	b = append(b, `"connector":`...)
	b = canon.AppendString(b, e.Connector)
	b = append(b, `,"operations":[`...)
	for i, g := range e.Operations {
		if i > 0 {
			b = append(b, ',')
		}
		b = canon.AppendString(b, g)
	}
	b = append(b, `],"mode":`...)
	b = canon.AppendString(b, e.Mode)
	if e.Account != "" {
		b = append(b, `,"account":`...)
		b = canon.AppendString(b, e.Account)
	}
	if e.Confirm != "" {
		b = append(b, `,"confirm":`...)
		b = canon.AppendString(b, e.Confirm)
	}
	return append(b, '}')
}

// MarshalJSON writes the list as a JSON array; an empty or nil list is [].
func (l List) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+96*len(l))
	b = append(b, '[')
	for i := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = l[i].appendJSON(b, -1)
	}
	return append(b, ']'), nil
}

// Parse parses a grant list: a JSON array of at most 64 entries. It fails
// closed: anything but an array (null included), an entry that is not an
// object, a missing connector, operations or mode, or a known key with a bad
// type or value rejects the whole list with an error wrapping
// [ErrInvalidGrant]. Unknown keys are ignored. An empty array is a valid,
// empty grant.
func Parse(raw []byte) (List, error) {
	raw = trimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, fmt.Errorf("%w: expected a JSON array of entries", ErrInvalidGrant)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%w: not valid JSON", ErrInvalidGrant)
	}
	if len(items) > MaxEntries {
		return nil, fmt.Errorf("%w: more than %d entries", ErrInvalidGrant, MaxEntries)
	}
	l := make(List, 0, len(items))
	for i, it := range items {
		e, problem := parseEntry(it)
		if problem != "" {
			return nil, fmt.Errorf("%w: entry %d %s", ErrInvalidGrant, i, problem)
		}
		l = append(l, e)
	}
	return l, nil
}

// parseEntry decodes one entry; problem is empty when it is valid.
func parseEntry(raw json.RawMessage) (e Entry, problem string) {
	if jsonscan.Kind(raw) != '{' {
		return e, "is not an object"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return e, "is not an object"
	}
	// connector
	v, ok := obj["connector"]
	if !ok {
		return e, "has no connector"
	}
	if e.Connector, ok = decodeString(v); !ok || !validConnector(e.Connector) {
		return e, "connector must be 1 to 64 characters of [A-Za-z0-9_-]"
	}
	// operations
	v, ok = obj["operations"]
	if !ok {
		return e, "has no operations"
	}
	const opsProblem = "operations must be a list of 1 to 256 globs of 1 to 256 characters"
	if jsonscan.Kind(v) != '[' {
		return e, opsProblem
	}
	var ops []json.RawMessage
	if err := json.Unmarshal(v, &ops); err != nil || len(ops) == 0 || len(ops) > MaxOperations {
		return e, opsProblem
	}
	e.Operations = make([]string, len(ops))
	for j, o := range ops {
		g, ok := decodeString(o)
		if n := canon.UTF16Len(g); !ok || n == 0 || n > MaxGlobLen {
			return e, opsProblem
		}
		e.Operations[j] = g
	}
	// mode
	v, ok = obj["mode"]
	if !ok {
		return e, "has no mode"
	}
	if e.Mode, ok = decodeString(v); !ok || (e.Mode != ModeRead && e.Mode != ModeWrite) {
		return e, "mode must be read or write"
	}
	// account
	if v, ok = obj["account"]; ok {
		if e.Account, ok = decodeString(v); !ok || !validAccount(e.Account) {
			return e, "account must be 1 to 128 characters of [A-Za-z0-9._@-]"
		}
	}
	// confirm
	if v, ok = obj["confirm"]; ok {
		if e.Confirm, ok = decodeString(v); !ok || e.Confirm != ConfirmAllow {
			return e, "confirm may only be allow"
		}
	}
	return e, ""
}

// FileError is the error of [ParseFile]. Its message is the one `anvil
// connectors index` prints after the file name; Unwrap gives the parse error.
type FileError struct {
	Err error
}

// notAGrant is FileError's message; the caller prefixes the file name.
const notAGrant = "is not a grant: expected a JSON array of {connector, operations, mode} entries."

// Error returns "is not a grant: expected a JSON array of {connector,
// operations, mode} entries." (the caller prefixes the file name).
func (e *FileError) Error() string { return notAGrant }

// Unwrap returns the underlying parse error (which wraps [ErrInvalidGrant]).
func (e *FileError) Unwrap() error { return e.Err }

// ParseFile parses a grant file for `anvil connectors index --grants`: a JSON
// array of entries, or an object with "grants" (or, when that is absent or
// null, "by_grants") holding one. It uses [Parse]; any failure is a
// [*FileError]. An empty list is allowed.
func ParseFile(b []byte) (List, error) {
	raw := trimSpace(b)
	if jsonscan.Kind(raw) == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, &FileError{Err: fmt.Errorf("%w: not valid JSON", ErrInvalidGrant)}
		}
		v, ok := obj["grants"]
		if !ok || jsonscan.Kind(v) == 'n' {
			v, ok = obj["by_grants"]
		}
		if !ok {
			return nil, &FileError{Err: fmt.Errorf("%w: the object has no grants", ErrInvalidGrant)}
		}
		raw = v
	}
	l, err := Parse(raw)
	if err != nil {
		return nil, &FileError{Err: err}
	}
	return l, nil
}

// decodeString decodes a JSON string value; ok is false for any other type.
func decodeString(raw json.RawMessage) (string, bool) {
	if jsonscan.Kind(raw) != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// validConnector reports whether s matches ^[A-Za-z0-9_-]{1,64}$.
func validConnector(s string) bool {
	if len(s) == 0 || len(s) > MaxConnector {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// validAccount reports whether s matches ^[A-Za-z0-9._@-]{1,128}$.
func validAccount(s string) bool {
	if len(s) == 0 || len(s) > MaxAccount {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '_' && c != '@' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
