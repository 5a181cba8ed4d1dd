package effect

import (
	"encoding/json"
	"github.com/anvil-dev/anvil/runtime/canon"
	"strconv"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Contract is the operation's declared effect contract as tools/list
// publishes it under _meta["anvil/effect_contract"] (the class goes under
// _meta["anvil/effect_class"] too), or nil when the operation declares none
// (air.HasEffectContract). Its shape, in key order:
//
//	{class, inverse?, compensate?, lookup?, draft?}
//	inverse, compensate: {operation, arguments, deadline?: {within_ms} | {at}}
//	lookup:              {operation, by, arguments}
//	draft:               {operation, arguments, handle, promote: {operation, arguments}, discard?}
//
// Operations are AIR ids; arguments keep the manifest's mapping order, each
// a path string or {"const": value}. A reconciler resolves a lookup from the
// request and the key alone with it.
func Contract(op *air.Operation) json.RawMessage {
	if op == nil || !air.HasEffectContract(op) {
		return nil
	}
	e := &op.Effect
	b := make([]byte, 0, 256)
	b = append(b, `{"class":`...)
	b = canon.AppendString(b, string(air.EffectClassOf(op)))
	if e.Inverse != nil {
		b = append(b, `,"inverse":`...)
		b = appendContractFollowUp(b, e.Inverse)
	}
	if e.Compensate != nil {
		b = append(b, `,"compensate":`...)
		b = appendContractFollowUp(b, e.Compensate)
	}
	if l := e.Lookup; l != nil {
		b = append(b, `,"lookup":{"operation":`...)
		b = canon.AppendString(b, l.Operation)
		b = append(b, `,"by":`...)
		b = canon.AppendString(b, string(l.By))
		b = append(b, `,"arguments":`...)
		b = appendMapping(b, l.Arguments)
		b = append(b, '}')
	}
	if d := e.Draft; d != nil {
		b = append(b, `,"draft":{"operation":`...)
		b = canon.AppendString(b, d.Operation)
		b = append(b, `,"arguments":`...)
		b = appendMapping(b, d.Arguments)
		b = append(b, `,"handle":`...)
		b = canon.AppendString(b, d.Handle)
		b = append(b, `,"promote":`...)
		b = appendContractCall(b, &d.Promote)
		if d.Discard != nil {
			b = append(b, `,"discard":`...)
			b = appendContractCall(b, d.Discard)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func appendContractFollowUp(b []byte, f *air.FollowUp) []byte {
	b = append(b, `{"operation":`...)
	b = canon.AppendString(b, f.Operation)
	b = append(b, `,"arguments":`...)
	b = appendMapping(b, f.Arguments)
	if d := f.Deadline; d != nil {
		b = append(b, `,"deadline":{`...)
		if d.WithinMs != nil {
			b = append(b, `"within_ms":`...)
			b = strconv.AppendInt(b, *d.WithinMs, 10)
			if d.At != "" {
				b = append(b, ',')
			}
		}
		if d.At != "" {
			b = append(b, `"at":`...)
			b = canon.AppendString(b, d.At)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func appendContractCall(b []byte, c *air.Call) []byte {
	b = append(b, `{"operation":`...)
	b = canon.AppendString(b, c.Operation)
	b = append(b, `,"arguments":`...)
	b = appendMapping(b, c.Arguments)
	return append(b, '}')
}

// appendMapping writes an argument mapping in order: a path as a string, a
// literal as {"const": value}.
func appendMapping(b []byte, m air.Mapping) []byte {
	b = append(b, '{')
	for i, e := range m {
		if i > 0 {
			b = append(b, ',')
		}
		b = canon.AppendString(b, e.Name)
		b = append(b, ':')
		if e.ArgSource.IsConst() {
			b = append(b, `{"const":`...)
			b = appendRaw(b, e.ArgSource.Const)
			b = append(b, '}')
		} else {
			b = canon.AppendString(b, e.ArgSource.Path)
		}
	}
	return append(b, '}')
}
