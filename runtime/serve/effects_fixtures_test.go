package serve

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/golden"
)

// The effect tests serve github-mini compiled by the real compiler: the base
// bundle is the shared testdata/workspace/github (kept equal to the
// compiler's output by cmd/anvil's TestGatewayFixture), and the manifest
// variants under testdata/effects/ are compiled into
// testdata/effects/<variant>/air.json by TestEffectsFixturesCompiled below.
// runtime/ may not import the compiler, so that test builds cmd/anvil and
// runs `anvil compile` like a user would.

// effVariants are the manifest variants: testdata/effects/<name>.yaml
// compiles into testdata/effects/<name>/air.json.
var effVariants = []string{"deadline", "drafts"}

const (
	effDir        = "testdata/effects"
	effBaseBundle = "testdata/workspace/github"
	effModuleRoot = "../.."
	effSpec       = "examples/github-mini/openapi.yaml"
)

// effBuildAnvil builds cmd/anvil into a temporary directory.
func effBuildAnvil(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "anvil")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/anvil")
	cmd.Dir = effModuleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/anvil: %v\n%s", err, out)
	}
	return bin
}

// effCompile runs `anvil compile` from the module root (so the AIR's source
// paths are the repository-relative ones) and returns its exit code, output
// and the bundle directory.
func effCompile(t *testing.T, bin, manifest string, args ...string) (int, string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "github")
	full := append([]string{"compile", effSpec, "--manifest", manifest, "--out", out, "--root", t.TempDir()}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Dir = effModuleRoot
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("anvil compile: %v", err)
	}
	return code, buf.String(), out
}

// effServedParts is the part of an AIR document the effect tests depend on:
// the service's auth and every operation's id, state, names, effect,
// idempotency, confirmation, input and output. Source paths and evidence are
// left out, so the check does not fail on provenance the gateway never reads.
func effServedParts(t *testing.T, airJSON []byte) []byte {
	t.Helper()
	var doc struct {
		Service struct {
			Auth json.RawMessage `json:"auth"`
		} `json:"service"`
		Operations []map[string]json.RawMessage `json:"operations"`
	}
	if err := json.Unmarshal(airJSON, &doc); err != nil {
		t.Fatalf("air.json: %v", err)
	}
	keep := []string{"id", "state", "mcp", "effect", "idempotency", "confirmation", "input", "output"}
	ops := make([]map[string]json.RawMessage, 0, len(doc.Operations))
	for _, op := range doc.Operations {
		m := map[string]json.RawMessage{}
		for _, k := range keep {
			m[k] = op[k]
		}
		ops = append(ops, m)
	}
	b, err := json.Marshal(map[string]any{"auth": doc.Service.Auth, "operations": ops})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEffectsFixturesCompiled keeps testdata/effects/<variant>/air.json equal
// (in effServedParts) to what the real compiler makes of each manifest variant (ANVIL_UPDATE_GOLDEN=1
// rewrites them), and checks that the compiler refuses the wrong-typed draft
// literal the gateway-side draft_input_invalid case has to write into the AIR
// by hand.
func TestEffectsFixturesCompiled(t *testing.T) {
	if testing.Short() && !golden.Updating() {
		t.Skip("builds cmd/anvil; skipped with -short")
	}
	bin := effBuildAnvil(t)
	for _, v := range effVariants {
		manifest := filepath.ToSlash(filepath.Join("runtime/serve", effDir, v+".yaml"))
		code, out, dir := effCompile(t, bin, manifest)
		if code != 0 {
			t.Fatalf("compile %s: exit %d\n%s", manifest, code, out)
		}
		got, err := os.ReadFile(filepath.Join(dir, "air.json"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(effDir, v, "air.json")
		if golden.Updating() {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run ANVIL_UPDATE_GOLDEN=1 go test -run TestEffectsFixturesCompiled ./runtime/serve/)", err)
		}
		g, w := effServedParts(t, got), effServedParts(t, want)
		if !bytes.Equal(g, w) {
			t.Errorf("%s differs from what compile writes for %s (run ANVIL_UPDATE_GOLDEN=1 go test -run TestEffectsFixturesCompiled ./runtime/serve/):\n got %s\nwant %s", path, manifest, g, w)
		}
	}

	// The compiler refuses a draft literal of the wrong type, so only a
	// hand-written (or older) bundle can carry one to the gateway.
	code, out, _ := effCompile(t, bin, "runtime/serve/testdata/effects/badliteral.yaml", "--format", "json")
	if code != 1 {
		t.Fatalf("compile badliteral.yaml: exit %d, want 1\n%s", code, out)
	}
	var res struct {
		Diagnostics []struct {
			Level   string `json:"level"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &res); err != nil {
		t.Fatalf("compile --format json printed no JSON: %v\n%s", err, out)
	}
	found := false
	for _, d := range res.Diagnostics {
		if d.Code == "effect/mapping_type_mismatch" && d.Level == "error" && strings.Contains(d.Message, `"draft"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("compile badliteral.yaml: no effect/mapping_type_mismatch error for the draft literal:\n%s", out)
	}
}
