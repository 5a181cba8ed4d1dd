package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// compileUnapproved compiles github-mini without its manifest: every
// operation is review_required.
func compileUnapproved(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "gh")
	if code, _, stderr := runCLI(t, "", "compile", exampleSpec, "--service", "github", "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	return out
}

func approvedIDs(t *testing.T, dir string) []string {
	t.Helper()
	doc, err := air.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, op := range doc.Operations {
		if op.State == air.StateApproved {
			out = append(out, op.ID)
		}
	}
	return out
}

// TestApproveNames: every form of name selects what it names, and a glob
// means the same with or without the service prefix.
func TestApproveNames(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"github.issues.list"}, "github.issues.list"},
		{[]string{"listIssues"}, "github.issues.list"},
		{[]string{"list_issues"}, "github.issues.list"},
		{[]string{"github_list_issues"}, "github.issues.list"},
		{[]string{"issues.*"}, "github.issues.list,github.issues.create,github.issues.get,github.issues.update"},
		{[]string{"github.issues.*"}, "github.issues.list,github.issues.create,github.issues.get,github.issues.update"},
		{[]string{"*.delete"}, "github.comments.delete,github.releases.delete"},
		{[]string{"--all-reads"}, "github.issues.list,github.issues.get,github.comments.list,github.tags.get,github.pulls.list"},
		{[]string{"--all-reads", "createIssue", "listIssues"}, "github.issues.list,github.issues.create,github.issues.get,github.comments.list,github.tags.get,github.pulls.list"},
	} {
		out := compileUnapproved(t)
		code, stdout, stderr := runCLI(t, "", append([]string{"approve", out}, c.args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d %s", c.args, code, stderr)
			continue
		}
		if got := strings.Join(approvedIDs(t, out), ","); got != c.want {
			t.Errorf("%v approved %s, want %s (%s)", c.args, got, c.want, stdout)
		}
	}
	out := compileUnapproved(t)
	if code, _, stderr := runCLI(t, "", "approve", out, "--all"); code != 0 || len(approvedIDs(t, out)) != 12 {
		t.Errorf("--all: exit %d %s", code, stderr)
	}
}

// TestApproveReportsEveryUnknownName: all bad names are reported at once,
// with suggestions, and nothing is changed.
func TestApproveReportsEveryUnknownName(t *testing.T) {
	out := compileUnapproved(t)
	before, _ := os.ReadFile(filepath.Join(out, air.DocumentFile))
	code, _, stderr := runCLI(t, "", "approve", out, "listIssue", "github.issues.lst", "nothing.*", "listPulls", "zzzzzzzzzz")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{`"listIssue"`, `did you mean "listIssues"?`, `"github.issues.lst"`, `did you mean "github.issues.list"?`,
		`"nothing.*" matches no operation id`, `"zzzzzzzzzz"`, `globs such as 'issues.*'`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, `"listPulls"`) {
		t.Errorf("a good name was reported: %s", stderr)
	}
	after, _ := os.ReadFile(filepath.Join(out, air.DocumentFile))
	if !bytes.Equal(before, after) {
		t.Error("a refused approval changed the bundle")
	}
	if code, _, _ := runCLI(t, "", "approve", out); code != 1 {
		t.Errorf("no names: exit %d", code)
	}
}

const personSpec = `openapi: 3.0.3
info: {title: Desk, version: "1"}
servers: [{url: https://desk.example}]
security: [{desk: [tickets]}]
paths:
  /tickets:
    get:
      operationId: listTickets
      responses: {"200": {description: ok}}
components:
  securitySchemes:
    desk:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: https://desk.example/authorize
          tokenUrl: https://desk.example/token
          scopes: {tickets: read tickets}
`

// TestApproveNeedsReviewForPersonAuth: approving an operation that acts as
// a person needs a reviewer and a reason, recorded in its review notes.
func TestApproveNeedsReviewForPersonAuth(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.yaml")
	if err := os.WriteFile(spec, []byte(personSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "desk")
	if code, _, stderr := runCLI(t, "", "compile", spec, "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	code, _, stderr := runCLI(t, "", "approve", out, "listTickets")
	if code != 1 || !strings.Contains(stderr, "--reviewed-by") || len(approvedIDs(t, out)) != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "approve", out, "--all", "--reviewed-by", "alice", "--review-reason", "read only")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	doc, err := air.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Operations[0]
	if op.State != air.StateApproved || op.ReviewNotes[len(op.ReviewNotes)-1] != "Approved by alice: read only" {
		t.Errorf("%s %q", op.State, op.ReviewNotes)
	}
}

// TestApproveGlobSkipsBlocked: a glob or --all leaves blocked operations
// as they are (and says so); naming one exactly is refused.
func TestApproveGlobSkipsBlocked(t *testing.T) {
	dir := t.TempDir()
	man := filepath.Join(dir, "anvil.yaml")
	if err := os.WriteFile(man, []byte("service: {name: github}\noperations:\n  deleteIssueComment: {state: blocked}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "gh")
	if code, _, stderr := runCLI(t, "", "compile", exampleSpec, "--manifest", man, "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := runCLI(t, "", "approve", out, "comments.*")
	if code != 0 || !strings.Contains(stdout, "left blocked: github.comments.delete") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if got := strings.Join(approvedIDs(t, out), ","); got != "github.comments.list,github.comments.create" {
		t.Errorf("approved %s", got)
	}
	if code, _, stderr := runCLI(t, "", "approve", out, "deleteIssueComment"); code == 0 || !strings.Contains(stderr, "remain blocked") {
		t.Errorf("exact name of a blocked operation: exit %d %s", code, stderr)
	}
}

func TestApproveBoundsItsRefusal(t *testing.T) {
	out := compileUnapproved(t)
	args := []string{"approve", out}
	for i := 0; i < 50; i++ {
		args = append(args, fmt.Sprintf("nothing%d", i))
	}
	code, _, stderr := runCLI(t, "", args...)
	if code != 1 || !strings.Contains(stderr, "and 30 more") || strings.Count(stderr, "no operation") != 20 {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestApproveListsWhatItApproved: approve prints every operation it
// approved with its kind, says how many writes a glob matched, and
// --reads-only narrows a glob (or --all) to the reads, naming the writes
// it left out.
func TestApproveListsWhatItApproved(t *testing.T) {
	out := compileUnapproved(t)
	code, stdout, stderr := runCLI(t, "", "approve", out, "issues.*")
	if code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	for _, want := range []string{
		"Approved 4 new operation(s) (4 requested)",
		"\n  read   github.issues.list (listIssues; GET /repos/{owner}/{repo}/issues)\n",
		"\n  write  github.issues.create (createIssue; POST /repos/{owner}/{repo}/issues; needs confirmation)\n",
		"\n  write  github.issues.update (updateIssue; PATCH /repos/{owner}/{repo}/issues/{issue_number}; needs confirmation)\n",
		"\n  'issues.*' matched 2 write(s) among 4 operation(s); --reads-only approves only the reads\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}

	out = compileUnapproved(t)
	code, stdout, stderr = runCLI(t, "", "approve", out, "issues.*", "--reads-only")
	if code != 0 || strings.Join(approvedIDs(t, out), ",") != "github.issues.list,github.issues.get" ||
		!strings.Contains(stdout, "  left out by --reads-only: 2 write(s): github.issues.create, github.issues.update\n") ||
		strings.Contains(stdout, "  write  ") {
		t.Errorf("--reads-only: exit %d, approved %v\n%s%s", code, approvedIDs(t, out), stdout, stderr)
	}
	out = compileUnapproved(t)
	if code, _, stderr := runCLI(t, "", "approve", out, "--all", "--reads-only"); code != 0 ||
		strings.Join(approvedIDs(t, out), ",") != "github.issues.list,github.issues.get,github.comments.list,github.tags.get,github.pulls.list" {
		t.Errorf("--all --reads-only: exit %d %v %s", code, approvedIDs(t, out), stderr)
	}
}
