package effect

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/anvil-dev/anvil/runtime/jsonscan"
)

// DecodeReport reads an effect report back from its JSON
// (Report.AppendJSON), so that a replayed call reports exactly the first
// call's effect: re-encoding the result gives the same bytes. Argument
// values and the staged handle stay json.RawMessage, which the report
// encodes verbatim (compacted, NumberExact), in their recorded order. It
// refuses a key the report does not have and a value of the wrong type.
func DecodeReport(b []byte) (*Report, error) {
	m, err := members(b)
	if err != nil {
		return nil, err
	}
	r := &Report{}
	for _, f := range m {
		v := f.Value
		switch f.Key {
		case "class":
			err = str(v, &r.Class)
		case "operation":
			err = str(v, &r.Operation)
		case "idempotency_key":
			err = str(v, &r.IdempotencyKey)
		case "undo":
			if !isNull(v) {
				r.Undo = &Undo{}
				err = followUp(v, &r.Undo.FollowUp, func(k string, v []byte) error {
					if k == "kind" {
						return str(v, &r.Undo.Kind)
					}
					return errUnknownKey
				})
			}
		case "deadline_ms":
			r.DeadlineMs, err = millis(v)
		case "lookup":
			if !isNull(v) {
				r.Lookup = &Lookup{}
				err = followUp(v, &r.Lookup.FollowUp, func(k string, v []byte) error {
					if k == "by" {
						return str(v, &r.Lookup.By)
					}
					return errUnknownKey
				})
			}
		case "compensate":
			r.Compensate = &Compensation{}
			err = followUp(v, &r.Compensate.FollowUp, func(k string, v []byte) error {
				if k == "deadline_ms" {
					var e error
					r.Compensate.DeadlineMs, e = millis(v)
					return e
				}
				return errUnknownKey
			})
		case "undo_unavailable":
			err = str(v, &r.UndoUnavailable)
		case "staged":
			if !isNull(v) {
				r.Staged, err = staged(v)
			}
		default:
			err = errUnknownKey
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

var errUnknownKey = errors.New("recorded effect report: unknown key")

func members(b []byte) ([]jsonscan.Member, error) {
	m, ok := jsonscan.ObjectMembers(bytes.TrimSpace(b))
	if !ok {
		return nil, errors.New("recorded effect report: not a JSON object")
	}
	return m, nil
}

func isNull(v []byte) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// str reads a string, or null as "".
func str(v []byte, dst *string) error {
	if isNull(v) {
		*dst = ""
		return nil
	}
	s, ok := jsonscan.String(v)
	if !ok {
		return errors.New("recorded effect report: not a string")
	}
	*dst = s
	return nil
}

func millis(v []byte) (*int64, error) {
	if isNull(v) {
		return nil, nil
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil {
		return nil, errors.New("recorded effect report: bad deadline")
	}
	return &n, nil
}

// followUp reads {operation, tool, arguments, …}; other keys go to extra.
func followUp(v []byte, f *FollowUp, extra func(k string, v []byte) error) error {
	m, err := members(v)
	if err != nil {
		return err
	}
	for _, x := range m {
		switch x.Key {
		case "operation":
			err = str(x.Value, &f.Operation)
		case "tool":
			err = str(x.Value, &f.Tool)
		case "arguments":
			f.Arguments, err = args(x.Value)
		default:
			err = extra(x.Key, x.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func args(v []byte) (Args, error) {
	m, err := members(v)
	if err != nil {
		return nil, err
	}
	a := make(Args, 0, len(m))
	for _, x := range m {
		a = append(a, Arg{Name: x.Key, Value: json.RawMessage(x.Value)})
	}
	return a, nil
}

func optionalFollowUp(v []byte) (*FollowUp, error) {
	if isNull(v) {
		return nil, nil
	}
	f := &FollowUp{}
	return f, followUp(v, f, func(string, []byte) error { return errUnknownKey })
}

func staged(v []byte) (*Staged, error) {
	m, err := members(v)
	if err != nil {
		return nil, err
	}
	s := &Staged{}
	for _, x := range m {
		switch x.Key {
		case "draft_operation":
			err = str(x.Value, &s.DraftOperation)
		case "handle":
			if !isNull(x.Value) {
				s.Handle = json.RawMessage(x.Value)
			}
		case "promote":
			s.Promote, err = optionalFollowUp(x.Value)
		case "discard":
			s.Discard, err = optionalFollowUp(x.Value)
		case "unavailable":
			err = str(x.Value, &s.Unavailable)
		default:
			err = errUnknownKey
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}
