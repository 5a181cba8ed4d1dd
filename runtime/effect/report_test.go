package effect

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
)

const seedKey = "01JBRANCHYARDLEDGER00000001"

// The seed's REST example, byte for byte.
const seedCommentReport = `{"class":"reversible","operation":"github.comments.create","idempotency_key":"01JBRANCHYARDLEDGER00000001","undo":{"kind":"inverse","operation":"github.comments.delete","tool":"github__github_delete_comment","arguments":{"owner":"octo","repo":"hello","comment_id":100}},"deadline_ms":null,"lookup":null}`

func commentCall(t testing.TB, decodeFn func(testing.TB, string) any) Call {
	req, _ := decodeFn(t, `{"owner": "octo", "repo": "hello", "issue_number": 2, "body": "Looks good."}`).(map[string]any)
	return Call{
		Request:        req,
		Response:       decodeFn(t, `{"id":100,"body":"Looks good."}`),
		IdempotencyKey: seedKey,
		Now:            time.UnixMilli(1_700_000_000_000),
	}
}

func TestCommentCreateMatchesSeed(t *testing.T) {
	ops := loadOps(t)
	tools := fleetTools(ops)
	for name, fn := range map[string]func(testing.TB, string) any{"float64": decode, "json.Number": decodeNumber} {
		t.Run(name, func(t *testing.T) {
			r := Build(ops["github.comments.create"], commentCall(t, fn), tools)
			if got := marshal(t, r); got != seedCommentReport {
				t.Errorf("report\n got %s\nwant %s", got, seedCommentReport)
			}
			if got := HeaderValue(r); got != seedCommentReport {
				t.Errorf("header\n got %s\nwant %s", got, seedCommentReport)
			}
			// Through encoding/json, as the MCP SDK marshals _meta.
			b, err := json.Marshal(map[string]any{"effect": r})
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"effect":` + seedCommentReport + `}`; string(b) != want {
				t.Errorf("json.Marshal\n got %s\nwant %s", b, want)
			}
		})
	}
}

func TestBuildReports(t *testing.T) {
	ops := loadOps(t)
	tools := fleetTools(ops)
	releaseReq := `{"owner":"octo","repo":"hello","tag_name":"v1.0.0","name":"One"}`
	tests := []struct {
		name string
		op   string
		call Call
		want string
	}{
		{
			name: "failed call keeps class, key and lookup",
			op:   "github.comments.create",
			call: Call{Request: obj(t, `{"owner":"octo","repo":"hello"}`), IdempotencyKey: "K1", Failed: true},
			want: `{"class":"reversible","operation":"github.comments.create","idempotency_key":"K1","undo":null,"deadline_ms":null,"lookup":null}`,
		},
		{
			name: "failed irreversible call resolves its lookup from the request",
			op:   "github.releases.create",
			call: Call{Request: obj(t, releaseReq), Response: decode(t, `{"message":"Validation Failed"}`), Failed: true},
			want: `{"class":"irreversible","operation":"github.releases.create","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":{"operation":"github.tags.get","tool":"github__github_get_release","arguments":{"owner":"octo","repo":"hello","tag":"v1.0.0"},"by":"id"}}`,
		},
		{
			name: "issue create compensates with a literal",
			op:   "github.issues.create",
			call: Call{Request: obj(t, `{"owner":"octo","repo":"hello","title":"x"}`), Response: decode(t, `{"number":3,"title":"x","state":"open"}`)},
			want: `{"class":"compensable","operation":"github.issues.create","idempotency_key":null,"undo":{"kind":"compensate","operation":"github.issues.update","tool":"github__github_update_issue","arguments":{"owner":"octo","repo":"hello","issue_number":3,"state":"closed"}},"deadline_ms":null,"lookup":null}`,
		},
		{
			name: "release create is irreversible with a lookup",
			op:   "github.releases.create",
			call: Call{Request: obj(t, releaseReq), Response: decode(t, `{"id":500,"tag_name":"v1.0.0","draft":false}`)},
			want: `{"class":"irreversible","operation":"github.releases.create","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":{"operation":"github.tags.get","tool":"github__github_get_release","arguments":{"owner":"octo","repo":"hello","tag":"v1.0.0"},"by":"id"}}`,
		},
		{
			name: "staged release",
			op:   "github.releases.create",
			call: Call{Request: obj(t, releaseReq), Response: decode(t, `{"id":500,"tag_name":"v1.0.0","name":"One","draft":true}`), Staged: true, IdempotencyKey: "K2"},
			want: `{"class":"irreversible","operation":"github.releases.create","idempotency_key":"K2","undo":null,"deadline_ms":null,"lookup":{"operation":"github.tags.get","tool":"github__github_get_release","arguments":{"owner":"octo","repo":"hello","tag":"v1.0.0"},"by":"id"},` +
				`"staged":{"draft_operation":"github.releases.create","handle":500,` +
				`"promote":{"operation":"github.releases.update","tool":"github__github_update_release","arguments":{"owner":"octo","repo":"hello","release_id":500,"draft":false}},` +
				`"discard":{"operation":"github.releases.delete","tool":"github__github_delete_release","arguments":{"owner":"octo","repo":"hello","release_id":500}}}}`,
		},
		{
			name: "failed staged call has no staged object",
			op:   "github.releases.create",
			call: Call{Request: obj(t, releaseReq), Staged: true, Failed: true},
			want: `{"class":"irreversible","operation":"github.releases.create","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":{"operation":"github.tags.get","tool":"github__github_get_release","arguments":{"owner":"octo","repo":"hello","tag":"v1.0.0"},"by":"id"}}`,
		},
		{
			name: "missing response path makes undo unavailable",
			op:   "github.comments.create",
			call: Call{Request: obj(t, `{"owner":"octo","repo":"hello"}`), Response: nil, IdempotencyKey: "K3"},
			want: `{"class":"reversible","operation":"github.comments.create","idempotency_key":"K3","undo":null,"deadline_ms":null,"lookup":null,"undo_unavailable":"undo unavailable: response.id names nothing in this call"}`,
		},
		{
			name: "a null value names nothing",
			op:   "github.comments.create",
			call: Call{Request: obj(t, `{"owner":"octo","repo":null}`), Response: decode(t, `{"id":100}`)},
			want: `{"class":"reversible","operation":"github.comments.create","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":null,"undo_unavailable":"undo unavailable: request.repo names nothing in this call"}`,
		},
		{
			name: "undeclared read is exactly six keys",
			op:   "github.issues.list",
			call: Call{Request: obj(t, `{"owner":"octo","repo":"hello"}`), Response: decode(t, `[{"number":2}]`), IdempotencyKey: ""},
			want: `{"class":"read","operation":"github.issues.list","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":null}`,
		},
		{
			name: "undeclared mutation is irreversible with no undo",
			op:   "github.comments.delete",
			call: Call{Request: obj(t, `{"owner":"octo","repo":"hello","comment_id":100}`)},
			want: `{"class":"irreversible","operation":"github.comments.delete","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":null}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Build(ops[tc.op], tc.call, tools)
			if got := marshal(t, r); got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestUndeclaredReadHasNoExtraKeys(t *testing.T) {
	ops := loadOps(t)
	r := Build(ops["github.issues.list"], Call{IdempotencyKey: "K"}, fleetTools(ops))
	b, _ := r.MarshalJSON()
	want := []string{"class", "operation", "idempotency_key", "undo", "deadline_ms", "lookup"}
	if got := objectKeys(t, b); !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
}

func TestFollowUpNotServed(t *testing.T) {
	ops := loadOps(t)
	tools := fleetTools(ops, "github.comments.delete", "github.tags.get")
	r := Build(ops["github.comments.create"], commentCall(t, decode), tools)
	if r.Undo != nil || r.UndoUnavailable != "undo unavailable: github.comments.delete is not served by this gateway" {
		t.Errorf("undo %+v, reason %q", r.Undo, r.UndoUnavailable)
	}
	rel := Build(ops["github.releases.create"], Call{Request: obj(t, `{"owner":"o","repo":"r","tag_name":"t"}`)}, tools)
	if rel.Lookup != nil || rel.UndoUnavailable != "" {
		t.Errorf("lookup %+v, reason %q", rel.Lookup, rel.UndoUnavailable)
	}
	// A nil Tools serves nothing.
	if r := Build(ops["github.comments.create"], commentCall(t, decode), nil); r.Undo != nil || r.UndoUnavailable == "" {
		t.Errorf("nil tools: %+v", r)
	}
	// A tool with an empty name is not usable, whatever served says.
	empty := ToolsFunc(func(string) (string, bool) { return "", true })
	if r := Build(ops["github.comments.create"], commentCall(t, decode), empty); r.Undo != nil {
		t.Errorf("empty tool name: %+v", r.Undo)
	}
}

// custom builds a reversible operation from its effect JSON.
func custom(t testing.TB, effect string) *air.Operation {
	t.Helper()
	op := &air.Operation{ID: "svc.things.create"}
	if err := json.Unmarshal([]byte(effect), &op.Effect); err != nil {
		t.Fatal(err)
	}
	return op
}

var customTools = ToolMap{"svc.things.delete": "svc__svc_delete_thing", "svc.things.close": "svc__svc_close_thing", "svc.things.get": "svc__svc_get_thing"}

func TestIndicesOptionalAndKeyRoot(t *testing.T) {
	op := custom(t, `{"kind":"mutation","class":"reversible",
		"inverse":{"operation":"svc.things.delete","arguments":{"id":"response.items[1].id","label":"request.labels[0]","note":"request.note?","deep":"response.items[0].tags[2]?","k":{"const":{"a":[1,2.5,"x"]}}}},
		"lookup":{"operation":"svc.things.get","by":"idempotency_key","arguments":{"key":"idempotency_key","first":"request.labels[0]"}}}`)
	call := Call{
		Request:        obj(t, `{"labels":["bug","p1"]}`),
		Response:       decode(t, `{"items":[{"id":1,"tags":["a"]},{"id":"x-2"}]}`),
		IdempotencyKey: "KEY",
	}
	got := marshal(t, Build(op, call, customTools))
	want := `{"class":"reversible","operation":"svc.things.create","idempotency_key":"KEY","undo":{"kind":"inverse","operation":"svc.things.delete","tool":"svc__svc_delete_thing","arguments":{"id":"x-2","label":"bug","k":{"a":[1,2.5,"x"]}}},"deadline_ms":null,` +
		`"lookup":{"operation":"svc.things.get","tool":"svc__svc_get_thing","arguments":{"key":"KEY","first":"bug"},"by":"idempotency_key"}}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	// No key went upstream: a lookup by key is unavailable.
	call.IdempotencyKey = ""
	if r := Build(op, call, customTools); r.Lookup != nil {
		t.Errorf("lookup without key: %+v", r.Lookup)
	}
	// An index past the end names nothing.
	call.Response = decode(t, `{"items":[{"id":1}]}`)
	if r := Build(op, call, customTools); r.UndoUnavailable != "undo unavailable: response.items[1].id names nothing in this call" {
		t.Errorf("reason %q", r.UndoUnavailable)
	}
}

func TestInvalidPathInAIR(t *testing.T) {
	op := custom(t, `{"kind":"mutation","class":"reversible","inverse":{"operation":"svc.things.delete","arguments":{"id":"response..id?"}}}`)
	r := Build(op, Call{Response: decode(t, `{"id":1}`)}, customTools)
	if r.Undo != nil || !strings.Contains(r.UndoUnavailable, "is not a valid argument path") {
		t.Errorf("%+v", r)
	}
}

func TestDeclaredButMissingFollowUps(t *testing.T) {
	for _, tc := range []struct{ effect, reason string }{
		{`{"kind":"mutation","class":"reversible"}`, "undo unavailable: the operation declares no inverse"},
		{`{"kind":"mutation","class":"compensable"}`, "undo unavailable: the operation declares no compensation"},
	} {
		r := Build(custom(t, tc.effect), Call{}, customTools)
		if r.UndoUnavailable != tc.reason {
			t.Errorf("%s: %q", tc.effect, r.UndoUnavailable)
		}
	}
}

func TestDeadlines(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_123)
	op := custom(t, `{"kind":"mutation","class":"reversible",
		"inverse":{"operation":"svc.things.delete","arguments":{"id":"response.id"},"deadline":{"withinMs":86400000}},
		"compensate":{"operation":"svc.things.close","arguments":{"id":"response.id","state":{"const":"closed"}},"deadline":{"at":"response.expires"}}}`)
	r := Build(op, Call{Response: decode(t, `{"id":7,"expires":"2030-01-02T03:04:05.678Z"}`), Now: now}, customTools)
	if r.DeadlineMs == nil || *r.DeadlineMs != now.UnixMilli()+86400000 {
		t.Fatalf("deadline %v", r.DeadlineMs)
	}
	wantAt := time.Date(2030, 1, 2, 3, 4, 5, 678e6, time.UTC).UnixMilli()
	if r.Compensate == nil || r.Compensate.DeadlineMs == nil || *r.Compensate.DeadlineMs != wantAt {
		t.Fatalf("compensate %+v", r.Compensate)
	}
	want := `{"class":"reversible","operation":"svc.things.create","idempotency_key":null,"undo":{"kind":"inverse","operation":"svc.things.delete","tool":"svc__svc_delete_thing","arguments":{"id":7}},"deadline_ms":1700086400123,"lookup":null,` +
		`"compensate":{"operation":"svc.things.close","tool":"svc__svc_close_thing","arguments":{"id":7,"state":"closed"},"deadline_ms":1893553445678}}`
	if got := marshal(t, r); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}

	// The zero Now is the wall clock: at least call time + within_ms.
	before := time.Now().UnixMilli()
	r = Build(op, Call{Response: decode(t, `{"id":7}`)}, customTools)
	if r.DeadlineMs == nil || *r.DeadlineMs < before+86400000 {
		t.Errorf("deadline %v < %d", r.DeadlineMs, before+86400000)
	}
	// An unresolvable at is null, and the compensation stays.
	if r.Compensate == nil || r.Compensate.DeadlineMs != nil {
		t.Errorf("compensate %+v", r.Compensate)
	}

	for _, tc := range []struct {
		v    any
		want any
	}{
		{decode(t, `1893553445678`), int64(1893553445678)},
		{json.Number("1893553445678"), int64(1893553445678)},
		{json.Number("1.5e3"), int64(1500)},
		{12.9, int64(12)},
		{"2030-01-02T03:04:05+01:00", time.Date(2030, 1, 2, 2, 4, 5, 0, time.UTC).UnixMilli()},
		{"tomorrow", nil},
		{true, nil},
		{1e300, nil},
	} {
		got := epochMs(tc.v)
		if tc.want == nil {
			if got != nil {
				t.Errorf("epochMs(%v) = %d, want nil", tc.v, *got)
			}
			continue
		}
		if got == nil || *got != tc.want.(int64) {
			t.Errorf("epochMs(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
	bad := []*air.Deadline{{}, {WithinMs: ptr(int64(1)), At: "response.x"}, {At: "request.x"}, {At: "response..x"}, {WithinMs: ptr(int64(-1))}}
	for _, d := range bad {
		if got := deadline(d, decode(t, `{"x":1}`), now); got != nil {
			t.Errorf("deadline(%+v) = %d, want nil", d, *got)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestHeaderValueEscapes(t *testing.T) {
	ops := loadOps(t)
	call := commentCall(t, decode)
	call.Request["owner"] = "øcto"
	call.Request["repo"] = "hello 🚀\u007f\u2028"
	r := Build(ops["github.comments.create"], call, fleetTools(ops))
	h := HeaderValue(r)
	for i := 0; i < len(h); i++ {
		if h[i] < 0x20 || h[i] > 0x7e {
			t.Fatalf("byte %#x at %d is not printable ASCII: %s", h[i], i, h)
		}
	}
	for _, want := range []string{`"owner":"\u00f8cto"`, `"repo":"hello \ud83d\ude80\u007f\u2028"`} {
		if !strings.Contains(h, want) {
			t.Errorf("header %s lacks %s", h, want)
		}
	}
	js, _ := r.MarshalJSON()
	if !reflect.DeepEqual(decode(t, h), decode(t, string(js))) {
		t.Errorf("header decodes differently:\n%s\n%s", h, js)
	}
	undo := decode(t, h).(map[string]any)["undo"].(map[string]any)["arguments"].(map[string]any)
	if undo["owner"] != "øcto" || undo["repo"] != "hello 🚀\u007f\u2028" {
		t.Errorf("decoded %v", undo)
	}
	if HeaderValue(nil) != "null" {
		t.Errorf("nil report")
	}
}

func TestNilOperation(t *testing.T) {
	if Build(nil, Call{}, nil) != nil || BuildStaged(nil, nil, nil, nil) != nil || Contract(nil) != nil {
		t.Error("nil operation")
	}
	var r *Report
	if b, _ := json.Marshal(r); string(b) != "null" {
		t.Errorf("%s", b)
	}
	if b := r.AppendJSON(nil); string(b) != "null" {
		t.Errorf("%s", b)
	}
	// A Report value (not a pointer) in a map still uses the contract's form.
	ops := loadOps(t)
	v := *Build(ops["github.comments.create"], commentCall(t, decode), fleetTools(ops))
	if b, _ := json.Marshal(map[string]any{"effect": v}); string(b) != `{"effect":`+seedCommentReport+`}` {
		t.Errorf("value report: %s", b)
	}
}

func TestOptionalKeysOrder(t *testing.T) {
	op := custom(t, `{"kind":"mutation","class":"reversible",
		"inverse":{"operation":"svc.things.delete","arguments":{"id":"response.id"}},
		"compensate":{"operation":"svc.things.close","arguments":{"ref":"request.ref"}}}`)
	r := Build(op, Call{Request: obj(t, `{"ref":"r1"}`), Response: decode(t, `{}`)}, customTools)
	b, _ := r.MarshalJSON()
	want := []string{"class", "operation", "idempotency_key", "undo", "deadline_ms", "lookup", "compensate", "undo_unavailable"}
	if got := objectKeys(t, b); !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v, want %v (%s)", got, want, b)
	}
	if r.Undo != nil || r.Compensate == nil || r.UndoUnavailable != "undo unavailable: response.id names nothing in this call" {
		t.Errorf("%s", b)
	}
}
