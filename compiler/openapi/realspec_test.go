package openapi

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/internal/testinput"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/runtime/air"
)

const githubMini = "../../examples/github-mini/openapi.yaml"

// specsDir is where scripts/fetch-specs.sh caches real descriptions.
func specsDir() string {
	if d := os.Getenv("ANVIL_SPECS_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", ".cache", "specs")
}

// realSpec returns the path of a cached real description. When it is
// missing the test fails under CI and is skipped (loudly) otherwise.
func realSpec(tb testing.TB, name string) string {
	tb.Helper()
	return testinput.File(tb, filepath.Join(specsDir(), name), "run scripts/fetch-specs.sh (or set ANVIL_SPECS_DIR)")
}

// checkRefs verifies that every "#/$defs/<name>" reference in the spec names
// an entry of Schemas, and that operations look sane.
func checkRefs(t *testing.T, s *Spec) {
	t.Helper()
	bad := 0
	seen := map[*air.Schema]bool{}
	var walk func(where string, x *air.Schema)
	walk = func(where string, x *air.Schema) {
		if x == nil || seen[x] {
			return
		}
		seen[x] = true
		if x.Ref != "" {
			name, ok := strings.CutPrefix(x.Ref, "#/$defs/")
			if !ok || s.Schemas[strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")] == nil {
				if bad++; bad < 10 {
					t.Errorf("%s: dangling %s", where, x.Ref)
				}
			}
		}
		for _, p := range x.Properties {
			walk(where, p)
		}
		for _, l := range [][]*air.Schema{x.AllOf, x.AnyOf, x.OneOf, x.PrefixItems} {
			for _, p := range l {
				walk(where, p)
			}
		}
		walk(where, x.Items)
		walk(where, x.AdditionalProperties)
		walk(where, x.Not)
	}
	for name, x := range s.Schemas {
		walk("schema "+name, x)
	}
	for _, op := range s.Operations {
		where := op.Method + " " + op.Path
		if op.Pos.Line == 0 || op.Pos.File == "" {
			t.Errorf("%s: no position", where)
		}
		for _, p := range op.Params {
			if p.Name == "" || p.In == "" {
				t.Errorf("%s: parameter without name or in", where)
			}
			walk(where, p.Schema)
		}
		if op.RequestBody != nil {
			walk(where, op.RequestBody.Schema)
		}
		for _, r := range op.Responses {
			walk(where, r.Schema)
		}
	}
}

func TestRealSpecs(t *testing.T) {
	cases := []struct {
		file   string
		kind   string
		minOps int
	}{
		{"github.json", KindOpenAPI30, 1000},
		{"stripe.json", KindOpenAPI30, 300},
		{"kubernetes.json", KindOpenAPI30, 500},
		{"jira.json", KindOpenAPI30, 300},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			file := realSpec(t, c.file)
			start := time.Now()
			s, err := Load(file, nil)
			took := time.Since(start)
			if err != nil {
				var f *diag.Failure
				if !errors.As(err, &f) {
					t.Fatalf("error is %T, not *diag.Failure: %v", err, err)
				}
				t.Fatalf("fatal: %v (%d diagnostics)", err, len(f.Diagnostics))
			}
			if s.Kind != c.kind || len(s.Operations) < c.minOps {
				t.Errorf("kind %s, %d operations (want %s, >= %d)", s.Kind, len(s.Operations), c.kind, c.minOps)
			}
			checkRefs(t, s)
			t.Logf("%s: %d operations, %d schemas, %d diagnostics in %v", c.file, len(s.Operations), len(s.Schemas), len(s.Diagnostics), took)
		})
	}
}

// TestGitHubOperations checks a few known facts of GitHub's description.
func TestGitHubOperations(t *testing.T) {
	s, err := Load(realSpec(t, "github.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, op := range s.Operations {
		if op.OperationID == "" || ids[op.OperationID] {
			t.Errorf("operationId %q missing or repeated", op.OperationID)
		}
		ids[op.OperationID] = true
	}
	op := opByID(t, s, "issues/create")
	if op.Method != "POST" || op.Path != "/repos/{owner}/{repo}/issues" || op.RequestBody == nil || op.RequestBody.ContentType != "application/json" {
		t.Errorf("issues/create: %s %s %+v", op.Method, op.Path, op.RequestBody)
	}
	if got := paramNames(op); len(got) < 2 || got[0] != "path:owner" || got[1] != "path:repo" {
		t.Errorf("issues/create params %v", got)
	}
	if op.Responses[0].Status != "201" || op.Responses[0].Schema == nil || op.Responses[0].Schema.Ref != "#/$defs/issue" || s.Schemas["issue"] == nil {
		t.Errorf("issues/create response %+v", op.Responses[0])
	}
	if op.Extensions["x-github"] == nil {
		t.Error("x-github extension missing")
	}
}

// TestPeakMemoryGitHub loads GitHub's description in a fresh process and
// checks its peak resident memory (VmHWM) stays under 500 MB.
func TestPeakMemoryGitHub(t *testing.T) {
	file := realSpec(t, "github.json")
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc/self/status")
	}
	if testing.Short() {
		t.Skip("short")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestLoadInChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ANVIL_OPENAPI_CHILD_LOAD="+file)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var hwm int
	var line string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "anvil-openapi-child: "); ok {
			line = rest
			f := strings.Fields(rest)
			hwm, _ = strconv.Atoi(strings.TrimSuffix(f[len(f)-1], "kB"))
		}
	}
	if hwm == 0 {
		t.Fatalf("no measurement in child output:\n%s", out)
	}
	t.Logf("child: %s", line)
	if hwm > 500*1024 {
		t.Errorf("peak memory %d kB, want under 500 MB", hwm)
	}
}

// TestLoadInChildProcess is the child of TestPeakMemoryGitHub; it does
// nothing in a normal run.
func TestLoadInChildProcess(t *testing.T) {
	file := os.Getenv("ANVIL_OPENAPI_CHILD_LOAD")
	if file == "" {
		t.Skip("only runs as TestPeakMemoryGitHub's child")
	}
	start := time.Now()
	s, err := Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			fmt.Printf("anvil-openapi-child: %d operations in %v, VmHWM %skB\n", len(s.Operations), took, strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
}
