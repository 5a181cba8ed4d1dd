package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var exitLine = regexp.MustCompile(`^\[exit (\d+)\]$`)

// TestDocsDiffExamples runs every ```console example of docs/diff.md in a
// directory holding the files of golden/diff/input_type_changed.txtar: each
// "$ anvil ..." line is run, and its stdout and "[exit N]" must equal the
// lines that follow it.
func TestDocsDiffExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/diff.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeCase(t, dir, "input_type_changed", func(m string) string { return m })
	t.Chdir(dir)
	blocks := strings.Split(string(doc), "```console\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("docs/diff.md has no console example")
	}
	for _, block := range blocks {
		block = block[:strings.Index(block, "```")]
		lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
		cmd, ok := strings.CutPrefix(lines[0], "$ anvil ")
		if !ok {
			t.Fatalf("an example does not start with $ anvil: %q", lines[0])
		}
		want := lines[1:]
		m := exitLine.FindStringSubmatch(want[len(want)-1])
		if m == nil {
			t.Fatalf("%s: the example does not end with [exit N]", cmd)
		}
		wantCode, _ := strconv.Atoi(m[1])
		code, stdout, stderr := runCLI(t, "", strings.Fields(cmd)...)
		if code != wantCode {
			t.Errorf("%s: exit %d, documented %d (stderr %s)", cmd, code, wantCode, stderr)
		}
		if got, w := stdout, strings.Join(want[:len(want)-1], "\n")+"\n"; got != w {
			t.Errorf("%s: output differs from the docs:\n--- docs\n%s--- got\n%s", cmd, w, got)
		}
	}
}
