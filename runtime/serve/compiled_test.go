package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/gen/github-mini/workspace"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/effect"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/handler"
	"github.com/anvil-dev/anvil/runtime/serve"
	sink "github.com/anvil-dev/anvil/runtime/serve/internal/testgen/sink/workspace"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// The compiled-handler tests check each generated handler of
// gen/github-mini against the generic code it replaces, over many
// generated argument sets: the decoders and validators against
// decodeArgs and the JSON Schema validator, the request builders against
// upstream.BuildRequest, the hashes against audit.InputSHA256, the effect
// functions against effect.Build and the draft mappings against
// effect.ResolveDraft.

// pair is one operation in both forms.
type pair struct {
	op     *air.Operation
	c      *handler.Operation
	schema *jsonschema.Schema
}

func compiledPairs(t testing.TB) ([]pair, effect.Tools) {
	return compiledPairsOf(t, "testdata/workspace", "github", workspace.Workspace())
}

func compiledPairsOf(t testing.TB, dir, id string, ws *handler.Workspace) ([]pair, effect.Tools) {
	t.Helper()
	fleet, err := fleet.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	conn := fleet.Connector(id)
	if len(ws.Connectors) != 1 || ws.Connectors[0].ID != id {
		t.Fatalf("the generated workspace serves %d connectors", len(ws.Connectors))
	}
	var out []pair
	for _, c := range ws.Connectors[0].Ops {
		tool := conn.ToolFor(c.ID)
		if tool == nil {
			t.Fatalf("%s is generated but not served generically", c.ID)
		}
		b, _ := json.Marshal(tool.Op.Input.Schema)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft2020)
		if err := comp.AddResource("anvil:///t.json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := comp.Compile("anvil:///t.json")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pair{op: tool.Op, c: c, schema: sch})
	}
	if len(out) != len(conn.Doc.Operations) {
		t.Fatalf("%d operations generated, %d served", len(out), len(conn.Doc.Operations))
	}
	return out, conn
}

// argGen makes argument sets for an operation's input schema.
type argGen struct {
	r *rand.Rand
}

var sampleStrings = []string{"octo", "hello", "", ".", "..", "a/b c", "øcto", "<b>&amp;</b>", "line\nbreak", "tab\t", `q"uote`, `back\slash`,
	"open", "closed", "all", "v1.0", "emoji 😀", "\u2028", "%2F", "a?b=c&d", "plus+sign", "01JLEDGER0001", "Idempotency"}

var sampleNumbers = []string{"0", "1", "2", "-1", "1.0", "1e2", "1.5", "-0", "123456789012345678901234567890", "0.000001", "1E-7", "4.2e1"}

func (g *argGen) value(s *air.Schema) any {
	typ := ""
	if s != nil && len(s.Type) > 0 {
		typ = s.Type[g.r.IntN(len(s.Type))]
	}
	if g.r.IntN(12) == 0 || typ == "" { // the wrong type now and then
		typ = []string{"string", "integer", "number", "boolean", "null", "array", "object"}[g.r.IntN(7)]
	}
	if s != nil && len(s.Enum) > 0 && g.r.IntN(3) > 0 {
		return decodeJSONValue(s.Enum[g.r.IntN(len(s.Enum))])
	}
	if s != nil && s.Const != nil && g.r.IntN(4) > 0 {
		return decodeJSONValue(s.Const)
	}
	switch typ {
	case "string":
		return sampleStrings[g.r.IntN(len(sampleStrings))]
	case "integer", "number":
		return json.Number(sampleNumbers[g.r.IntN(len(sampleNumbers))])
	case "boolean":
		return g.r.IntN(2) == 0
	case "null":
		return nil
	case "array":
		n := g.r.IntN(4)
		out := make([]any, n)
		for i := range out {
			var items *air.Schema
			if s != nil {
				items = s.Items
			}
			if items == nil || g.r.IntN(5) == 0 {
				items = &air.Schema{Type: air.Types{[]string{"string", "integer", "boolean"}[g.r.IntN(3)]}}
			}
			out[i] = g.value(items)
		}
		return out
	case "object":
		out := map[string]any{}
		for i, n := 0, g.r.IntN(4); i < n; i++ {
			out[[]string{"k", "a b", "ø", "z"}[g.r.IntN(4)]] = g.value(&air.Schema{Type: air.Types{[]string{"string", "integer", "null", "boolean"}[g.r.IntN(4)]}})
		}
		return out
	}
	return "x"
}

func decodeJSONValue(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	_ = dec.Decode(&v)
	return v
}

// args makes one argument set: mostly the required inputs and some
// optional ones, now and then an unknown key or a missing required one.
func (g *argGen) args(op *air.Operation) map[string]any {
	s := op.Input.Schema
	m := map[string]any{}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	for _, n := range names {
		switch {
		case required[n] && g.r.IntN(20) > 0, !required[n] && g.r.IntN(3) == 0:
			if n == air.DryRunKey && g.r.IntN(3) > 0 {
				continue
			}
			m[n] = g.value(s.Properties[n])
		}
	}
	if g.r.IntN(25) == 0 {
		m["unknown"] = "x"
	}
	return m
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(buf.Bytes())
}

// decodeNumbers is decodeArgs: numbers as json.Number.
func decodeNumbers(t testing.TB, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// requestText renders a request for comparison.
func requestText(req *http.Request, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var keys []string
	for k := range req.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", req.Method, req.URL.String())
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(req.Header[k], ", "))
	}
	if req.Body != nil {
		body, _ := io.ReadAll(req.Body)
		fmt.Fprintf(&b, "\n%s", body)
	}
	if req.GetBody != nil {
		b.WriteString("\n(GetBody)")
	}
	return b.String()
}

func TestCompiledHandlersMatchGenericCode(t *testing.T) {
	pairs, tools := compiledPairs(t)
	checkPairs(t, pairs, tools, 400, 500, 100)
}

// TestCompiledSinkHandlersMatchGenericCode does the same for the sink
// bundle (testdata/sink, generated into internal/testgen/sink): every
// parameter location and style, arrays and objects, form, raw and whole
// bodies, undeclared carriers and scalar constraints.
func TestCompiledSinkHandlersMatchGenericCode(t *testing.T) {
	pairs, tools := compiledPairsOf(t, "testdata/sink", "sink", sink.Workspace())
	checkPairs(t, pairs, tools, 1500, 1000, 1000)
}

// airCheck is the oracle: the AIR-driven handler's check (the JSON Schema,
// then exact integers in range).
func airCheck(p pair, tools effect.Tools, args map[string]any) bool {
	_, _, ok := handler.ForAIR(p.op, handler.CompiledValidator(p.schema), tools).Check(handler.NewMapInput(args, p.op))
	return ok
}

func checkPairs(t *testing.T, pairs []pair, tools effect.Tools, rounds, minValid, minInvalid int) {
	t.Helper()
	g := &argGen{r: rand.New(rand.NewPCG(1, 2))}
	const base = "http://127.0.0.1:9/api/?x=1"
	pb := handler.ParseBase(base)
	ctx := context.Background()
	valid, invalid := 0, 0
	perOp := map[string]int{}
	for _, p := range pairs {
		h := handler.Generated(p.c, p.op, handler.CompiledValidator(p.schema))
		for i := 0; i < rounds; i++ {
			args := g.args(p.op)
			raw := mustJSON(t, args)
			args = decodeNumbers(t, raw) // exactly what decodeArgs makes
			schemaOK := airCheck(p, tools, args)
			// The generated decoder keeps every argument, valid or not, and
			// its verdict is the schema's (with the shared validator for the
			// parts it does not specialise).
			din, derr := p.c.Decode(raw)
			if din == nil {
				t.Fatalf("%s %s: the decoder refuses a JSON object: %v", p.op.ID, raw, derr)
			}
			if diff := cmp.Diff(args, din.Args()); diff != "" {
				t.Fatalf("%s %s: the decoded input differs from the arguments:\n%s", p.op.ID, raw, diff)
			}
			ok := derr == nil
			if ok && p.c.SchemaCheck {
				ok = airCheck(p, tools, din.Args())
			}
			if ok != schemaOK {
				t.Fatalf("%s %s: Decode says %v (%v), the schema %v", p.op.ID, raw, ok, derr, schemaOK)
			}
			in, isObject := h.Decode(raw)
			if !isObject {
				t.Fatalf("%s %s: the handler refuses a JSON object", p.op.ID, raw)
			}
			if _, problem, hok := h.Check(in); hok != schemaOK {
				t.Fatalf("%s %s: Check says %v (%s), the schema %v", p.op.ID, raw, hok, problem, schemaOK)
			}
			if got, want := in.InputSHA256(), audit.InputSHA256(args); got != want {
				t.Fatalf("%s %s: hash %s, audit %s", p.op.ID, raw, got, want)
			}
			if !ok {
				invalid++
				// A failed call's report reads the same arguments.
				want := effect.Build(p.op, effect.Call{Request: args, IdempotencyKey: "k1", Failed: true}, tools)
				got := h.Effect(&handler.EffectCall{Input: in, IdempotencyKey: "k1", Failed: true})
				if w, g := effect.HeaderValue(want), effect.HeaderValue(got); w != g {
					t.Fatalf("%s %s: failed report\n want %s\n  got %s", p.op.ID, raw, w, g)
				}
				continue
			}
			valid++
			perOp[p.op.ID]++
			wreq, werr := upstream.BuildRequest(ctx, base, p.op, args)
			greq, gerr := h.Build(ctx, pb, in)
			if w, g := requestText(wreq, werr), requestText(greq, gerr); w != g {
				t.Fatalf("%s %s: request\n--- generic\n%s\n--- generated\n%s", p.op.ID, raw, w, g)
			}
			// The carrier: setting the key changes both forms alike.
			if k := p.op.Input.Safety.IdempotencyKey; k != "" && p.op.Idempotency.HasCarrier() {
				in.SetIdempotencyKey("ledger-1")
				args2, _ := effect.PlaceKey(p.op, args, "ledger-1")
				if got, want := in.InputSHA256(), audit.InputSHA256(args2); got != want {
					t.Fatalf("%s: hash after the key %s, %s", p.op.ID, got, want)
				}
				if s, isString, present := in.IdempotencyKey(); !present || !isString || s != "ledger-1" {
					t.Fatalf("%s: IdempotencyKey after set: %q %v %v", p.op.ID, s, isString, present)
				}
				wreq, werr := upstream.BuildRequest(ctx, base, p.op, args2)
				greq, gerr := h.Build(ctx, pb, in)
				if w, g := requestText(wreq, werr), requestText(greq, gerr); w != g {
					t.Fatalf("%s %s: request with the key\n--- generic\n%s\n--- generated\n%s", p.op.ID, raw, w, g)
				}
				args = args2
			}
			// The controls read what the generic input reads.
			mi := handler.NewMapInput(args, p.op)
			if in.DryRun() != mi.DryRun() {
				t.Fatalf("%s %s: DryRun %v", p.op.ID, raw, in.DryRun())
			}
			if v, present := in.Confirm(); v != mustConfirm(mi) || present != confirmPresent(mi) {
				t.Fatalf("%s %s: Confirm %v %v", p.op.ID, raw, v, present)
			}
			// Effects over a response: the same report as effect.Build.
			for _, resp := range sampleResponses() {
				for _, c := range []struct{ failed, staged bool }{{false, false}, {true, false}, {false, true}} {
					want := effect.Build(p.op, effect.Call{Request: args, Response: resp, IdempotencyKey: "led-1",
						Failed: c.failed, Staged: c.staged, Now: time.UnixMilli(1_700_000_000_000)}, tools)
					got := h.Effect(&handler.EffectCall{Input: in, Response: resp, IdempotencyKey: "led-1",
						Failed: c.failed, Staged: c.staged, Now: time.UnixMilli(1_700_000_000_000)})
					if w, g := effect.HeaderValue(want), effect.HeaderValue(got); w != g {
						t.Fatalf("%s %s resp %v failed %v staged %v:\n want %s\n  got %s", p.op.ID, raw, resp, c.failed, c.staged, w, g)
					}
				}
			}
			// Drafts: the same mapping as effect.ResolveDraft.
			if p.c.Draft != nil {
				_, wantArgs, werr := effect.ResolveDraft(p.op, args, tools)
				d, missing := p.c.Draft(in)
				switch {
				case werr != nil && missing == nil:
					t.Fatalf("%s: ResolveDraft refuses (%s), the draft mapping does not", p.op.ID, werr.Message)
				case werr == nil && missing != nil:
					t.Fatalf("%s: the draft mapping misses %s, ResolveDraft does not", p.op.ID, missing.Argument)
				case werr == nil:
					if diff := cmp.Diff(wantArgs.Map(), d.Args()); diff != "" {
						t.Fatalf("%s %s: draft arguments:\n%s", p.op.ID, raw, diff)
					}
				}
			}
		}
	}
	for _, p := range pairs {
		if perOp[p.op.ID] < 10 {
			t.Errorf("%s: only %d valid argument sets", p.op.ID, perOp[p.op.ID])
		}
	}
	if valid < minValid || invalid < minInvalid {
		t.Errorf("only %d valid and %d invalid argument sets: widen the generator", valid, invalid)
	}
}

func mustConfirm(in handler.Input) bool    { v, _ := in.Confirm(); return v }
func confirmPresent(in handler.Input) bool { _, p := in.Confirm(); return p }

// sampleResponses are upstream answers the effect paths read.
func sampleResponses() []any {
	return []any{
		nil,
		map[string]any{"id": json.Number("100"), "number": json.Number("3")},
		map[string]any{"id": "x-1", "number": nil},
		[]any{json.Number("1")},
		"text",
	}
}

// FuzzCompiledDecode checks that the generated decoders take exactly what
// the generic path takes, read it the same way and judge it as the schema
// does.
func FuzzCompiledDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"owner":"octo","repo":"hello"}`, `{"owner":"a\"b","repo":"\u00e9","issue_number":1.0}`,
		`{"owner":"x","owner":"y","repo":"r","issue_number":2}`, ` {"owner":"o","repo":"r"} `, `null`, ``, `[1]`, `{"owner":"o",}`,
		`{"owner":"\ud83d\ude00","repo":"r","tag":"t"}`, `{"anvil_dry_run":true,"owner":"o","repo":"r"}`, "{\"owner\":\"\xff\",\"repo\":\"r\"}",
		`{"owner":"o","repo":"r","issue_number":1e400}`, `{"owner":"o","repo":"r"}}`, `{"owner":"o","repo":"r"} x`} {
		f.Add(s)
	}
	pairs, _ := compiledPairs(f)
	sinkPairs, _ := compiledPairsOf(f, "testdata/sink", "sink", sink.Workspace())
	pairs = append(pairs, sinkPairs...)
	for _, s := range []string{`{"kind":"book","ids":[1,2],"need":1,"tags":["a","b"],"filter":{"x":null,"y":"1"}}`,
		`{"m":["a",{"b":1}],"n":1.5,"name":"x"}`, `{"a":"x","list":[1,"\u00e9"],"obj":{"k":[]}}`, `{"title":"t","meta":{"a":[1,2,{"b":null}]},"extra":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		b := bytes.TrimSpace([]byte(raw))
		args := map[string]any{}
		generic := true
		if len(b) > 0 && string(b) != "null" {
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			var m map[string]any
			if err := dec.Decode(&m); err != nil || m == nil || dec.More() {
				generic = false
			}
			args = m
		}
		for _, p := range pairs {
			in, err := p.c.Decode([]byte(raw))
			if in == nil {
				if generic {
					t.Fatalf("%s: Decode refuses %q, which decodeArgs takes (%v)", p.op.ID, raw, err)
				}
				continue
			}
			if !generic {
				t.Fatalf("%s: Decode takes %q, which decodeArgs refuses", p.op.ID, raw)
			}
			if diff := cmp.Diff(args, in.Args()); diff != "" {
				t.Fatalf("%s: %q decodes differently:\n%s", p.op.ID, raw, diff)
			}
			if got, want := in.InputSHA256(), audit.InputSHA256(args); got != want {
				t.Fatalf("%s: %q hashes differently", p.op.ID, raw)
			}
			if !p.c.SchemaCheck && (err == nil) != airCheck(p, nil, args) {
				t.Fatalf("%s: Decode says %v for %q, the schema the opposite", p.op.ID, err, raw)
			}
		}
	})
}

func TestCompiledWorkspaceRefusals(t *testing.T) {
	if _, err := serve.NewGenerated(serve.Config{Host: "127.0.0.1"}, &handler.Workspace{}, nil); !errors.Is(err, fleet.ErrGeneratedWorkspace) {
		t.Errorf("an empty compiled workspace: %v", err)
	}
	bad := workspace.Workspace()
	bad.Connectors = append(bad.Connectors, bad.Connectors[0])
	if _, err := serve.NewGenerated(serve.Config{Host: "127.0.0.1"}, bad, nil); !errors.Is(err, fleet.ErrGeneratedWorkspace) {
		t.Errorf("a repeated connector: %v", err)
	}
	noHandlers := workspace.Workspace()
	noHandlers.Connectors[0].Ops[0].Build = nil
	if _, err := serve.NewGenerated(serve.Config{Host: "127.0.0.1"}, noHandlers, nil); !errors.Is(err, fleet.ErrGeneratedWorkspace) {
		t.Errorf("an operation without handlers: %v", err)
	}
	// The generated handlers and the AIR they travel with must match one to
	// one: a served operation without a handler, a handler for an operation
	// the AIR does not serve, two handlers for one, or AIR that does not
	// parse refuse to start.
	for name, edit := range map[string]func(*handler.Workspace){
		"missing handler": func(ws *handler.Workspace) { ws.Connectors[0].Ops = ws.Connectors[0].Ops[1:] },
		"unserved operation": func(ws *handler.Workspace) {
			op := *ws.Connectors[0].Ops[0]
			op.ID = "github.nope"
			ws.Connectors[0].Ops = append(ws.Connectors[0].Ops, &op)
		},
		"two handlers": func(ws *handler.Workspace) {
			ws.Connectors[0].Ops = append(ws.Connectors[0].Ops, ws.Connectors[0].Ops[0])
		},
		"bad AIR":    func(ws *handler.Workspace) { ws.Connectors[0].AIR = `{"schema":"anvil.air/v0"}` },
		"no AIR":     func(ws *handler.Workspace) { ws.Connectors[0].AIR = "" },
		"bad id":     func(ws *handler.Workspace) { ws.Connectors[0].ID = "a b" },
		"nil handle": func(ws *handler.Workspace) { ws.Connectors[0].Ops[0] = nil },
	} {
		ws := workspace.Workspace()
		edit(ws)
		if _, err := serve.NewGenerated(serve.Config{Host: "127.0.0.1"}, ws, nil); !errors.Is(err, fleet.ErrGeneratedWorkspace) {
			t.Errorf("%s: %v, want ErrGeneratedWorkspace", name, err)
		}
	}
}

func TestCompiledGrantIsCompiledOncePerToken(t *testing.T) {
	dir := t.TempDir()
	key := authtest.NewKey("grant-cache")
	jwks := filepath.Join(dir, "jwks.json")
	if err := authtest.WriteJWKS(jwks, key); err != nil {
		t.Fatal(err)
	}
	d, env, ln := newDoorFiles(t, "compiled", jwks, 0)
	cfg, err := serve.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host, cfg.Port = "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
	g, err := serve.NewGenerated(cfg, workspace.Workspace(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = g.Serve(ctx, ln) }()
	d.tokens = dfTokens(key, key, d.aud, time.Now().Unix())
	call := func(token string) {
		d.run(t, []step{{name: "list", path: "/call/" + tPulls, token: token, body: `{"arguments":{"owner":"o","repo":"r"}}`}})
	}
	if n := serve.CompiledGrants(g); n != 0 {
		t.Fatalf("%d grants compiled before any call", n)
	}
	call("read")
	call("read")
	call("read")
	if n := serve.CompiledGrants(g); n != 1 {
		t.Errorf("three calls with one token compiled %d grants, want 1", n)
	}
	call("write")
	if n := serve.CompiledGrants(g); n != 2 {
		t.Errorf("a second token: %d compiled grants, want 2", n)
	}
}

func TestUpstreamURLEnv(t *testing.T) {
	for id, want := range map[string]string{"github": "ANVIL_UPSTREAM_GITHUB_URL", "team_github": "ANVIL_UPSTREAM_TEAM_GITHUB_URL", "a-b--c": "ANVIL_UPSTREAM_A_B_C_URL"} {
		if got := fleet.UpstreamURLEnv(id); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	for _, bad := range []string{"ftp://x", "http://user:pw@127.0.0.1", "http://127.0.0.1/#frag", "not a url"} {
		env := map[string]string{"ANVIL_UPSTREAM_GITHUB_URL": bad}
		cfg := serve.Config{Host: "127.0.0.1", Getenv: func(k string) string { return env[k] }}
		if _, err := serve.NewFromDir(cfg, "testdata/workspace", nil); err == nil || !strings.Contains(err.Error(), "ANVIL_UPSTREAM_GITHUB_URL") {
			t.Errorf("generic, %q: %v", bad, err)
		}
		if _, err := serve.NewGenerated(cfg, workspace.Workspace(), nil); err == nil || !strings.Contains(err.Error(), "ANVIL_UPSTREAM_GITHUB_URL") {
			t.Errorf("compiled, %q: %v", bad, err)
		}
	}
}

func TestCompiledMain(t *testing.T) {
	ws := workspace.Workspace()
	run := func(env map[string]string, stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := serve.Main(context.Background(), append([]string{"github-mini"}, args...), ws, serve.Options{
			Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }})
		return code, out.String(), errb.String()
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"serve", "mcp", "ws", "--http", "1"}, nil, "anvil: --http and --host need --fleet\n"},
		{[]string{"serve", "mcp", "a", "b", "--fleet"}, nil, "anvil: serve mcp takes one workspace directory (usage: anvil serve mcp <workspace> --fleet --http <port>)\n"},
		{[]string{"serve", "mcp", "ws", "--fleet", "--http", "x"}, nil, "anvil: --http takes a port from 1 to 65535, not \"x\"\n"},
		{[]string{"serve", "mcp", "ws", "--fleet", "--bogus"}, nil, "anvil: flag provided but not defined: -bogus\n"},
		{[]string{"serve", "mcp", "--bogus", "ws"}, nil, "anvil: flag provided but not defined: -bogus\n"},
		{[]string{"serve", "mcp", "ws", "--fleet", "--http"}, nil, "anvil: flag needs an argument: -http\n"},
		{[]string{"serve", "mcp", "ws", "--fleet", "--http=x"}, nil, "anvil: --http takes a port from 1 to 65535, not \"x\"\n"},
		{[]string{"serve", "mcp", "ws", "--fleet=x"}, nil, "anvil: invalid boolean value \"x\" for -fleet: parse error\n"},
		{[]string{"serve", "mcp", "--fleet=false", "ws", "--host=h"}, nil, "anvil: --http and --host need --fleet\n"},
		{[]string{"serve", "mcp", "ws", "--", "--fleet"}, nil, "anvil: serve mcp takes one workspace directory (usage: anvil serve mcp <workspace> --fleet --http <port>)\n"},
		{[]string{"serve", "mcp", "ws", "--fleet"}, map[string]string{"ANVIL_INBOUND_AUTH_MODE": "branchyard", "ANVIL_INBOUND_ISSUER": "i",
			"ANVIL_INBOUND_AUDIENCE": "http://127.0.0.1:1/mcp", "ANVIL_INBOUND_JWKS_URI": "file:///nope"},
			"anvil: ANVIL_INBOUND_AUTH_MODE=branchyard is served only by the fleet gateway over HTTP (--fleet --http <port>)\n"},
		{[]string{"serve", "mcp", "ws", "--fleet", "--http", "1"}, map[string]string{"ANVIL_INBOUND_AUTH_MODE": "branchyard", "ANVIL_INBOUND_ISSUER": "i",
			"ANVIL_INBOUND_AUDIENCE": "http://127.0.0.1:1/mcp", "ANVIL_INBOUND_JWKS_URI": "file:///nope"},
			"anvil: branchyard mode needs ANVIL_VAULT_KEY_FILE (a 32-byte key in a file only its owner can read).\n"},
	} {
		code, _, stderr := run(c.env, "", c.args...)
		if code != 1 || stderr != c.want {
			t.Errorf("%v: exit %d, stderr %q; want 1, %q", c.args, code, stderr, c.want)
		}
	}
	// A command line that names nothing the gateway runs prints the usage
	// on stderr and exits 1; help prints it on stdout.
	for _, args := range [][]string{{"bogus"}, {}, {"serve"}, {"serve", "bogus"}, {"--bogus"}, {"version", "x"}} {
		if code, out, errs := run(nil, "", args...); code != 1 || out != "" || !strings.HasPrefix(errs, "usage: github-mini serve mcp [<workspace>] --fleet --http <port>") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		if code, out, errs := run(nil, "", args...); code != 0 || errs != "" || !strings.HasPrefix(out, "usage: github-mini serve mcp [<workspace>] --fleet --http <port>") ||
			!strings.Contains(out, "       github-mini version\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	// serve mcp's own help names its flags, wherever --help is.
	for _, args := range [][]string{{"serve", "mcp", "--help"}, {"serve", "mcp", "ws", "--fleet", "-h"}} {
		if code, out, errs := run(nil, "", args...); code != 0 || errs != "" || !strings.HasPrefix(out, "usage: github-mini serve mcp [<workspace>] --fleet --http <port>") ||
			!strings.Contains(out, "--host host") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	// Without --http it serves MCP on stdin and stdout, as anvil does, with
	// or without --fleet.
	for _, args := range [][]string{{"serve", "mcp", "ws", "--fleet"}, {"serve", "mcp", "ws"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) { compiledStdio(t, ws, args) })
	}
}

// compiledStdio serves the generated workspace over stdio with args and
// lists its tools.
func compiledStdio(t *testing.T, ws *handler.Workspace, args []string) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- serve.Main(context.Background(), append([]string{"github-mini"}, args...), ws,
			serve.Options{Stdin: inR, Stdout: outW, Stderr: io.Discard})
		outW.Close()
	}()
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`+"\n")
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	var list string
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":2`) {
			list = sc.Text()
			break
		}
	}
	inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if code := <-done; code != 0 {
		t.Errorf("stdio: exit %d", code)
	}
	if !strings.Contains(list, `"name":"github__github_list_issue"`) || strings.Count(list, `"inputSchema"`) != 12 {
		t.Errorf("stdio tools/list: %.400s", list)
	}
}
