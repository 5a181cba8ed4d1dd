package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
)

// effectReport is _meta.effect / X-Anvil-Effect.
type effectReport struct {
	Class          string          `json:"class"`
	Operation      string          `json:"operation"`
	IdempotencyKey *string         `json:"idempotency_key"`
	Undo           *followUp       `json:"undo"`
	DeadlineMS     json.RawMessage `json:"deadline_ms"`
	Lookup         json.RawMessage `json:"lookup"`
	Staged         *staged         `json:"staged"`
}

// followUp is an undo, compensation, promote or discard call.
type followUp struct {
	Kind      string          `json:"kind,omitempty"`
	Operation string          `json:"operation"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// args decodes the follow-up's arguments (numbers kept exact).
func (f *followUp) args() (map[string]any, error) {
	var m map[string]any
	if err := decodeJSON(f.Arguments, &m); err != nil {
		return nil, fmt.Errorf("%s arguments: %v", f.Tool, err)
	}
	return m, nil
}

// staged is a staged call's report.
type staged struct {
	DraftOperation string          `json:"draft_operation"`
	Handle         json.RawMessage `json:"handle"`
	Promote        *followUp       `json:"promote"`
	Discard        *followUp       `json:"discard"`
}

// parseEffect decodes an effect report.
func parseEffect(raw []byte) (*effectReport, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("no effect report")
	}
	var e effectReport
	if err := decodeJSON(raw, &e); err != nil {
		return nil, fmt.Errorf("effect report %s: %v", brief(raw), err)
	}
	return &e, nil
}

// objectKeys returns the top-level keys of a JSON object in document order.
func objectKeys(raw []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, errors.New("object key is not a string")
		}
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON object")
	}
	return keys, nil
}

// AuditFields are the audit line's fields in their documented order
// (reference §e; the effect contract adds the three last).
var AuditFields = []string{
	"time", "sub", "by_tenant", "by_branch", "by_turn", "connector", "account",
	"operation", "decision", "grant", "upstream_status", "latency_ms",
	"input_sha256", "error_code", "rule", "dry_run", "trace_id",
	"effect_class", "ledger_id", "staged_for",
}

// auditLine is one parsed audit line.
type auditLine struct {
	Keys   []string
	Fields map[string]any
	Raw    string
}

// str returns a string field, or "" when absent or not a string.
func (a auditLine) str(k string) string {
	s, _ := a.Fields[k].(string)
	return s
}

// parseAudit parses a whole audit log. Every line must be a complete,
// newline-terminated JSON object (Branchyard consumes only those).
func parseAudit(data []byte) ([]auditLine, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if data[len(data)-1] != '\n' {
		return nil, errors.New("the audit log's last line is not newline-terminated")
	}
	var out []auditLine
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		a, err := parseAuditLine([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("audit line %d: %v", i+1, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// parseAuditLine parses one audit line, keeping its key order.
func parseAuditLine(line []byte) (auditLine, error) {
	keys, err := objectKeys(line)
	if err != nil {
		return auditLine{}, err
	}
	var fields map[string]any
	if err := decodeJSON(line, &fields); err != nil {
		return auditLine{}, err
	}
	return auditLine{Keys: keys, Fields: fields, Raw: string(line)}, nil
}

// readAuditFile reads and parses the audit log at path; a missing file is
// an empty log.
func readAuditFile(path string) ([]auditLine, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseAudit(b)
}

// auditExtras are the keys a line may add after AuditFields, in this
// order, each only when it applies: "replay" (a write answered from the
// gateway's idempotency ledger; its value is checked by the step that
// expects the replay), "resolved_by" and "parent_trace_id"; then the audit
// chain's "seq" and "prev", which every line the gateway writes ends with.
var auditExtras = []string{"replay", "resolved_by", "parent_trace_id"}

// fieldOrderProblem says how a line's keys differ from AuditFields (plus
// the optional extras and the chain), or "".
func fieldOrderProblem(keys []string) string {
	if len(keys) >= len(AuditFields) && reflect.DeepEqual(keys[:len(AuditFields)], AuditFields) {
		rest := keys[len(AuditFields):]
		for _, k := range auditExtras {
			if len(rest) > 0 && rest[0] == k {
				rest = rest[1:]
			}
		}
		if len(rest) == 0 || reflect.DeepEqual(rest, []string{"seq", "prev"}) {
			return ""
		}
	}
	return fmt.Sprintf("keys are %s, want %s (then optionally %s, and seq,prev)", strings.Join(keys, ","), strings.Join(AuditFields, ","), strings.Join(auditExtras, ","))
}

// sameJSON reports whether got, re-encoded, equals want's encoding (maps
// encode with sorted keys, so key order does not matter here).
func sameJSON(got, want any) bool {
	g, err1 := json.Marshal(got)
	w, err2 := json.Marshal(want)
	return err1 == nil && err2 == nil && bytes.Equal(normalizeJSON(g), normalizeJSON(w))
}

// normalizeJSON re-encodes b through a generic decode so numbers and maps
// compare by value.
func normalizeJSON(b []byte) []byte {
	var v any
	if decodeJSON(b, &v) != nil {
		return b
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return out
}

// expectFields compares each wanted field with the line's value.
func expectFields(a auditLine, want map[string]any, order []string) error {
	var bad []string
	for _, k := range order {
		w := want[k]
		g, ok := a.Fields[k]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s missing", k))
			continue
		}
		if !sameJSON(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			bad = append(bad, fmt.Sprintf("%s is %s, want %s", k, gb, wb))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}
