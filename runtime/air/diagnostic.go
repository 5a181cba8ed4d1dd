package air

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Pos is a position in a source file. Line and Col are 1-based; zero means
// unknown.
type Pos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"column,omitempty"`
}

// String renders file:line:col, leaving out unknown parts ("-" without a
// file).
func (p Pos) String() string {
	switch {
	case p.File == "":
		return "-"
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// parsePos reads what String wrote: a trailing :line or :line:col is taken
// as such, so any position renders back to the same text.
func parsePos(s string) Pos {
	p := Pos{File: s}
	num := func(t string) (string, int, bool) {
		i := strings.LastIndexByte(t, ':')
		if i <= 0 {
			return t, 0, false
		}
		n, err := strconv.Atoi(t[i+1:])
		if err != nil || n <= 0 || strconv.Itoa(n) != t[i+1:] {
			return t, 0, false
		}
		return t[:i], n, true
	}
	rest, last, ok := num(s)
	if !ok {
		return p
	}
	if file, line, ok := num(rest); ok {
		return Pos{File: file, Line: line, Col: last}
	}
	return Pos{File: rest, Line: last}
}

// Diagnostic is one coded compile finding: the compiler's (compiler/diag's
// List holds these) and, recorded, AIR's. One type, two wire shapes: AIR
// writes the position as one "path" string (file:line:col, the file as the
// bundle names it), `anvil compile --format json` as a structured "pos"
// object (diag.List's encoding).
type Diagnostic struct {
	Pos          Pos
	Level        Level
	Code         string
	Message      string
	OperationID  string
	CapabilityID string
}

// String renders "file:line:col: level code: message".
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s %s: %s", d.Pos, d.Level, d.Code, d.Message)
}

// Path is the position as AIR records it: "" without a file.
func (d Diagnostic) Path() string {
	if d.Pos.File == "" {
		return ""
	}
	return d.Pos.String()
}

// recorded is a Diagnostic's AIR shape.
type recorded struct {
	Level        Level  `json:"level"`
	Code         string `json:"code"`
	Message      string `json:"message"`
	OperationID  string `json:"operationId,omitempty"`
	CapabilityID string `json:"capabilityId,omitempty"`
	Path         string `json:"path,omitempty"`
}

// MarshalJSON writes the AIR shape.
func (d Diagnostic) MarshalJSON() ([]byte, error) {
	return json.Marshal(recorded{Level: d.Level, Code: d.Code, Message: d.Message,
		OperationID: d.OperationID, CapabilityID: d.CapabilityID, Path: d.Path()})
}

// UnmarshalJSON reads the AIR shape.
func (d *Diagnostic) UnmarshalJSON(b []byte) error {
	var r recorded
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	*d = Diagnostic{Level: r.Level, Code: r.Code, Message: r.Message, OperationID: r.OperationID, CapabilityID: r.CapabilityID}
	if r.Path != "" {
		d.Pos = parsePos(r.Path)
	}
	return nil
}
