// Package diag holds source positions and coded compile diagnostics, with
// sorted lists and text and JSON printers.
package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Levels of a diagnostic (AIR's).
const (
	Error   = air.LevelError
	Warning = air.LevelWarning
	Info    = air.LevelInfo
)

// Level is a diagnostic's level (air.Level).
type Level = air.Level

// Pos is a position in a source file (air.Pos: the one position type, so
// a diagnostic is recorded in AIR without conversion).
type Pos = air.Pos

// Diagnostic is one coded finding (air.Diagnostic: the compiler's and
// AIR's are one type).
type Diagnostic = air.Diagnostic

// List is a collection of diagnostics.
type List []Diagnostic

// Add appends a diagnostic.
func (l *List) Add(pos Pos, level air.Level, code, format string, args ...any) {
	*l = append(*l, Diagnostic{Pos: pos, Level: level, Code: code, Message: fmt.Sprintf(format, args...)})
}

// Errorf appends an error.
func (l *List) Errorf(pos Pos, code, format string, args ...any) {
	l.Add(pos, Error, code, format, args...)
}

// Warnf appends a warning.
func (l *List) Warnf(pos Pos, code, format string, args ...any) {
	l.Add(pos, Warning, code, format, args...)
}

// Infof appends an info diagnostic.
func (l *List) Infof(pos Pos, code, format string, args ...any) {
	l.Add(pos, Info, code, format, args...)
}

// HasErrors reports whether any diagnostic is an error.
func (l List) HasErrors() bool { return l.Count(Error) > 0 }

// Errors returns the error diagnostics, in order (nil when there are none).
func (l List) Errors() List {
	var out List
	for _, d := range l {
		if d.Level == Error {
			out = append(out, d)
		}
	}
	return out
}

// Count counts the diagnostics of one level.
func (l List) Count(level air.Level) int {
	n := 0
	for _, d := range l {
		if d.Level == level {
			n++
		}
	}
	return n
}

// Sort orders diagnostics by file, line, column, code and message.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Message < b.Message
	})
}

// WriteText prints one diagnostic per line.
func (l List) WriteText(w io.Writer) error {
	for _, d := range l {
		if _, err := fmt.Fprintln(w, d.String()); err != nil {
			return err
		}
	}
	return nil
}

// reported is a diagnostic's shape in `anvil compile --format json`: the
// position as a structured object, where AIR records a path string.
type reported struct {
	Pos          Pos       `json:"pos"`
	Level        air.Level `json:"level"`
	Code         string    `json:"code"`
	Message      string    `json:"message"`
	OperationID  string    `json:"operationId,omitempty"`
	CapabilityID string    `json:"capabilityId,omitempty"`
}

// MarshalJSON writes the list in the reported shape (a nil list is null,
// an empty one []).
func (l List) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("null"), nil
	}
	out := make([]reported, len(l))
	for i, d := range l {
		out[i] = reported{Pos: d.Pos, Level: d.Level, Code: d.Code, Message: d.Message, OperationID: d.OperationID, CapabilityID: d.CapabilityID}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *List) UnmarshalJSON(b []byte) error {
	var in []reported
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if in == nil {
		*l = nil
		return nil
	}
	*l = make(List, len(in))
	for i, r := range in {
		(*l)[i] = Diagnostic{Pos: r.Pos, Level: r.Level, Code: r.Code, Message: r.Message, OperationID: r.OperationID, CapabilityID: r.CapabilityID}
	}
	return nil
}

// WriteJSON prints the list as a JSON array (an empty list is []).
func (l List) WriteJSON(w io.Writer) error {
	if l == nil {
		l = List{}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(l)
}

// Failure is a fatal input problem (the source or manifest cannot be read at
// all). It carries the diagnostics that explain it.
type Failure struct {
	Diagnostics List
}

// Error renders the first diagnostic.
func (f *Failure) Error() string {
	if len(f.Diagnostics) == 0 {
		return "compile failed"
	}
	return f.Diagnostics[0].String()
}

// Fail returns a Failure holding one error diagnostic.
func Fail(pos Pos, code, format string, args ...any) *Failure {
	var l List
	l.Errorf(pos, code, format, args...)
	return &Failure{Diagnostics: l}
}
