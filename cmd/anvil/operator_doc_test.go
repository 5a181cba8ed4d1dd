package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

const operatorDoc = "../../docs/operator.md"

// TestOperatorDoc runs docs/operator.md as written: every ```sh block, in
// order, in one bash from the repository root (make build, the mock
// upstream, keys, the Branchyard-mode gateway, a minted token, connect and
// a first confirmed write, all on loopback), with only PORT and
// UPSTREAM_PORT set to free ports. Every line of the ```text blocks must
// match a line of the output, in order, "…" matching any text.
func TestOperatorDoc(t *testing.T) {
	runDoc(t, operatorDoc, fmt.Sprintf("PORT=%d", freePort(t)), fmt.Sprintf("UPSTREAM_PORT=%d", freePort(t)))
}

// runDoc runs a walk-through page as written: its ```sh blocks, in order,
// in one bash from the repository root with env added (free ports), and
// fails unless every line of its ```text blocks matches a line of the
// output, in order. The page must start from make build and show output.
func runDoc(t *testing.T, page string, env ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds anvil and runs a gateway")
	}
	for _, tool := range []string{"bash", "make", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s needs %s: %v", page, tool, err)
		}
	}
	doc, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	script, want := docBlocks(string(doc))
	if !strings.HasPrefix(script, "make build\n") || len(want) == 0 {
		t.Fatalf("%s should start from make build and show output; blocks:\n%s", page, script)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), env...)
	// Its own process group, so that the servers it starts in the
	// background are stopped whatever happens.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the walk-through failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if missing := matchInOrder(want, strings.Split(stdout.String(), "\n")); missing != "" {
		t.Errorf("the output lacks the documented line %q (in order)\nstdout:\n%s\nstderr:\n%s", missing, stdout.String(), stderr.String())
	}
}

// docBlocks returns the ```sh blocks joined into one script and the lines of
// the ```text blocks.
func docBlocks(doc string) (script string, output []string) {
	for _, m := range regexp.MustCompile("(?s)```(sh|text)\n(.*?)```").FindAllStringSubmatch(doc, -1) {
		if m[1] == "sh" {
			script += m[2]
			continue
		}
		output = append(output, strings.Split(strings.TrimSuffix(m[2], "\n"), "\n")...)
	}
	return script, output
}

// matchInOrder returns the first pattern that matches no line after the
// previous pattern's line, or "" when all match. "…" in a pattern matches
// any run of characters.
func matchInOrder(patterns, lines []string) string {
	i := 0
	for _, p := range patterns {
		parts := strings.Split(p, "…")
		for k := range parts {
			parts[k] = regexp.QuoteMeta(parts[k])
		}
		re := regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
		for i < len(lines) && !re.MatchString(lines[i]) {
			i++
		}
		if i == len(lines) {
			return p
		}
		i++
	}
	return ""
}
