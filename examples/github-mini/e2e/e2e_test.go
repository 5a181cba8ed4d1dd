package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEndToEnd builds the runner command and runs it against the generic
// gateway; every check must hold. It skips nothing: a component that is not
// there yet fails the test with that check's detail.
// TestEndToEnd runs the example against the generic fleet gateway
// (anvil serve mcp --fleet) and against the generated per-yard gateway built
// from gen/github-mini, and fails on any failing check.
func TestEndToEnd(t *testing.T) {
	for _, mode := range []string{GatewayGeneric, GatewayGenerated} {
		t.Run(mode, func(t *testing.T) { runEndToEnd(t, mode) })
	}
}

func runEndToEnd(t *testing.T, mode string) {
	repo, err := findRepo("")
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "e2e")
	build := runCmd(context.Background(), cmdSpec{
		argv:    []string{goBin, "build", "-o", bin, "./examples/github-mini/cmd/e2e"},
		dir:     repo,
		timeout: DefaultBuildTimeout,
	})
	if build.err != nil || build.code != 0 {
		t.Fatal(build.failure("go build ./examples/github-mini/cmd/e2e"))
	}

	ctx := context.Background()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-10*time.Second))
		defer cancel()
	}
	res := runCmd(ctx, cmdSpec{
		argv:    []string{bin, "--gateway", mode, "--timeout", DefaultTimeout.String()},
		env:     baseEnv(),
		dir:     repo,
		timeout: DefaultTimeout + 5*time.Minute, // the builds (warm here) come before the run's clock
	})
	if res.err != nil {
		t.Fatalf("the runner did not finish: %v\n%s", res.err, tail(res.stderr, 2000))
	}
	out := strings.TrimSpace(res.stdout)
	if strings.Count(out, "\n") != 0 {
		t.Fatalf("stdout is not one line:\n%s", out)
	}
	var got Result
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not the result line: %v\n%s", err, out)
	}
	if len(got.Checks) == 0 {
		t.Fatalf("no checks: %s", out)
	}
	for _, c := range got.Checks {
		if !c.OK {
			t.Errorf("check %q failed: %s", c.Name, c.Detail)
		}
	}
	wantCode := 0
	if !got.OK {
		wantCode = 1
	}
	if res.code != wantCode {
		t.Errorf("exit code %d with ok=%v, want %d", res.code, got.OK, wantCode)
	}
	allOK := true
	for _, c := range got.Checks {
		allOK = allOK && c.OK
	}
	if got.OK != allOK {
		t.Errorf("ok is %v but every check holding is %v", got.OK, allOK)
	}
	if bytes.Contains([]byte(res.stdout+res.stderr), []byte(upstreamToken)) {
		t.Error("the runner's output shows the upstream key")
	}
}
