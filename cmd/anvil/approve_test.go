package main

import (
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
