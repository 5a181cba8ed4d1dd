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

// walkthrough is a doc whose commands a test runs: every ```sh block, in
// order, in one bash from the repository root, with only the named port
// variables set to free ports (and, with dropAnvilEnv, no ANVIL_* variable
// of the test's environment: the doc sets what it needs). Every line of the
// ```text blocks must match a line of the output, in order, "…" matching
// any text.
type walkthrough struct {
	doc          string   // path from cmd/anvil
	tools        []string // commands the blocks need on PATH
	ports        []string // variables given a free loopback port each
	minOutput    int      // the least number of documented output lines
	dropAnvilEnv bool
}

// run runs the walk-through and reports a failing command or a missing
// output line. Everything the blocks start runs in one process group,
// killed when the script ends, however it ends, so that a background
// server left by a failing block neither outlives the test nor holds its
// output open.
func (w walkthrough) run(t *testing.T) {
	t.Helper()
	for _, tool := range append([]string{"bash", "make"}, w.tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s needs %s: %v", w.doc, tool, err)
		}
	}
	doc, err := os.ReadFile(w.doc)
	if err != nil {
		t.Fatal(err)
	}
	script, want := docBlocks(string(doc))
	if !strings.HasPrefix(script, "make build\n") || len(want) < max(w.minOutput, 1) {
		t.Fatalf("%s should start from make build and show output; blocks:\n%s", w.doc, script)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir = repo
	env := os.Environ()
	if w.dropAnvilEnv {
		env = env[:0:0]
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "ANVIL_") {
				env = append(env, kv)
			}
		}
	}
	for _, p := range w.ports {
		env = append(env, fmt.Sprintf("%s=%d", p, freePort(t)))
	}
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Background servers inherit the output pipes: once bash has exited,
	// Wait gives them this long, then closes the pipes.
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	defer func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }()
	err = cmd.Wait()
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if err != nil && !(cmd.ProcessState != nil && cmd.ProcessState.Success()) {
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
