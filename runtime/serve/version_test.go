package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/gen/github-mini/workspace"
	"github.com/anvil-dev/anvil/runtime/buildinfo"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// githubMiniHash is the bundleHash gen/github-mini was generated from (the
// github bundle's generation.json; runtime/serve/testdata/workspace is
// the same bundle).
const githubMiniHash = "6ce179c3c1cfbf5e34b1ec7841594381936063b8c6b2a48e529313da168850c7"

func TestVersion(t *testing.T) {
	line := buildinfo.Read().String()
	for _, c := range []struct {
		name string
		ws   bool
		arg  string
		want string
	}{
		{"generated version", true, "version", fmt.Sprintf("%s\nbundle github %s\n", line, githubMiniHash)},
		{"generated --version", true, "--version", fmt.Sprintf("%s\nbundle github %s\n", line, githubMiniHash)},
		{"fleet --version", false, "--version", line + "\n"},
	} {
		var out, errb bytes.Buffer
		o := serve.Options{Stdout: &out, Stderr: &errb}
		code := 0
		if c.ws {
			code = serve.Main(context.Background(), []string{"github-mini", c.arg}, workspace.Workspace(), o)
		} else {
			code = serve.Main(context.Background(), []string{"anvil", c.arg}, nil, o)
		}
		if code != 0 || out.String() != c.want || errb.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q (want %q), stderr %q", c.name, code, out.String(), c.want, errb.String())
		}
	}
}

// TestGeneratedBinaryVersion builds gen/github-mini and asks the binary.
func TestGeneratedBinaryVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "github-mini")
	cmd := exec.Command("go", "build", "-o", bin, "./gen/github-mini")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^anvil \S+, revision (unknown|[0-9a-f]{12})( \(modified\))?, go\S+\nbundle github ` + githubMiniHash + "\n$")
	if !want.Match(out) {
		t.Errorf("github-mini --version: %q", out)
	}
}

// TestGeneratedGatewayReadyzAndSIGHUP serves the generated workspace: /readyz
// reports the compiled-in bundle hash, and SIGHUP is logged, not acted on
// (the workspace is compiled in).
func TestGeneratedGatewayReadyzAndSIGHUP(t *testing.T) {
	port := freePort(t)
	stderr := &syncWriter{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- serve.Main(ctx, []string{"github-mini", "serve", "mcp", "--fleet", "--http", fmt.Sprint(port)}, workspace.Workspace(),
			serve.Options{Getenv: func(string) string { return "" }, Stderr: stderr})
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d: %s", code, stderr)
		}
	}()
	r := &running{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), stderr: stderr}
	// /healthz answers while the workspace loads; /readyz once it serves.
	r.waitFor("the gateway to serve", func() bool {
		resp, err := http.Get(r.base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200 && strings.Contains(stderr.String(), "anvil: startup report")
	})
	st, z := r.ready()
	if st != 200 || len(z.Bundles) != 1 || z.Bundles[0].BundleHash != githubMiniHash {
		t.Errorf("readyz: %d %+v", st, z)
	}
	if !strings.Contains(stderr.String(), "anvil:   connector github: 12 tool(s), bundleHash "+githubMiniHash+"\n") ||
		!strings.Contains(stderr.String(), "anvil:   warning: upstream host api.github.example (connector github) is not in ANVIL_ALLOWED_HOSTS") {
		t.Errorf("startup report: %s", stderr)
	}
	hup(t)
	r.waitFor("the SIGHUP log line", func() bool {
		return strings.Contains(stderr.String(), "anvil: SIGHUP ignored: this gateway serves the workspace compiled into it")
	})
}
