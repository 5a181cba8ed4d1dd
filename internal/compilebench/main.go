// Command compilebench measures how long Anvil's whole compile of a real
// OpenAPI description takes, and how much memory and disk it uses, against
// the cost of building libopenapi's model of the same description (make
// compilebench, docs/scale.md). Building that model (parse, index, resolve,
// the high-level document) is the floor a description's own size sets: a
// compile that stays near it grows with the spec, not faster; issue 18
// asks for every description within 1.5× of it and under its peak memory,
// with a bundle no larger than the spec's own JSON.
//
// For each description of -specs (names of $ANVIL_SPECS_DIR/<name>.json, as
// scripts/fetch-specs.sh caches them, or paths; an absent file is skipped)
// it runs -rounds paired rounds, in each of which, one after the other:
//
//   - `anvil compile <spec> --service <id> --out <tmp>/bundle --root <tmp>`
//     (exit 0, or 1 when the diagnostics hold errors: the bundle is written
//     either way; a run that writes no air.json fails);
//   - with -base, the same compile by the older binary;
//   - this program again (its hidden first argument -libopenapi <spec>),
//     which reads the file, calls libopenapi.NewDocument with the default
//     configuration and BuildV3Model (BuildV2Model for Swagger 2.0), as
//     compiler/openapi's BenchmarkLibopenapiGitHub does, and prints the
//     operation count.
//
// The order of the runs rotates from round to round, so that neither side
// always runs first (on a cold page cache, or after the other's garbage).
// Every run is a process of its own, measured by the kernel when it ends
// (wait4's rusage, no polling): wall time from start to exit, user + system
// CPU, and peak resident set (ru_maxrss). The table reports each side's
// median over the rounds, the medians of the per-round ratios compile ÷
// libopenapi (wall, CPU, peak), and the bundle's bytes and files.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/anvil-dev/anvil/internal/procstat"
	"github.com/anvil-dev/anvil/internal/scalebench/realspec"
)

// config is what the flags choose.
type config struct {
	anvil, base string
	specs       string // comma-separated names or paths (realspec.Resolve)
	specDir     string
	rounds      int
	json        bool
	timeout     time.Duration
}

// defaultSpecs are the five real descriptions issue 18 names.
const defaultSpecs = "github,stripe,jira,kubernetes,msgraph-beta"

// defaultTimeout bounds one run: Microsoft Graph beta's compile takes
// about 20 s on two cores.
const defaultTimeout = 10 * time.Minute

func main() {
	if len(os.Args) == 3 && os.Args[1] == libopenapiFlag {
		os.Exit(buildModel(os.Args[2], os.Stdout, os.Stderr))
	}
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if err := run(cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "compilebench: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("compilebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.anvil, "anvil", "bin/anvil", "the anvil binary measured")
	fs.StringVar(&cfg.base, "base", "", "an older anvil binary measured in the same rounds (before/after)")
	fs.StringVar(&cfg.specs, "specs", defaultSpecs, "descriptions: names of <specdir>/<name>.json or paths (comma-separated)")
	fs.StringVar(&cfg.specDir, "specdir", realspec.Dir(), "where the named descriptions are (scripts/fetch-specs.sh)")
	fs.IntVar(&cfg.rounds, "rounds", 3, "paired rounds per description")
	fs.BoolVar(&cfg.json, "json", false, "print the rows as JSON instead of a table")
	fs.DurationVar(&cfg.timeout, "timeout", defaultTimeout, "how long one run may take before it is killed (and fails)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected arguments %q", fs.Args())
		fmt.Fprintln(stderr, "compilebench:", err)
		return cfg, err
	}
	if cfg.rounds < 1 {
		err := errors.New("-rounds must be at least 1")
		fmt.Fprintln(stderr, "compilebench:", err)
		return cfg, err
	}
	return cfg, nil
}

// usage is what the kernel reports for one process.
type usage struct {
	wall, cpu time.Duration
	peak      int64 // bytes (ru_maxrss is KiB on Linux)
}

// compileRun is one anvil compile.
type compileRun struct {
	usage
	exit        int
	bundle      int64
	bundleFiles int
}

// modelRun is one libopenapi model build.
type modelRun struct {
	usage
	modelReport
}

// side is one binary's compiles of one description, round by round.
type side struct {
	runs []compileRun
	err  error
}

// measured is everything measured for one description.
type measured struct {
	spec      realspec.Spec
	specBytes int64
	sides     []side // one per binary, in the order of run's bins
	models    []modelRun
	modelErr  error
}

func run(cfg config, stdout, stderr io.Writer) error {
	specs, missing := realspec.Resolve(cfg.specDir, cfg.specs)
	for _, m := range missing {
		fmt.Fprintf(stderr, "compilebench: %s not present (scripts/fetch-specs.sh), skipped\n", m)
	}
	if len(specs) == 0 {
		return errors.New("no description to measure")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	bins := []string{cfg.anvil}
	labels := []string{"anvil"}
	if cfg.base != "" {
		bins = []string{cfg.base, cfg.anvil}
		labels = []string{"base", "after"}
	}
	for i, b := range bins {
		if bins[i], err = filepath.Abs(b); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp("", "compilebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	var all []measured
	for _, s := range specs {
		m, err := measure(cfg, s, bins, labels, self, work, stderr)
		if err != nil {
			return err
		}
		all = append(all, m)
	}
	rows := summarize(all, labels)
	if cfg.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
	} else {
		printTable(stdout, rows)
		if cfg.base != "" {
			fmt.Fprintf(stdout, "base: %s\nafter: %s\n", cfg.base, cfg.anvil)
		}
		printNotes(stdout, rows)
	}
	for _, r := range rows {
		if r.Error != "" {
			return errors.New("some measurements failed (see above)")
		}
	}
	return nil
}

// measure runs cfg.rounds rounds for one description.
func measure(cfg config, s realspec.Spec, bins, labels []string, self, work string, stderr io.Writer) (measured, error) {
	m := measured{spec: s, sides: make([]side, len(bins))}
	abs, err := filepath.Abs(s.Path)
	if err != nil {
		return m, err
	}
	// Reading the file once puts it in the page cache before the first run.
	if m.specBytes, err = fileBytes(abs); err != nil {
		return m, err
	}
	// A job that failed once is not run again.
	type job struct {
		name   string
		failed func() bool
		do     func()
	}
	var jobs []job
	for i, bin := range bins {
		jobs = append(jobs, job{labels[i] + " compile", func() bool { return m.sides[i].err != nil }, func() {
			r, err := compileOnce(cfg, bin, abs, s.Service, work)
			if err != nil {
				m.sides[i].err = err
				return
			}
			m.sides[i].runs = append(m.sides[i].runs, r)
		}})
	}
	jobs = append(jobs, job{"libopenapi model", func() bool { return m.modelErr != nil }, func() {
		r, err := modelOnce(cfg, self, abs)
		if err != nil {
			m.modelErr = err
			return
		}
		m.models = append(m.models, r)
	}})
	for round := 0; round < cfg.rounds; round++ {
		for k := range jobs {
			j := jobs[(k+round)%len(jobs)]
			if j.failed() {
				continue
			}
			fmt.Fprintf(stderr, "compilebench: %s round %d/%d: %s\n", s.Name, round+1, cfg.rounds, j.name)
			j.do()
		}
	}
	return m, nil
}

// compileOnce runs one anvil compile into a fresh directory, sizes the
// bundle and removes it.
func compileOnce(cfg config, bin, spec, service, work string) (compileRun, error) {
	var r compileRun
	dir, err := os.MkdirTemp(work, "compile-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "bundle")
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "compile", spec, "--service", service, "--out", out, "--root", dir)
	cmd.Dir = dir
	var output tailBuffer
	cmd.Stdout, cmd.Stderr = &output, &output
	r.usage, r.exit, err = runMeasured(cmd)
	if err != nil {
		return r, fmt.Errorf("%s compile: %w\n%s", bin, err, output.String())
	}
	if r.exit != 0 && r.exit != 1 {
		return r, fmt.Errorf("%s compile exited %d\n%s", bin, r.exit, output.String())
	}
	if _, err := os.Stat(filepath.Join(out, "air.json")); err != nil {
		return r, fmt.Errorf("%s compile (exit %d) wrote no air.json\n%s", bin, r.exit, output.String())
	}
	r.bundle, r.bundleFiles, err = realspec.Size(out)
	return r, err
}

// modelOnce runs this program's libopenapi model build of spec.
func modelOnce(cfg config, self, spec string) (modelRun, error) {
	var r modelRun
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, libopenapiFlag, spec)
	var stdout, stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var exit int
	var err error
	r.usage, exit, err = runMeasured(cmd)
	if err == nil && exit != 0 {
		err = fmt.Errorf("exited %d", exit)
	}
	if err == nil {
		err = json.Unmarshal([]byte(stdout.String()), &r.modelReport)
	}
	if err != nil {
		return r, fmt.Errorf("libopenapi model of %s: %w\n%s", spec, err, stderr.String())
	}
	return r, nil
}

// runMeasured runs cmd to its end and returns the kernel's account of it
// and its exit code; err is for a process that could not start, was killed
// or timed out.
func runMeasured(cmd *exec.Cmd) (usage, int, error) {
	u, code, err := procstat.Run(cmd)
	return usage{wall: u.Wall, cpu: u.CPU, peak: u.Peak}, code, err
}

// fileBytes reads a file through and returns its size.
func fileBytes(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(io.Discard, f)
}

// tailBuffer keeps the last tailBytes of what is written to it.
type tailBuffer struct{ b []byte }

const tailBytes = 2000

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4*tailBytes {
		t.b = append([]byte(nil), t.b[len(t.b)-tailBytes:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	b := t.b
	prefix := ""
	if len(b) > tailBytes {
		b, prefix = b[len(b)-tailBytes:], "…"
	}
	return prefix + strings.TrimSpace(string(b))
}

// row is one description and one binary, as printed.
type row struct {
	Spec        string  `json:"spec"`
	SpecBytes   int64   `json:"spec_bytes"`
	Operations  int     `json:"operations"`
	Binary      string  `json:"binary"`
	Compile     summary `json:"compile"`
	Libopenapi  summary `json:"libopenapi"`
	WallRatio   float64 `json:"wall_ratio"`
	CPURatio    float64 `json:"cpu_ratio"`
	PeakRatio   float64 `json:"peak_ratio"`
	BundleBytes int64   `json:"bundle_bytes"`
	BundleFiles int     `json:"bundle_files"`
	BundleRatio float64 `json:"bundle_ratio"`
	Rounds      int     `json:"rounds"`
	// ExitOne counts the compiles that exited 1 (errors in the diagnostics).
	ExitOne int `json:"compile_exit_1,omitempty"`
	// ModelErrors counts the errors BuildV3Model returned beside its model
	// (circular references, which do not stop it).
	ModelErrors int `json:"libopenapi_errors,omitempty"`
	// BundleVaries is set when the rounds wrote bundles of different sizes.
	BundleVaries bool   `json:"bundle_varies,omitempty"`
	Error        string `json:"error,omitempty"`
}

// summary is one side's medians.
type summary struct {
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	PeakBytes   int64   `json:"peak_bytes"`
}

func summarize(all []measured, labels []string) []row {
	var rows []row
	for _, m := range all {
		lib := median(m.models, func(r modelRun) usage { return r.usage })
		for i, s := range m.sides {
			r := row{Spec: m.spec.Name, SpecBytes: m.specBytes, Binary: labels[i], Rounds: len(s.runs)}
			if len(m.models) > 0 {
				r.Operations = m.models[0].Operations
				r.ModelErrors = m.models[0].Errors
				r.Libopenapi = lib.summary()
			}
			var errs []string
			for _, err := range []error{s.err, m.modelErr} {
				if err != nil {
					errs = append(errs, err.Error())
				}
			}
			r.Error = strings.Join(errs, "\n")
			if len(s.runs) > 0 {
				r.Compile = median(s.runs, func(c compileRun) usage { return c.usage }).summary()
				r.BundleBytes, r.BundleFiles = s.runs[0].bundle, s.runs[0].bundleFiles
				r.BundleRatio = float64(r.BundleBytes) / float64(max(m.specBytes, 1))
				for _, c := range s.runs {
					if c.exit == 1 {
						r.ExitOne++
					}
					if c.bundle != r.BundleBytes || c.bundleFiles != r.BundleFiles {
						r.BundleVaries = true
					}
				}
			}
			// Ratios pair the runs of the same round.
			n := min(len(s.runs), len(m.models))
			if n > 0 {
				var wall, cpu, peak []float64
				for k := 0; k < n; k++ {
					c, l := s.runs[k].usage, m.models[k].usage
					wall = append(wall, c.wall.Seconds()/l.wall.Seconds())
					cpu = append(cpu, c.cpu.Seconds()/l.cpu.Seconds())
					peak = append(peak, float64(c.peak)/float64(l.peak))
				}
				r.WallRatio, r.CPURatio, r.PeakRatio = medianFloat(wall), medianFloat(cpu), medianFloat(peak)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func (u usage) summary() summary {
	return summary{WallSeconds: u.wall.Seconds(), CPUSeconds: u.cpu.Seconds(), PeakBytes: u.peak}
}

// median takes the median of each measure separately.
func median[T any](runs []T, f func(T) usage) usage {
	var wall, cpu, peak []float64
	for _, r := range runs {
		u := f(r)
		wall = append(wall, float64(u.wall))
		cpu = append(cpu, float64(u.cpu))
		peak = append(peak, float64(u.peak))
	}
	return usage{wall: time.Duration(medianFloat(wall)), cpu: time.Duration(medianFloat(cpu)), peak: int64(medianFloat(peak))}
}

// medianFloat is the middle value, or the mean of the two middle values.
func medianFloat(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// columns are the table's headings, in order.
var columns = []string{
	"spec", "spec MB", "ops", "binary",
	"compile s", "CPU s", "peak MB",
	"libopenapi s", "CPU s", "peak MB",
	"wall ÷", "CPU ÷", "peak ÷",
	"bundle MB", "files", "bundle ÷ spec",
}

func printTable(out io.Writer, rows []row) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(columns, "\t")+"\t")
	for _, r := range rows {
		cells := []string{r.Spec, mb(r.SpecBytes), count(r.Operations), r.Binary}
		if r.Rounds > 0 {
			cells = append(cells, secs(r.Compile.WallSeconds), secs(r.Compile.CPUSeconds), mb(r.Compile.PeakBytes))
		} else {
			cells = append(cells, "error", "error", "error")
		}
		if r.Libopenapi.WallSeconds > 0 {
			cells = append(cells, secs(r.Libopenapi.WallSeconds), secs(r.Libopenapi.CPUSeconds), mb(r.Libopenapi.PeakBytes))
		} else {
			cells = append(cells, "error", "error", "error")
		}
		cells = append(cells, ratio(r.WallRatio), ratio(r.CPURatio), ratio(r.PeakRatio))
		if r.Rounds > 0 {
			cells = append(cells, mb(r.BundleBytes), count(r.BundleFiles), ratio(r.BundleRatio))
		} else {
			cells = append(cells, "error", "error", "error")
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	tw.Flush()
}

// printNotes says what the table's cells cannot: failures, compiles that
// exited 1, libopenapi's non-fatal errors, bundles whose size varied.
func printNotes(out io.Writer, rows []row) {
	for _, r := range rows {
		name := r.Spec + " (" + r.Binary + ")"
		if r.ExitOne > 0 {
			fmt.Fprintf(out, "%s: %d of %d compiles exited 1 (errors in the diagnostics; the bundle was written)\n", name, r.ExitOne, r.Rounds)
		}
		if r.BundleVaries {
			fmt.Fprintf(out, "%s: the bundle's size differed between rounds (the first is shown)\n", name)
		}
		if r.Error != "" {
			fmt.Fprintf(out, "%s: %s\n", name, r.Error)
		}
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if r.ModelErrors > 0 && !seen[r.Spec] {
			seen[r.Spec] = true
			fmt.Fprintf(out, "%s: libopenapi built its model and returned %d error(s) beside it (such as circular references)\n", r.Spec, r.ModelErrors)
		}
	}
}

func secs(s float64) string { return strconv.FormatFloat(s, 'f', 2, 64) }

// mb is decimal megabytes, with more digits for small sizes.
func mb(b int64) string {
	v := float64(b) / 1e6
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func ratio(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "×"
}

func count(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}
