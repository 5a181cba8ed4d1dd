package compose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBundleLayoutEndToEnd: with --layout bundle the composite loads each
// connector's SDK from the bundle's own sdk/ (a harness package written
// there) and calls through the gateway serving the same workspace: the
// sdk/ inside a bundle does not disturb bundle discovery.
func TestBundleLayoutEndToEnd(t *testing.T) {
	t.Parallel()
	e := startLiveLayout(t, []string{"github"}, nil, LayoutBundle)
	if _, err := os.Stat(filepath.Join(e.Root, "github")); err == nil {
		t.Fatal("a harness package was written under the skills root")
	}
	cat, err := os.ReadFile(filepath.Join(e.Compose, "compose.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cat), `/workspace/github/sdk/python"`) {
		t.Fatalf("compose.json does not use the bundle's sdk/:\n%s", cat)
	}
	out, code := e.python(t, `
import json
from anvil_compose import Composite
c = Composite()
print(json.dumps([i["number"] for i in c.call("github.issues.list", {"owner": "octo", "repo": "hello", "state": "all"})]))
`)
	if code != 0 || strings.TrimSpace(out) != "[2, 1]" {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if n := len(e.Mock.Requests()); n != 1 {
		t.Errorf("upstream saw %d requests, want 1", n)
	}
}
