package harness

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/compiler/emit/gosdk"
)

// goMini uses github-mini's Go SDK as a program would: typed reads, the
// local confirmation gate, a dry run, a write and its undo from the effect
// report, a staged write, a typed error, search and a missing token.
const goMini = `package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	github "anvil.local/sdk/github"
)

func main() {
	ctx := context.Background()
	c, err := github.New()
	if err != nil {
		panic(err)
	}
	out := map[string]any{}
	issues, err := c.ListIssue(ctx, github.ListIssueInput{Owner: "octo", Repo: "hello"})
	if err != nil {
		panic(err)
	}
	out["issues"] = len(issues)
	out["first_title"] = issues[0].Title
	out["read_class"] = c.LastEffect().Class

	_, err = c.CreateIssue(ctx, github.CreateIssueInput{Owner: "octo", Repo: "hello", Title: "unconfirmed"})
	out["unconfirmed"] = errors.Is(err, github.ErrConfirmationRequired)

	var plan github.Plan
	if _, err := c.CreateIssue(ctx, github.CreateIssueInput{Owner: "octo", Repo: "hello", Title: "planned"}, github.WithConfirm(), github.WithDryRun(&plan)); err != nil {
		panic(err)
	}
	out["plan_method"] = plan.Method

	comment, err := c.CreateComment(ctx, github.CreateCommentInput{Owner: "octo", Repo: "hello", IssueNumber: 1, Body: "undo me"})
	if err != nil {
		panic(err)
	}
	out["comment_body"] = comment.Body
	var effect github.EffectReport
	if _, err := c.ListPull(ctx, github.ListPullInput{Owner: "octo", Repo: "hello"}, github.WithEffect(&effect)); err != nil {
		panic(err)
	}
	undo := c.LastEffect()
	if _, err := c.CreateComment(ctx, github.CreateCommentInput{Owner: "octo", Repo: "hello", IssueNumber: 1, Body: "undo me too"}, github.WithEffect(&effect)); err != nil {
		panic(err)
	}
	out["undo_kind"] = effect.Undo.Kind
	if _, err := c.Call(ctx, effect.Undo.Tool, effect.Undo.Arguments, github.WithConfirm()); err != nil {
		panic(err)
	}
	_ = undo

	release, err := c.CreateRelease(ctx, github.CreateReleaseInput{Owner: "octo", Repo: "hello", TagName: "v9"}, github.WithConfirm(), github.WithStage())
	if err != nil {
		panic(err)
	}
	out["staged_draft"] = release.Draft != nil && *release.Draft
	out["staged_promote"] = c.LastEffect().Staged != nil && c.LastEffect().Staged.Promote != nil

	_, err = c.GetIssue(ctx, github.GetIssueInput{Owner: "octo", Repo: "hello", IssueNumber: 999})
	var e *github.Error
	out["not_found"] = errors.Is(err, github.ErrNotFound) && errors.As(err, &e) && e.TraceID != ""

	found, err := c.Search(ctx, "list the issues of a repository", 3)
	if err != nil {
		panic(err)
	}
	out["search_method"] = found[0].Method

	noToken, _ := github.New(github.WithTokenFile(os.DevNull + ".missing"))
	_, err = noToken.ListIssue(ctx, github.ListIssueInput{Owner: "octo", Repo: "hello"})
	out["no_token"] = errors.Is(err, github.ErrAuthRequired)
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}
`

// goHostile makes the hostile-spec calls of the other languages with the Go
// SDK: its inputs are struct fields, apart from the controls (options).
const goHostile = `package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	hostile "anvil.local/sdk/hostile"
)

func main() {
	ctx := context.Background()
	c, err := hostile.New()
	if err != nil {
		panic(err)
	}
	t, s, k, n := true, "field-stage", "field-key", int64(9)
	in := func(name string) hostile.CreateThingInput {
		return hostile.CreateThingInput{Name: name, Confirm: &t, DryRun: &t, DryRun2: &t, IdempotencyKey: &k, Stage: &s,
			Timeout: &n, Headers: map[string]string{"h": "v"}, BodyAnvilDryRun: &t}
	}
	out := map[string]any{}
	var plan hostile.Plan
	if _, err := c.CreateThing(ctx, in("planned"), hostile.WithIdempotencyKey("ctl-key"), hostile.WithConfirm(), hostile.WithDryRun(&plan)); err != nil {
		panic(err)
	}
	out["plan"] = plan
	_, err = c.CreateThing(ctx, in("unconfirmed"), hostile.WithIdempotencyKey("ctl-key"))
	out["unconfirmed"] = errors.Is(err, hostile.ErrConfirmationRequired)
	if _, err := c.CreateThing(ctx, in("real"), hostile.WithIdempotencyKey("ctl-key"), hostile.WithConfirm()); err != nil {
		panic(err)
	}
	staged, err := c.CreateThing(ctx, hostile.CreateThingInput{Name: "staged"}, hostile.WithConfirm(), hostile.WithStage())
	if err != nil {
		panic(err)
	}
	out["staged"] = staged.Draft != nil && *staged.Draft && c.LastEffect().Staged != nil
	var listPlan hostile.Plan
	three := int64(3)
	if _, err := c.ListThing(ctx, hostile.ListThingInput{DryRun: &t, Timeout: &three}, hostile.WithDryRun(&listPlan)); err != nil {
		panic(err)
	}
	out["list_plan_url"] = listPlan.URL
	if _, err := c.ListThing(ctx, hostile.ListThingInput{DryRun: &t, Timeout: &three}); err != nil {
		panic(err)
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}
`

// TestGoSDKAgainstALiveGateway builds programs that use the Go SDKs of
// github-mini (its README's example too) and of the hostile spec (one go vet
// and one go build for all, through a go.work) and runs them against the
// real fleet gateway.
func TestGoSDKAgainstALiveGateway(t *testing.T) {
	t.Parallel()
	goTool := tool(t, "go")
	gw, tree, pkg, env := livePackage(t, githubMini(t), tool(t, "node"))
	up, hostilePkg, hostileEnv := hostileLive(t)

	app := filepath.Join(t.TempDir(), "app")
	for name, data := range map[string]string{
		"go.mod":          "module anvil.local/app\n\ngo " + gosdk.GoVersion + "\n",
		"go.work":         "go " + gosdk.GoVersion + "\n\nuse (\n\t.\n\t" + filepath.Join(pkg, "go") + "\n\t" + filepath.Join(hostilePkg, "go") + "\n)\n",
		"mini/main.go":    goMini,
		"hostile/main.go": goHostile,
		// go/README.md's example, as a reader would run it.
		"readme/main.go": fill(t, codeBlock(t, string(tree["go/README.md"].Data), "go")),
	} {
		p := filepath.Join(app, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, data)
	}
	goEnv := []string{"PATH=" + filepath.Dir(goTool) + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS="}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOROOT", "CGO_ENABLED"} {
		out, err := exec.Command(goTool, "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		goEnv = append(goEnv, v+"="+strings.TrimSpace(string(out)))
	}
	if r := runFor(t, 5*time.Minute, goEnv, "", "/bin/sh", "-c", `cd "$0" && go vet ./... anvil.local/sdk/github anvil.local/sdk/hostile && go build -o bin/ ./mini ./hostile ./readme`, app); r.Code != 0 {
		t.Fatalf("go vet / go build: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	before := len(gw.Mock.Requests())
	if r := run(t, env, "", filepath.Join(app, "bin", "readme")); r.Code != 0 || !strings.Contains(r.Stdout, "Second issue") ||
		!strings.Contains(r.Stdout, "\nread\n") || len(gw.Mock.Requests()) == before {
		t.Errorf("go/README.md's example: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r := run(t, env, "", filepath.Join(app, "bin", "mini"))
	if r.Code != 0 {
		t.Fatalf("the github-mini program: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var mini map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &mini); err != nil {
		t.Fatalf("%s: %v", r.Stdout, err)
	}
	want := map[string]any{"issues": float64(2), "first_title": "Second issue", "read_class": "read", "unconfirmed": true,
		"plan_method": "POST", "comment_body": "undo me", "undo_kind": "inverse", "staged_draft": true, "staged_promote": true,
		"not_found": true, "search_method": "ListIssue", "no_token": true}
	for k, v := range want {
		if mini[k] != v {
			t.Errorf("%s = %v, want %v", k, mini[k], v)
		}
	}
	state := gw.Mock.State()
	for _, i := range state.Issues {
		if i.Title == "unconfirmed" || i.Title == "planned" {
			t.Errorf("the issue %q reached the upstream", i.Title)
		}
	}
	bodies := map[string]bool{}
	for _, c := range state.Comments {
		bodies[c.Body] = true
	}
	if !bodies["undo me"] || bodies["undo me too"] {
		t.Errorf("comments after the undo: %v, want the first and not the undone one", bodies)
	}

	r = run(t, hostileEnv, "", filepath.Join(app, "bin", "hostile"))
	if r.Code != 0 {
		t.Fatalf("the hostile program: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var out struct {
		Plan        json.RawMessage `json:"plan"`
		Unconfirmed bool            `json:"unconfirmed"`
		Staged      bool            `json:"staged"`
		ListPlanURL string          `json:"list_plan_url"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("%s: %v", r.Stdout, err)
	}
	checkHostilePlan(t, "go", string(out.Plan))
	if !out.Unconfirmed || !out.Staged || !strings.HasSuffix(out.ListPlanURL, "/things?dry_run=true&timeout=3") {
		t.Errorf("go hostile: %s", r.Stdout)
	}
	checkHostileRequests(t, up, true)
}
