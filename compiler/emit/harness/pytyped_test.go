package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"
)

// pyrightPath is tools/ts's pinned pyright; the test fails when it is missing.
func pyrightPath(t *testing.T) string {
	t.Helper()
	p := filepath.Join(repoRoot(), "tools", "ts", "node_modules", ".bin", "pyright")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("pyright not found at %s: run `npm ci --prefix tools/ts` first", p)
	}
	return p
}

// pyUser is a program using the hostile package as its README shows:
// controls, renamed fields, the error classes, search and the last effect.
const pyUser = `from typing import Any, Dict, List

from anvil_hostile import AnvilError, HostileClient, PolicyDenied, RateLimited


def main() -> None:
    client = HostileClient(max_retries=1, timeout=10.0)
    things = client.list_thing(dry_run_field=True, timeout_field=3, timeout=5.0)
    first: str = things[0]["name"]
    plan = client.create_thing(name="x", dry_run_field=False, confirm=True, dry_run=True)
    url: str = plan["url"]
    created = client.create_thing(name="y", confirm=True)
    ident: int = created["id"]
    draft: Any = created.get("draft")
    found: List[Dict[str, Any]] = client.search("create a thing", limit=3)
    try:
        client.create_thing(name="y", idempotency_key="k", confirm=True, stage=True)
    except PolicyDenied as e:
        print(e.details.get("code"))
    except RateLimited as e:
        print(e.retry_after_ms)
    except AnvilError as e:
        print(e.code, e.trace_id)
    print(things, first, url, ident, draft, plan, found, client.last_effect)
`

// pyMisuse holds three mistakes the type checker must report: a control
// given a string, a field under a name the method does not take, and a key
// the result type does not have.
const pyMisuse = `from anvil_hostile import HostileClient

HostileClient().create_thing(name="x", dry_run="yes")
HostileClient().create_thing(name="x", dryRun=True)
HostileClient().list_thing()[0]["nope"]
`

// TestPythonPackageTypeChecksStrict: pyright in strict mode passes a
// program using the package (py.typed, typed signatures and errors) and
// reports the misuses of another.
func TestPythonPackageTypeChecksStrict(t *testing.T) {
	t.Parallel()
	node, pyright := tool(t, "node"), pyrightPath(t)
	doc, _ := example(t, "hostile")
	tree, err := Render(emit.Connector{ID: "hostile", Doc: doc})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tree["python/anvil_hostile/py.typed"]; !ok {
		t.Fatal("the package has no py.typed")
	}
	pkg := filepath.Join(t.TempDir(), "hostile")
	if err := tree.WriteTo(pkg); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(pkg, "use.py"), pyUser)
	writeFile(t, filepath.Join(pkg, "misuse.py"), pyMisuse)
	writeFile(t, filepath.Join(pkg, "pyrightconfig.json"),
		`{"include": ["use.py", "misuse.py"], "extraPaths": ["python"], "typeCheckingMode": "strict", "pythonVersion": "3.9"}`)
	r := run(t, []string{"PATH=" + filepath.Dir(node) + ":/usr/bin:/bin", "HOME=" + t.TempDir()}, "", pyright, "-p", filepath.Join(pkg, "pyrightconfig.json"))
	out := r.Stdout + r.Stderr
	if strings.Contains(out, "/use.py") {
		t.Errorf("pyright --strict reports errors in a correct program:\n%s", out)
	}
	if !strings.Contains(out, "misuse.py:3:") || !strings.Contains(out, "misuse.py:4:") || !strings.Contains(out, "misuse.py:5:") {
		t.Errorf("pyright did not report the three misuses:\n%s", out)
	}
}
