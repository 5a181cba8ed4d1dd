package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets the test binary be the libopenapi side of a round, as the
// command re-executes itself (os.Executable is the test binary here), and
// removes the anvil binary the tests built.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == libopenapiFlag {
		os.Exit(buildModel(os.Args[2], os.Stdout, os.Stderr))
	}
	code := m.Run()
	if anvilBin != "" {
		os.RemoveAll(filepath.Dir(anvilBin))
	}
	os.Exit(code)
}

// TestRunSmall runs docs/scale.md's small command (make compilebench with
// COMPILEBENCH_SPECS and COMPILEBENCH_ROUNDS, read from the document), then
// the same with -base set (here to the same binary), and checks the tables:
// the columns, one row per binary, cells that parse.
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds anvil and compiles")
	}
	args := docCommand(t)
	bin := buildAnvil(t)
	for _, base := range []string{"", bin} {
		args := append([]string{"-anvil", bin}, args...)
		labels := []string{"anvil"}
		if base != "" {
			args = append(args, "-base", base)
			labels = []string{"base", "after"}
		}
		cfg, err := parseFlags(args, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := run(cfg, &out, os.Stderr); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		t.Logf("%q:\n%s", args, out.String())
		checkTable(t, out.String(), cfg.specs, labels)
	}
}

// docCommand reads the command docs/scale.md shows for one round of the
// bundled example and returns the flags its variables stand for (the
// Makefile's compilebench recipe), with paths made relative to this
// package's directory.
func docCommand(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "scale.md"))
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "make compilebench COMPILEBENCH_SPECS="
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		var args []string
		for _, f := range strings.Fields(strings.TrimPrefix(line, "make compilebench")) {
			name, value, _ := strings.Cut(f, "=")
			switch name {
			case "COMPILEBENCH_SPECS":
				args = append(args, "-specs", filepath.Join(repoRoot, value))
			case "COMPILEBENCH_ROUNDS":
				args = append(args, "-rounds", value)
			default:
				t.Fatalf("docs/scale.md: %q sets %s, which this test does not map", line, name)
			}
		}
		return args
	}
	t.Fatalf("docs/scale.md shows no %q line", prefix)
	return nil
}

// checkTable checks a printed table: the heading, a row per label for
// spec, and the binaries named under it when there are two.
func checkTable(t *testing.T, out, spec string, labels []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	cell := regexp.MustCompile(`\s{2,}`)
	split := func(l string) []string { return cell.Split(strings.TrimSpace(l), -1) }
	if got := split(lines[0]); strings.Join(got, "|") != strings.Join(columns, "|") {
		t.Fatalf("heading %q, want %q", got, columns)
	}
	want := 1 + len(labels)
	if len(labels) > 1 {
		want += 2 // base: …, after: …
	}
	if len(lines) != want {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), want, out)
	}
	for i, label := range labels {
		cells := split(lines[1+i])
		if len(cells) != len(columns) {
			t.Fatalf("row %q has %d cells, want %d", lines[1+i], len(cells), len(columns))
		}
		get := func(col string) string {
			return cells[slices.Index(columns, col)]
		}
		if cells[0] != spec || cells[3] != label || get("ops") != "12" {
			t.Errorf("row %d: %q", i, cells)
		}
		for j, c := range cells[4:] {
			v, err := strconv.ParseFloat(strings.TrimSuffix(c, "×"), 64)
			if err != nil || v < 0 {
				t.Errorf("column %q: %q does not parse", columns[4+j], c)
			}
		}
		for _, col := range []string{"wall ÷", "CPU ÷", "peak ÷", "bundle ÷ spec"} {
			if c := get(col); !strings.HasSuffix(c, "×") || c == "0.00×" {
				t.Errorf("ratio %q: %q", col, c)
			}
		}
		if n, err := strconv.Atoi(get("files")); err != nil || n < 1 {
			t.Errorf("files: %q", get("files"))
		}
	}
}

// TestJSON checks -json: one object per binary, with the measures set.
func TestJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds anvil and compiles")
	}
	bin := buildAnvil(t)
	spec := filepath.Join(repoRoot, "examples", "github-mini", "openapi.yaml")
	var out bytes.Buffer
	if err := run(config{anvil: bin, specs: spec, rounds: 2, json: true, timeout: defaultTimeout}, &out, os.Stderr); err != nil {
		t.Fatal(err)
	}
	var rows []row
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.Binary != "anvil" || r.Rounds != 2 || r.Operations != 12 || r.SpecBytes < 1000 ||
		r.Compile.WallSeconds <= 0 || r.Compile.CPUSeconds <= 0 || r.Compile.PeakBytes <= 0 ||
		r.Libopenapi.WallSeconds <= 0 || r.Libopenapi.PeakBytes <= 0 ||
		r.WallRatio <= 0 || r.PeakRatio <= 0 || r.BundleBytes <= 0 || r.BundleFiles < 2 || r.Error != "" {
		t.Errorf("row %+v", r)
	}
}

// TestFailedCompile: a binary that exits 1 without writing a bundle fails
// its row with the output's tail, and the run reports failure; a missing
// description is skipped, and nothing to measure is an error.
func TestFailedCompile(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "anvil")
	script := "#!/bin/sh\necho 'E001 the description is broken' >&2\nexit 1\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(repoRoot, "examples", "github-mini", "openapi.yaml")
	var out, stderr bytes.Buffer
	err := run(config{anvil: bin, specs: spec + ",absent", specDir: dir, rounds: 2, timeout: defaultTimeout}, &out, &stderr)
	if err == nil {
		t.Fatalf("no error\n%s", out.String())
	}
	if !strings.Contains(out.String(), "wrote no air.json") || !strings.Contains(out.String(), "E001 the description is broken") {
		t.Errorf("the failure is not reported:\n%s", out.String())
	}
	if !strings.Contains(stderr.String(), filepath.Join(dir, "absent.json")+" not present") {
		t.Errorf("the absent description is not named:\n%s", stderr.String())
	}
	if strings.Count(stderr.String(), "anvil compile") != 1 {
		t.Errorf("a failed binary ran again in the next round:\n%s", stderr.String())
	}
	if err := run(config{anvil: bin, specs: "absent", specDir: dir, rounds: 1, timeout: defaultTimeout}, &out, &stderr); err == nil {
		t.Error("nothing to measure: no error")
	}
}

// TestBuildModelFails: the libopenapi side fails on a file that is no
// description, with a message.
func TestBuildModelFails(t *testing.T) {
	f := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(f, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := buildModel(f, &stdout, &stderr); code != 1 || !strings.HasPrefix(stderr.String(), "libopenapi: ") || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestMedianFloat(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := medianFloat(c.in); got != c.want {
			t.Errorf("medianFloat(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../.."

var anvilBin string

// buildAnvil builds cmd/anvil once for the tests of this package (TestMain
// removes it).
func buildAnvil(t *testing.T) string {
	t.Helper()
	if anvilBin != "" {
		return anvilBin
	}
	dir, err := os.MkdirTemp("", "compilebench-test-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "anvil")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/anvil")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	anvilBin = bin
	return bin
}
