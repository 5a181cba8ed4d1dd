package e2e

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// The Python scripts are exercised against small fakes of the packages they
// import, to pin the plumbing between them and the Go checks.

const fakeCompose = `
class _Item:
    def __init__(self, path):
        self.path = path


def item(path):
    return _Item(path)


class _Run:
    ok = False
    compensation = [
        {"step": "comment", "call": 1, "connector": "github", "operation": "github.comments.create", "effect_class": "reversible",
         "undo": {"kind": "inverse", "operation": "github.comments.delete", "arguments": {"owner": "octo", "repo": "hello", "comment_id": 102}}},
        {"step": "comment", "call": 0, "connector": "github", "operation": "github.comments.create", "effect_class": "reversible",
         "undo": {"kind": "inverse", "operation": "github.comments.delete", "arguments": {"owner": "octo", "repo": "hello", "comment_id": 101}}},
    ]

    def to_json(self):
        return {"schema": "anvil.compose-run/v1", "status": "failed", "failed_step": "missing",
                "steps": {"comment": {"status": "ok", "result": [{"id": 101, "body": "triaged"}, {"id": 102, "body": "triaged"}]}},
                "compensation": self.compensation}


class _Flow:
    def __init__(self):
        self.steps = []

    def step(self, id, op, args=None, **kw):
        self.steps.append((id, op, kw))
        return id

    def map(self, id, op, over, args, **kw):
        assert isinstance(args["issue_number"], _Item)
        self.steps.append((id, op, args))
        return id

    def validate(self):
        return [{"level": "warning", "code": "irreversible", "step": None, "message": "m"}]

    def run(self):
        missing = self.steps[2][2]
        assert missing["issue_number"] == -1 and missing["after"] == ["comment"], missing
        return _Run()

    def compensate(self, run, confirm=False):
        assert confirm is True
        return [dict(e, status="ok", result=None) for e in run.compensation]


class Composite:
    def flow(self, name):
        assert name == "triage"
        return _Flow()
`

const fakeGithub = `
import os


class AnvilError(Exception):
    def __init__(self, code, details):
        super().__init__(code)
        self.code = code
        self.details = details


class _Gateway:
    connector = os.environ.get("ANVIL_GATEWAY_CONNECTOR") or "github"


class GithubClient:
    def __init__(self):
        self._gateway = _Gateway() if os.environ.get("ANVIL_GATEWAY_URL") else None
        self.leak = os.getenv("GITHUB_TOKEN")

    def list_issue(self, owner, repo):
        return [{"number": 2, "title": "Second issue", "state": "open"}, {"number": 1, "title": "First issue", "state": "closed"}]

    def create_issue(self, owner, repo, title, confirm=False):
        raise AnvilError("policy_denied", {"code": "policy/grant_denied"})
`

// fakeRunner is a runner whose scripts go to a temporary directory.
func fakeRunner(t *testing.T) *runner {
	t.Helper()
	work := t.TempDir()
	r := newRunner(context.Background(), Options{}, work, &Result{})
	if err := os.MkdirAll(r.paths.scripts, 0o755); err != nil {
		t.Fatal(err)
	}
	return r
}

// writePackage writes a one-file Python package under dir.
func writePackage(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "__init__.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestComposeFlowScript(t *testing.T) {
	t.Parallel()
	r := fakeRunner(t)
	lib := t.TempDir()
	writePackage(t, lib, "anvil_compose", fakeCompose)
	var out flowOut
	if err := r.runPython(context.Background(), "compose_flow.py", composeFlowPy, "/nonexistent", lib, &out, strconv.Itoa(missingIssue)); err != nil {
		t.Fatal(err)
	}
	if out.ImportError != nil || out.Error != nil {
		t.Fatalf("the script failed: %s %s\n%s", out.ImportError, out.Error, out.Traceback)
	}
	if out.OK == nil || *out.OK || out.Run["failed_step"] != "missing" || len(out.Findings) != 1 {
		t.Errorf("decoded %+v", out)
	}
	if err := checkFlowCompensation(out); err != nil {
		t.Errorf("checkFlowCompensation: %v", err)
	}
	if len(out.Outcomes) != 2 || out.Outcomes[0]["status"] != "ok" {
		t.Errorf("outcomes %v", out.Outcomes)
	}

	var missing flowOut
	if err := r.runPython(context.Background(), "compose_flow.py", composeFlowPy, "/nonexistent", t.TempDir(), &missing, "-1"); err != nil {
		t.Fatal(err)
	}
	if missing.ImportError == nil || missing.ImportError.Type != "ModuleNotFoundError" {
		t.Errorf("without the composite: %+v", missing)
	}
}

func TestHarnessReadScript(t *testing.T) {
	t.Parallel()
	r := fakeRunner(t)
	lib := t.TempDir()
	writePackage(t, lib, "anvil_github", fakeGithub)
	var hr harnessRead
	if err := r.runHarnessRead(context.Background(), &hr); err == nil {
		t.Error("no package at the harness path passes")
	}
	hr = harnessRead{}
	if err := r.runPython(context.Background(), "harness_read.py", harnessReadPy, "/nonexistent", lib, &hr); err != nil {
		t.Fatal(err)
	}
	if hr.ImportError != nil || !hr.GatewayMode || hr.Connector != "github" {
		t.Fatalf("decoded %+v", hr)
	}
	if err := checkMockIssues(hr.Issues); err != nil {
		t.Error(err)
	}
	if hr.CreateError == nil || hr.CreateError.Code != "policy_denied" || hr.CreateError.Details["code"] != "policy/grant_denied" {
		t.Errorf("create error %s", hr.CreateError)
	}
	if got := credentialReads(hr.EnvReads); !reflect.DeepEqual(got, []string{"GITHUB_TOKEN"}) {
		t.Errorf("the spy saw %v; flagged %v, want [GITHUB_TOKEN]", hr.EnvReads, got)
	}
}
