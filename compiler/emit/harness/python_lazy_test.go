package harness

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"
)

// TestPythonLargeAPILoadsLazily: a large API's Python package imports
// without loading its operation table or any method module; a method is
// found, listed by dir() and inspected with its real signature, loading
// only its own module; the table loads on first call. Small packages keep
// every method in client.py.
func TestPythonLargeAPILoadsLazily(t *testing.T) {
	t.Parallel()
	python := tool(t, "python3")
	doc := copiedDocument(t, 5) // 60 operations: two _methods modules
	tree, err := Render(emit.Connector{ID: "github", Doc: doc})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"_methods/__init__.py", "_methods/m1.py", "_methods/m2.py"} {
		if _, ok := tree["python/anvil_github/"+f]; !ok {
			t.Errorf("the package lacks python/anvil_github/%s", f)
		}
	}
	if _, ok := tree["python/anvil_github/_methods/m3.py"]; ok {
		t.Errorf("60 operations make 3 method modules, want 2 of at most %d", pyMethodsPerPart)
	}
	if client := string(tree["python/anvil_github/client.py"].Data); strings.Contains(client, "    def list_issue(") {
		t.Errorf("a large API's client.py defines its methods itself")
	}
	pkg := filepath.Join(t.TempDir(), "github")
	if err := tree.WriteTo(pkg); err != nil {
		t.Fatal(err)
	}
	script := `
import inspect, sys
import anvil_github
from anvil_github import GithubClient, AnvilError
loaded = lambda: sorted(m for m in sys.modules if m.startswith("anvil_github.") and (m.endswith(".spec") or "._methods." in m))
assert loaded() == [], loaded()
c = GithubClient()
assert "list_issue" in dir(c) and "create_comment_5" in dir(GithubClient), dir(c)
assert loaded() == [], loaded()
sig = inspect.signature(c.create_comment_5)
assert list(sig.parameters)[:4] == ["owner", "repo", "issue_number", "body"], sig
assert loaded() == ["anvil_github._methods.m2"], loaded()
assert GithubClient.create_comment_5 is GithubClient.__dict__["create_comment_5"]
try:
    c.no_such_method
    raise SystemExit("no AttributeError")
except AttributeError:
    pass
try:
    c.list_issue(owner="o", repo="r")
except AnvilError as e:
    assert e.details["code"] == "sdk/gateway_url_unset", e.details
assert loaded() == ["anvil_github._methods.m1", "anvil_github._methods.m2", "anvil_github.spec"], loaded()
assert len(anvil_github.OPERATIONS) == 60 and anvil_github.SPEC["connector"] == "github"
print("ok")
`
	env := []string{"PATH=/usr/bin:/bin", "PYTHONPATH=" + filepath.Join(pkg, "python"), "PYTHONDONTWRITEBYTECODE=1"}
	if r := run(t, env, "", python, "-c", script); r.Code != 0 || strings.TrimSpace(r.Stdout) != "ok" {
		t.Errorf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
