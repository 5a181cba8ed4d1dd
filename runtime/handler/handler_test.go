package handler

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/audit"
)

func TestInvalidNamesThePathAndRule(t *testing.T) {
	for _, c := range []struct{ prop, rule, want string }{
		{"owner", "required", "at '/owner': required"},
		{"", "additionalProperties", "at '': additionalProperties"},
		{"a/b~c", "enum", "at '/a~1b~0c': enum"},
	} {
		err := Invalid(c.prop, c.rule)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Rule != c.rule || err.Error() != c.want {
			t.Errorf("Invalid(%q, %q) = %v, want %s", c.prop, c.rule, err, c.want)
		}
	}
}

// thing is a typed input written as the generator writes one.
type thing struct {
	Controls
	Any   Opt[any]         // "any"
	Maybe Opt[bool]        // "maybe", nullable
	N     Opt[json.Number] // "n", an integer
	Name  Opt[string]      // "name", required
	Token Opt[string]      // "token", sensitive
}

func (in *thing) Fields(f *Fields) {
	f.Bool("anvil_dry_run", in.DryRunInput)
	f.Any("any", in.Any)
	f.Bool("confirm", in.ConfirmInput)
	f.String("idempotency_key", in.KeyInput)
	f.Bool("maybe", in.Maybe)
	f.Number("n", in.N)
	f.String("name", in.Name)
	Redacted(f, "token", in.Token)
}

func (in *thing) Validate() error {
	return Checks(
		in.CheckLoose(Closed),
		Required("name", in.Name.Set),
		Integer("n", in.N),
	)
}

func decodeThing(raw []byte) (Input, error) {
	in := &thing{}
	r := NewReader(raw, in)
	for r.Next() {
		switch string(r.Key()) {
		case "anvil_dry_run":
			r.Bool(&in.DryRunInput)
		case "any":
			r.Any(&in.Any)
		case "confirm":
			r.Bool(&in.ConfirmInput)
		case "idempotency_key":
			r.String(&in.KeyInput)
		case "maybe":
			r.BoolOrNull(&in.Maybe)
		case "n":
			r.Number(&in.N)
		case "name":
			r.String(&in.Name)
		case "token":
			r.String(&in.Token)
		default:
			r.Extra()
		}
	}
	return r.Finish()
}

// TestReaderReadsWhatDecodeArgsReads: the typed decoder takes exactly the
// inputs DecodeArgs takes, holds the same arguments (a value its field
// cannot hold included) and hashes them as audit.InputSHA256 does.
func TestReaderReadsWhatDecodeArgsReads(t *testing.T) {
	deep := func(n int) string { return `{"any":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}` }
	for _, raw := range []string{
		``, `null`, " \t{}\n ", `{}`, `{"name":"a"}`, `{ "name" : "a" , "n" : 2 }`,
		`{"name":"a\"b\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}`, `{"name":"\ud800x"}`, `{"name":"\ud800\u00e9"}`, `{"name":"\udc00\ud800"}`,
		"{\"name\":\"\xff\xfe a\"}", "{\"n\xffame\":1}", `{"na\u006de":"x"}`, `{"\ud83d":1}`,
		`{"name":7,"name":"x"}`, `{"name":"x","name":7}`, `{"name":null}`, `{"maybe":null,"name":"a"}`, `{"maybe":"yes","name":"a"}`, `{"maybe":7,"maybe":null,"name":"a"}`, `{"maybe":7,"maybe":true}`,
		`{"any":[1,{"a":null,"token":"t"}],"extra":{"b":2.50,"password":"p"},"name":"a"}`, `{"any":null,"name":"a"}`,
		`{"name":"a"}}`, `{"name":"a"}]`, `{"name":"a"} ] x`, `{"name":"a"} x`, `{"name":"a",}`, `{,}`, `[1]`, `"s"`, `{"name":"a"`,
		`{"name" "a"}`, "{\"name\":\"a\x01\"}", `{"name":"\x"}`, `{"name":"\u12"}`, `{"name":"\'"}`, `{"name":tru}`,
		`{"n":01}`, `{"n":-}`, `{"n":1e400,"name":"a"}`, `{"n":-0.5e+3,"name":"a"}`, `{"n":"1","name":"a"}`, `{"maybe":truex}`,
		`{"a":nul}`, `{"a":[1,}`, `{"token":"secret","name":"a"}`, `{"token":5,"name":"a"}`, `{"token":null}`,
		`{"confirm":true,"anvil_dry_run":false,"idempotency_key":"k","name":"a"}`, `{"confirm":"yes","idempotency_key":null}`,
		deep(3), `{"any":[{"a":"[[[[\"]"}]}`,
	} {
		want, werr := DecodeArgs(json.RawMessage(raw))
		in, err := decodeThing([]byte(raw))
		if (in == nil) != (werr != nil) {
			t.Errorf("%.80q: decoded %v (%v), DecodeArgs %v", raw, in != nil, err, werr)
			continue
		}
		if in == nil {
			if !errors.Is(err, ErrNotObject) {
				t.Errorf("%.80q: %v, want ErrNotObject", raw, err)
			}
			continue
		}
		if diff := cmp.Diff(want, in.Args()); diff != "" {
			t.Errorf("%.80q: arguments differ:\n%s", raw, diff)
		}
		if got, w := in.InputSHA256(), audit.InputSHA256(want); got != w {
			t.Errorf("%.80q: hash %s, want %s", raw, got, w)
		}
	}
}

// TestReaderNestsAsDeepAsDecodeArgs: encoding/json refuses more than
// 10,000 levels, counting the arguments object.
func TestReaderNestsAsDeepAsDecodeArgs(t *testing.T) {
	for _, n := range []int{maxValueDepth, maxValueDepth + 1} {
		raw := `{"any":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
		_, werr := DecodeArgs(json.RawMessage(raw))
		if in, err := decodeThing([]byte(raw)); (in == nil) != (werr != nil) {
			t.Errorf("%d levels: decoded %v (%v), DecodeArgs %v", n, in != nil, err, werr)
		}
	}
}

// TestDecodeVerdict: the decoder's error is the first rule the arguments
// fail, with the argument's path.
func TestDecodeVerdict(t *testing.T) {
	for raw, want := range map[string]string{
		`{"name":"a","n":2}`:              "",
		`{"n":2}`:                         "at '/name': required",
		`{"name":"a","n":2.5}`:            "at '/n': type",
		`{"name":7}`:                      "at '/name': type",
		`{"name":"a","other":1}`:          "at '': additionalProperties",
		`{"name":"a","maybe":null}`:       "",
		`{"name":"a","maybe":null,"b":0}`: "at '': additionalProperties",
	} {
		_, err := decodeThing([]byte(raw))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}

// TestControlsReadAndSetTheControlInputs: the accessors Controls gives every
// typed input read and set the control inputs as MapInput does.
func TestControlsReadAndSetTheControlInputs(t *testing.T) {
	op := &air.Operation{ID: "svc.things.create", Input: air.Input{Safety: air.Safety{IdempotencyKey: "idempotency_key", DryRun: air.DryRunKey}}}
	for _, raw := range []string{
		`{"name":"a"}`, `{"confirm":true,"anvil_dry_run":true,"idempotency_key":"k"}`, `{"confirm":false}`,
		`{"confirm":"yes","anvil_dry_run":"no","idempotency_key":7}`, `{"idempotency_key":null}`,
	} {
		in, _ := decodeThing([]byte(raw))
		setOperation(in, op)
		args, _ := DecodeArgs(json.RawMessage(raw))
		mi := NewMapInput(args, op)
		if in.DryRun() != mi.DryRun() {
			t.Errorf("%s: DryRun %v", raw, in.DryRun())
		}
		if v, p := in.Confirm(); func() bool { w, wp := mi.Confirm(); return v != w || p != wp }() {
			t.Errorf("%s: Confirm %v %v", raw, v, p)
		}
		s, isString, present := in.IdempotencyKey()
		ws, wisString, wpresent := mi.IdempotencyKey()
		if s != ws || isString != wisString || present != wpresent {
			t.Errorf("%s: IdempotencyKey %q %v %v, want %q %v %v", raw, s, isString, present, ws, wisString, wpresent)
		}
		in.SetConfirm(true)
		in.SetDryRun()
		in.SetIdempotencyKey("ledger")
		mi.SetConfirm(true)
		mi.SetDryRun()
		mi.SetIdempotencyKey("ledger")
		if diff := cmp.Diff(mi.Args(), in.Args()); diff != "" {
			t.Errorf("%s: after setting the controls:\n%s", raw, diff)
		}
	}
	// An operation without a carrier takes no key.
	in, _ := decodeThing([]byte(`{"name":"a"}`))
	setOperation(in, &air.Operation{ID: "svc.things.get"})
	if in.SetIdempotencyKey("k"); in.Args()["idempotency_key"] != nil {
		t.Error("an operation without a carrier took the key")
	}
}

// TestGeneratedCheckWordsItsOwnRefusal: where the shared validator finds
// nothing wrong but the generated one refuses, the refusal says which
// argument and rule (instead of a bare "not valid").
func TestGeneratedCheckWordsItsOwnRefusal(t *testing.T) {
	op := &air.Operation{ID: "svc.things.get"}
	sch, err := CompileSchema("svc__things_get", &air.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	h := Generated(&Operation{ID: op.ID, Decode: decodeThing}, op, CompiledValidator(sch))
	in, ok := h.Decode(json.RawMessage(`{"n":1}`))
	if !ok {
		t.Fatal("not decoded")
	}
	if _, problem, ok := h.Check(in); ok || problem != "at '/name': required" {
		t.Errorf("Check = %q, %v; want the generated refusal", problem, ok)
	}
	in, _ = h.Decode(json.RawMessage(`{"name":"x"}`))
	if _, problem, ok := h.Check(in); !ok {
		t.Errorf("Check refused a valid input: %s", problem)
	}
	if _, ok := h.Decode(json.RawMessage(`[1]`)); ok {
		t.Error("an array decoded")
	}
}

func TestChecks(t *testing.T) {
	re := regexp.MustCompile(`^[a-z]+$`)
	s, n := Of("héllo"), Of(json.Number("5"))
	null := Opt[string]{Set: true, Null: true}
	for _, c := range []struct {
		err  error
		want string
	}{
		{Required("a", false), "at '/a': required"}, {Required("a", true), ""},
		{OneOf("a", s, "x", "héllo"), ""}, {OneOf("a", s, "x"), "at '/a': enum"}, {OneOf("a", null, "x"), ""},
		{Length("a", s, 5, -1), ""}, {Length("a", s, 6, -1), "at '/a': minLength"}, {Length("a", s, -1, 4), "at '/a': maxLength"},
		{Length("a", s, 6, 9), "at '/a': minLength/maxLength"}, {Pattern("a", s, re), "at '/a': pattern"}, {Pattern("a", Of("x"), re), ""},
		{Integer("n", Of(json.Number("1e400"))), "at '/n': type"}, {Integer("n", Of(json.Number("1.0"))), ""},
		{NumberOneOf("n", n, "1", "5.0"), ""}, {NumberOneOf("n", n, "1"), "at '/n': enum"},
		{Minimum("n", n, "5"), ""}, {Minimum("n", n, "6"), "at '/n': minimum"}, {Maximum("n", n, "4.5"), "at '/n': maximum"},
		{ExclusiveMinimum("n", n, "5"), "at '/n': exclusiveMinimum"}, {ExclusiveMaximum("n", n, "5"), "at '/n': exclusiveMaximum"},
		{Minimum("n", Of(json.Number("x")), "1"), "at '/n': minimum"}, {BoolIs("c", Of(false), true), "at '/c': enum"},
		{BoolIs("c", Opt[bool]{}, true), ""}, {Rule("a", "false", true), "at '/a': false"},
		{Checks(nil, Required("b", false), Required("c", false)), "at '/b': required"}, {Checks(), ""},
	} {
		got := ""
		if c.err != nil {
			got = c.err.Error()
		}
		if got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
