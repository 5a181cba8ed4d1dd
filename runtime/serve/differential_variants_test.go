package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// TestDifferentialEffectVariants generates the gateway of a workspace of
// effect variants (testdata/effects/<variant> and hand-edited bundles that
// only a stale or hand-written AIR carries: wrong-typed draft literals,
// invalid paths, request-rooted handles, lookups by key, unserved
// follow-ups, at-deadlines) the way a user does — anvil compile
// --workspace into their own module that requires this one — builds it,
// and drives the generic gateway and the binary with one script. It logs
// each phase as it ends: make test runs it on its own with -v, so CI shows
// its progress.
func TestDifferentialEffectVariants(t *testing.T) {
	began := time.Now()
	phase := func(what string) { t.Logf("%5.1f s: %s", time.Since(began).Seconds(), what) }
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	writeBundle := func(name string, doc *air.Document) {
		if err := air.WriteBundle(filepath.Join(ws, name, "github"), doc); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"deadline", "drafts"} {
		doc, err := air.Load(filepath.Join("testdata", "effects", v))
		if err != nil {
			t.Fatal(err)
		}
		writeBundle(v, doc)
	}
	base := func() *air.Document {
		doc, err := air.Load("testdata/workspace/github")
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	path := func(s string) air.ArgSource { return air.ArgSource{Path: s} }
	lit := func(s string) air.ArgSource { return air.ArgSource{Const: json.RawMessage(s)} }
	within := int64(60000)

	edited := base()
	rel := edited.Operation("github.releases.create")
	for i, a := range rel.Effect.Draft.Arguments {
		if a.Name == "draft" {
			rel.Effect.Draft.Arguments[i].ArgSource = lit(`"yes"`)
		}
	}
	cc := edited.Operation("github.comments.create")
	cc.Effect.Inverse.Deadline = &air.Deadline{At: "response.id"}
	cc.Effect.Compensate = &air.FollowUp{Operation: "github.issues.update", Arguments: air.Mapping{
		{Name: "owner", ArgSource: path("request.owner")}, {Name: "note", ArgSource: lit(`{"a":[1,2.50,"ø"]}`)},
		{Name: "maybe", ArgSource: path("response.nope?")}, {Name: "key", ArgSource: path("idempotency_key")},
	}, Deadline: &air.Deadline{WithinMs: &within}}
	ic := edited.Operation("github.issues.create")
	ic.Effect.Lookup = &air.Lookup{Operation: "github.issues.get", By: "idempotency_key", Arguments: air.Mapping{
		{Name: "owner", ArgSource: path("request.owner")}, {Name: "key", ArgSource: path("idempotency_key?")},
		{Name: "first", ArgSource: path("response.labels[0]?")}}}
	ic.Effect.Compensate.Arguments = append(ic.Effect.Compensate.Arguments, air.MappingEntry{Name: "broken", ArgSource: path("request.[0")})
	iu := edited.Operation("github.issues.update")
	iu.Effect.Class = air.ClassIrreversible
	iu.Effect.Draft = &air.Draft{Operation: "github.releases.create", Arguments: air.Mapping{
		{Name: "owner", ArgSource: path("request.owner")}, {Name: "repo", ArgSource: path("request.repo")},
		{Name: "tag_name", ArgSource: path("request.title")}, {Name: "name", ArgSource: path("response.x?")},
		{Name: "body", ArgSource: path("request.body")}, {Name: "confirm", ArgSource: lit(`true`)},
	}, Handle: "request.title",
		Promote: air.Call{Operation: "github.releases.update", Arguments: air.Mapping{{Name: "owner", ArgSource: path("request.owner")},
			{Name: "repo", ArgSource: path("request.repo")}, {Name: "release_id", ArgSource: path("response.id")}, {Name: "draft", ArgSource: lit(`false`)}}},
		Discard: &air.Call{Operation: "github.nope.delete", Arguments: air.Mapping{}}}
	writeBundle("edited", edited)

	mismatch := base()
	iu = mismatch.Operation("github.issues.update")
	iu.Effect.Class = air.ClassIrreversible
	iu.Effect.Draft = &air.Draft{Operation: "github.releases.create", Arguments: air.Mapping{
		{Name: "owner", ArgSource: path("request.owner")}, {Name: "repo", ArgSource: path("request.repo")},
		{Name: "tag_name", ArgSource: path("request.issue_number")}, {Name: "unknown", ArgSource: lit(`null`)},
	}, Handle: "response.id", Promote: air.Call{Operation: "github.issues.get", Arguments: air.Mapping{{Name: "owner", ArgSource: path("response.[")}}}}
	mismatch.Operation("github.comments.create").Effect.Inverse.Arguments = air.Mapping{{Name: "owner", ArgSource: path("nowhere.x")}}
	writeBundle("mismatch", mismatch)

	// Generate and build, as a user does in their own module.
	anvil := filepath.Join(dir, "anvil")
	build := exec.Command("go", "build", "-o", anvil, "./cmd/anvil")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/anvil: %v\n%s", err, out)
	}
	phase("built cmd/anvil")
	mod := filepath.Join(dir, "yard")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/yard\n\ngo 1.26\n\nrequire github.com/anvil-dev/anvil v0.0.0\n\nreplace github.com/anvil-dev/anvil => " + root + "\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	gen := exec.Command(anvil, "compile", "--workspace", ws, "--yard", "variants", "--gen", filepath.Join(mod, "gen"))
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("anvil compile --workspace: %v\n%s", err, out)
	}
	phase("generated the variants' gateway")
	bin := filepath.Join(dir, "variants")
	gobuild := exec.Command("go", "build", "-o", bin, "./gen/variants")
	gobuild.Dir = mod
	gobuild.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := gobuild.CombinedOutput(); err != nil {
		t.Fatalf("go build ./gen/variants (in the user's module): %v\n%s", err, out)
	}
	phase("built it")

	key := authtest.NewKey("variants-key")
	jwks := filepath.Join(dir, "jwks.json")
	if err := authtest.WriteJWKS(jwks, key); err != nil {
		t.Fatal(err)
	}
	conns := []string{"deadline_github", "drafts_github", "edited_github", "mismatch_github"}
	extend := func(env map[string]string, mockURL string) {
		delete(env, "ANVIL_UPSTREAM_GITHUB_URL")
		for _, c := range conns {
			env[fleet.UpstreamURLEnv(c)] = mockURL
		}
	}

	// The generic door, in process.
	generic, env, ln := newDoorFiles(t, "generic", jwks, 0)
	extend(env, generic.mock.URL)
	cfg, err := serve.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host, cfg.Port = "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
	g, err := serve.NewFromDir(cfg, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = g.Serve(ctx, ln) }()

	// The binary.
	binary, benv, bln := newDoorFiles(t, "binary", jwks, 0)
	extend(benv, binary.mock.URL)
	startProcess(t, binary, bin, benv, bln)

	now := time.Now().Unix()
	var grants []any
	for _, c := range conns {
		grants = append(grants, map[string]any{"connector": c, "operations": []any{"*"}, "mode": "write", "confirm": "allow"})
	}
	script := variantScript(conns)
	play := func(d *door) []string {
		d.tokens = map[string]string{
			"write": authtest.Mint(key, map[string]any{"iss": dfIssuer, "aud": d.aud, "sub": dfSub, "iat": now, "exp": now + 900,
				"jti": "v-write", "by_turn": "1", "by_grants": grants}),
			"connect": authtest.Mint(key, map[string]any{"iss": dfIssuer, "aud": d.aud, "sub": dfSub, "iat": now, "exp": now + 300,
				"jti": "v-connect", "by_grants": []any{}, "by_purpose": "connect"}),
		}
		out := d.run(t, script)
		for i := range out {
			out[i] = reWithin.ReplaceAllString(out[i], `"deadline_ms":WITHIN`)
		}
		return out
	}
	gt, bt := play(generic), play(binary)
	compareDoors(t, generic, binary, gt, bt)
	phase(fmt.Sprintf("played %d steps on both gateways", len(script)))
	all := strings.Join(gt, "\n")
	for _, want := range []string{"effect/draft_input_invalid", "effect/draft_unavailable", "effect/draft_argument_missing",
		"effect/no_draft_form", `"deadline_ms":WITHIN`, `"deadline_ms":102`, `"compensate":{`, `"handle":"T1"`,
		"discard unavailable: github.nope.delete is not served by this gateway", "is not a valid argument path", `"by":"idempotency_key"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no step of the variants script produced %q", want)
		}
	}
	if p := os.Getenv("ANVIL_DIFF_DUMP"); p != "" {
		_ = os.WriteFile(p+".variants", []byte(strings.Join(gt, "\n\n")), 0o644)
	}
}

var reWithin = regexp.MustCompile(`"deadline_ms":1[0-9]{12}`)

// startProcess runs a generated gateway binary on the port ln held.
func startProcess(t testing.TB, d *door, bin string, env map[string]string, ln net.Listener) {
	t.Helper()
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "serve", "mcp", "ignored", "--fleet", "--http", strconv.Itoa(port))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr syncWriter
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", d.name, stderr.String())
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		// /healthz answers while the workspace loads; the gateway serves
		// once it no longer says "loading".
		resp, err := d.client.Get(d.base + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && !bytes.Contains(body, []byte(`"loading":true`)) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer /healthz: %v\n%s", d.name, err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// variantScript exercises each variant connector's effect declarations.
func variantScript(conns []string) []step {
	var s []step
	for _, c := range conns {
		s = append(s, step{name: c + " connect", path: "/connect/api-key", token: "connect",
			body: `{"connector":"` + c + `","api_key":"` + dfUpstream + `"}`})
	}
	for _, c := range conns {
		p := func(tool string) string { return c + "__" + tool }
		s = append(s,
			call(c+" comment", p("github_create_comment"), "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"hi"}}`, [2]string{"Idempotency-Key", "L-" + c}),
			call(c+" comment, key in arguments", p("github_create_comment"), "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"hi","idempotency_key":"A-`+c+`"}}`),
			call(c+" create issue", p("github_create_issue"), "write", `{"arguments":{"owner":"octo","repo":"hello","title":"T","confirm":true}}`, [2]string{"Idempotency-Key", "I-" + c}),
			call(c+" create issue, failing", p("github_create_issue"), "write", `{"arguments":{"owner":"octo","repo":"hello","title":7,"confirm":true}}`, [2]string{"Idempotency-Key", "J-" + c}),
			call(c+" stage release", p("github_create_release"), "write", `{"arguments":{"owner":"octo","repo":"hello","tag_name":"v-`+c+`","body":"B","confirm":true},"stage":true}`),
			call(c+" stage release, no body", p("github_create_release"), "write", `{"arguments":{"owner":"octo","repo":"hello","tag_name":"w-`+c+`","confirm":true},"stage":true}`),
			call(c+" stage update", p("github_update_issue"), "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1,"title":"T1","body":"b","confirm":true},"stage":true}`),
			call(c+" stage update, no body", p("github_update_issue"), "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1,"title":"T2","confirm":true},"stage":true}`),
			call(c+" stage update, dry run", p("github_update_issue"), "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1,"title":"T3","body":"b","confirm":true,"anvil_dry_run":true},"stage":true}`),
			call(c+" update", p("github_update_issue"), "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1,"title":"T4","confirm":true}}`),
		)
	}
	return s
}
