package effect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

var propNames = []string{"a", "b", "c", "d"}

type refSeg struct {
	name  string
	index int
	isIdx bool
}

type refSource struct {
	isConst  bool
	constRaw json.RawMessage
	root     string
	segs     []refSeg
	optional bool
}

func (s refSource) text() string {
	var b strings.Builder
	b.WriteString(s.root)
	for _, g := range s.segs {
		if g.isIdx {
			b.WriteString("[" + strconv.Itoa(g.index) + "]")
		} else {
			b.WriteString("." + g.name)
		}
	}
	if s.optional {
		b.WriteString("?")
	}
	return b.String()
}

// genJSON makes a value encoding/json can decode into (the gateway's usual
// input).
func genJSON(r *rand.Rand, depth int) any {
	n := 6
	if depth < 3 {
		n = 8
	}
	switch r.Intn(n) {
	case 0:
		return nil
	case 1:
		return r.Intn(2) == 0
	case 2:
		switch r.Intn(4) {
		case 0:
			return float64(r.Intn(1000))
		case 1:
			return r.NormFloat64() * 1e6
		case 2:
			return float64(r.Int63())
		default:
			return r.Float64() * 1e-8
		}
	case 3:
		runes := []rune{'a', 'ø', '🚀', '"', '\\', '\n', 0x7f, 0x2028, '<'}
		var b strings.Builder
		for i := r.Intn(6); i > 0; i-- {
			b.WriteRune(runes[r.Intn(len(runes))])
		}
		return b.String()
	case 4:
		return json.Number(strconv.Itoa(r.Intn(100000) - 500))
	case 5:
		return r.Intn(100)
	case 6:
		l := make([]any, r.Intn(4))
		for i := range l {
			l[i] = genJSON(r, depth+1)
		}
		return l
	default:
		m := map[string]any{}
		for i := r.Intn(4); i > 0; i-- {
			m[propNames[r.Intn(len(propNames))]] = genJSON(r, depth+1)
		}
		return m
	}
}

// genOdd adds Go values a decoder would not produce.
func genOdd(r *rand.Rand, depth int) any {
	switch r.Intn(12) {
	case 0:
		return []string{"x", "y"}
	case 1:
		return map[string]string{"a": "v"}
	case 2:
		return struct{ A int }{A: 1}
	case 3:
		return int64(-7)
	case 4:
		return map[string]any(nil)
	case 5:
		return []any{map[string]any{"a": []string{"q"}}}
	}
	return genJSON(r, depth)
}

func genSource(r *rand.Rand) refSource {
	if r.Intn(5) == 0 {
		raw, _ := json.Marshal(genJSON(r, 1))
		return refSource{isConst: true, constRaw: raw}
	}
	s := refSource{optional: r.Intn(3) == 0}
	switch r.Intn(5) {
	case 0:
		s.root = air.RootIdempotencyKey
		return s
	case 1, 2:
		s.root = air.RootRequest
	default:
		s.root = air.RootResponse
	}
	for i := 1 + r.Intn(3); i > 0; i-- {
		if r.Intn(3) == 0 {
			s.segs = append(s.segs, refSeg{index: r.Intn(3), isIdx: true})
		} else {
			s.segs = append(s.segs, refSeg{name: propNames[r.Intn(len(propNames))]})
		}
	}
	return s
}

// refWalk is the mapping applied by hand.
func refWalk(s refSource, request map[string]any, response any, key string) (any, bool) {
	var cur any
	switch s.root {
	case air.RootIdempotencyKey:
		return key, key != ""
	case air.RootRequest:
		cur = request
	default:
		cur = response
	}
	for _, g := range s.segs {
		if g.isIdx {
			l, ok := cur.([]any)
			if !ok || g.index >= len(l) {
				return nil, false
			}
			cur = l[g.index]
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := m[g.name]
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, cur != nil
}

// jsonOf is the reference encoding of one expected value, decoded again.
func jsonOf(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("reference marshal %#v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPropertyMappingResolution(t *testing.T) {
	r := rand.New(rand.NewSource(20260601))
	tools := ToolMap{"svc.things.delete": "svc__svc_delete_thing", "svc.things.get": "svc__svc_get_thing"}
	var available, unavailable, drafts int
	for iter := 0; iter < 4000; iter++ {
		var request map[string]any
		if r.Intn(8) != 0 {
			request = map[string]any{}
			for i := r.Intn(5); i > 0; i-- {
				request[propNames[r.Intn(len(propNames))]] = genOdd(r, 1)
			}
		}
		response := genOdd(r, 0)
		key := ""
		if r.Intn(2) == 0 {
			key = "K-" + strconv.Itoa(iter)
		}
		var srcs []refSource
		var mapping air.Mapping
		for i := r.Intn(6); i > 0; i-- {
			s := genSource(r)
			srcs = append(srcs, s)
			as := air.ArgSource{Path: s.text()}
			if s.isConst {
				as = air.ArgSource{Const: s.constRaw}
			}
			mapping = append(mapping, air.MappingEntry{Name: "arg" + strconv.Itoa(len(srcs)), ArgSource: as})
		}
		op := &air.Operation{ID: "svc.things.create", Effect: air.Effect{Kind: air.KindMutation, Class: air.ClassReversible,
			Inverse: &air.FollowUp{Operation: "svc.things.delete", Arguments: mapping},
			Lookup:  &air.Lookup{Operation: "svc.things.get", By: "id", Arguments: mapping}}}

		// The expectation, by hand.
		var wantNames []string
		var wantVals []any
		missing := ""
		for i, s := range srcs {
			if s.isConst {
				wantNames = append(wantNames, mapping[i].Name)
				wantVals = append(wantVals, s.constRaw)
				continue
			}
			v, ok := refWalk(s, request, response, key)
			if !ok {
				if s.optional {
					continue
				}
				missing = strings.TrimSuffix(s.text(), "?")
				break
			}
			wantNames = append(wantNames, mapping[i].Name)
			wantVals = append(wantVals, v)
		}

		rep := Build(op, Call{Request: request, Response: response, IdempotencyKey: key}, tools)
		ctx := fmt.Sprintf("iter %d mapping %s request %#v response %#v", iter, mustJSON(mapping), request, response)
		if missing != "" {
			unavailable++
			if rep.Undo != nil || rep.Lookup != nil || rep.UndoUnavailable != UndoUnavailablePrefix+missing+" names nothing in this call" {
				t.Fatalf("%s: want unavailable %q, got undo %+v reason %q", ctx, missing, rep.Undo, rep.UndoUnavailable)
			}
		} else {
			available++
			if rep.Undo == nil || rep.Lookup == nil || rep.UndoUnavailable != "" {
				t.Fatalf("%s: want undo, got reason %q", ctx, rep.UndoUnavailable)
			}
			var gotNames []string
			var gotVals []any
			for _, a := range rep.Undo.Arguments {
				gotNames = append(gotNames, a.Name)
				gotVals = append(gotVals, a.Value)
			}
			if !reflect.DeepEqual(gotNames, wantNames) || !reflect.DeepEqual(gotVals, wantVals) {
				t.Fatalf("%s:\n got %v %#v\nwant %v %#v", ctx, gotNames, gotVals, wantNames, wantVals)
			}
		}

		// The JSON keeps the order and the values.
		js, _ := rep.MarshalJSON()
		if !json.Valid(js) {
			t.Fatalf("%s: invalid JSON %s", ctx, js)
		}
		if rep.Undo != nil {
			var doc struct {
				Undo struct {
					Arguments json.RawMessage `json:"arguments"`
				} `json:"undo"`
			}
			if err := json.Unmarshal(js, &doc); err != nil {
				t.Fatal(err)
			}
			names := objectKeys(t, doc.Undo.Arguments)
			if len(names) != len(wantNames) || (len(names) > 0 && !reflect.DeepEqual(names, wantNames)) {
				t.Fatalf("%s: JSON order %v, want %v", ctx, names, wantNames)
			}
			var got map[string]any
			if err := json.Unmarshal(doc.Undo.Arguments, &got); err != nil {
				t.Fatal(err)
			}
			for i, n := range wantNames {
				if want := jsonOf(t, wantVals[i]); !reflect.DeepEqual(got[n], want) {
					t.Fatalf("%s: %s = %#v, want %#v (%s)", ctx, n, got[n], want, js)
				}
			}
		}
		h := HeaderValue(rep)
		var a, b any
		if json.Unmarshal([]byte(h), &a) != nil || json.Unmarshal(js, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: header %s differs from %s", ctx, h, js)
		}

		// Draft arguments read the request only.
		draftOp := &air.Operation{ID: "svc.things.create", Effect: air.Effect{Kind: air.KindMutation, Class: air.ClassIrreversible,
			Draft: &air.Draft{Operation: "svc.things.delete", Arguments: mapping, Handle: "response.a", Promote: air.Call{Operation: "svc.things.get", Arguments: mapping}}}}
		_, dargs, derr := ResolveDraft(draftOp, request, tools)
		wantMissing := ""
		for i, s := range srcs {
			if s.isConst {
				continue
			}
			_, ok := refWalk(s, request, nil, "")
			if s.root != air.RootRequest {
				ok = false
			}
			if !ok && !s.optional {
				wantMissing = mapping[i].Name
				break
			}
		}
		if wantMissing != "" {
			if derr == nil || string(derr.Details) != `{"code":"effect/draft_argument_missing","argument":"`+wantMissing+`"}` {
				t.Fatalf("%s: draft want missing %s, got %v", ctx, wantMissing, derr)
			}
		} else if derr != nil || dargs == nil {
			t.Fatalf("%s: draft error %v", ctx, derr)
		} else {
			drafts++
		}
		_ = BuildStaged(draftOp, request, response, tools)
	}
	// Both outcomes must be well exercised for the property to mean much.
	if available < 500 || unavailable < 500 || drafts < 500 {
		t.Errorf("weak coverage: %d available, %d unavailable, %d drafts", available, unavailable, drafts)
	}
	t.Logf("%d available, %d unavailable, %d drafts resolved", available, unavailable, drafts)
}

func mustJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(buf.String())
}
