// Command diffbench measures `anvil diff` against an independent
// breaking-change detector, oasdiff (its ERR level), on pairs of real
// published descriptions: recall by operation (what oasdiff calls breaking
// that anvil diff calls breaking or could not compare), the operations
// anvil diff adds, and each tool's wall time, CPU time and peak RSS, side
// by side in the same rounds. It also measures anvil diff's peak RSS
// against the larger input on single large descriptions (GitHub, Stripe,
// Microsoft Graph beta), compared with themselves where no second version
// is published. `make diffbench` runs it (docs/diff.md, "Measured").
//
// oasdiff is built from the Go module proxy into .cache/oasdiff-bin (go
// install github.com/oasdiff/oasdiff@<version>, outside this module: it is
// never a dependency of Anvil) unless -oasdiff names a binary.
package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anvil-dev/anvil/internal/procstat"
)

// oasdiffModule is the oasdiff release the benchmark builds.
const oasdiffModule = "github.com/oasdiff/oasdiff@v1.39.0"

// pair is a real old → new pair in the specs directory.
type pair struct {
	name, old, new string
	auth           string // how callers authenticate, for the table
}

// pairs are the recall pairs; scripts/fetch-specs.sh diffbench fetches
// every file (pinned package versions).
var pairs = []pair{
	{"github", "github-old.json", "github.json", "bearer token"},
	{"figma", "figma-old.yaml", "figma.yaml", "API key or OAuth 2"},
	{"slack", "slack-old.json", "slack.json", "OAuth 2"},
	{"spotify", "spotify-old.json", "spotify.json", "OAuth 2"},
}

type config struct {
	anvil, oasdiff, specs string
	pairs, memory         []string
	rounds                int
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		os.Exit(2)
	}
	if err := run(cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "diffbench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("diffbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	var p, m string
	fs.StringVar(&cfg.anvil, "anvil", "bin/anvil", "the anvil binary")
	fs.StringVar(&cfg.oasdiff, "oasdiff", "", "the oasdiff binary (default: built from the module proxy into .cache/oasdiff-bin)")
	fs.StringVar(&cfg.specs, "specs", os.Getenv("ANVIL_SPECS_DIR"), "the specs directory (scripts/fetch-specs.sh diffbench)")
	fs.StringVar(&p, "pairs", "github,figma,slack,spotify", "recall pairs")
	fs.StringVar(&m, "memory", "github,stripe,msgraph-beta", "descriptions whose diff memory is measured (NAME.json; NAME-old.json as the old side when present, else NAME.json itself)")
	fs.IntVar(&cfg.rounds, "rounds", 3, "rounds per measurement (medians are shown)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.pairs, cfg.memory = split(p), split(m)
	if cfg.rounds < 1 || cfg.specs == "" {
		return cfg, errors.New("-rounds must be at least 1 and -specs (or ANVIL_SPECS_DIR) set")
	}
	return cfg, nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func run(cfg config, stdout, stderr io.Writer) error {
	if cfg.oasdiff == "" && len(cfg.pairs) > 0 {
		bin, err := buildOasdiff(stderr)
		if err != nil {
			return err
		}
		cfg.oasdiff = bin
	}
	base, _, err := measure(exec.Command(cfg.anvil, "version"))
	if err != nil {
		return fmt.Errorf("%s version: %w", cfg.anvil, err)
	}
	fmt.Fprintf(stdout, "anvil diff against oasdiff (%s, ERR level), %d round(s), medians; the anvil binary alone (`anvil version`) peaks at %s MB.\n\n", oasdiffModule, cfg.rounds, mb(base.peak))
	var results []recallResult
	for _, name := range cfg.pairs {
		i := slices.IndexFunc(pairs, func(p pair) bool { return p.name == name })
		if i < 0 {
			return fmt.Errorf("no pair %q", name)
		}
		r, err := recallOf(cfg, pairs[i], stderr)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if len(results) > 0 {
		printRecall(stdout, results)
	}
	if len(cfg.memory) > 0 {
		rows, err := memoryRows(cfg, stderr)
		if err != nil {
			return err
		}
		printMemory(stdout, rows, base.peak)
	}
	return nil
}

// buildOasdiff installs oasdiff into .cache/oasdiff-bin from a temporary
// directory, so this module's go.mod is not consulted or changed.
func buildOasdiff(stderr io.Writer) (string, error) {
	dir, err := filepath.Abs(filepath.Join(".cache", "oasdiff-bin"))
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "oasdiff")
	if out, err := exec.Command(bin, "--version").Output(); err == nil && strings.Contains(string(out), strings.TrimPrefix(oasdiffModule[strings.LastIndex(oasdiffModule, "@")+1:], "v")) {
		return bin, nil
	}
	tmp, err := os.MkdirTemp("", "oasdiff-build")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(stderr, "diffbench: building %s into %s\n", oasdiffModule, dir)
	cmd := exec.Command("go", "install", oasdiffModule)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod", "GO111MODULE=on")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building oasdiff: %w", err)
	}
	return bin, nil
}

// usage is the kernel's account of one process.
type usage struct {
	wall, cpu time.Duration
	peak      int64 // bytes
}

// measure runs cmd to its end and returns its usage and stdout; a non-zero
// exit is not an error (both tools exit 1 on breaking changes when asked).
func measure(cmd *exec.Cmd) (usage, []byte, error) {
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	p, code, err := procstat.Run(cmd)
	u := usage{wall: p.Wall, cpu: p.CPU, peak: p.Peak}
	if err != nil {
		return u, nil, err
	}
	if code > 1 {
		return u, nil, fmt.Errorf("%s exited %d: %s", cmd.Path, code, tail(errb.String()))
	}
	return u, []byte(out.String()), nil
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// medianUsage is the per-field median of runs.
func medianUsage(runs []usage) usage {
	pick := func(f func(usage) int64) int64 {
		v := make([]int64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return usage{
		wall: time.Duration(pick(func(u usage) int64 { return int64(u.wall) })),
		cpu:  time.Duration(pick(func(u usage) int64 { return int64(u.cpu) })),
		peak: pick(func(u usage) int64 { return u.peak }),
	}
}

type recallResult struct {
	pair                  pair
	sizes                 [2]int64
	oas                   int // oasdiff ERR operations
	excluded              map[string]int
	found                 int
	missed                []string
	extra                 int
	anvilUse, oasdiffUse  usage
	anvilRuns, oasdiffRun []usage
}

func recallOf(cfg config, p pair, stderr io.Writer) (recallResult, error) {
	r := recallResult{pair: p, excluded: map[string]int{}}
	oldPath, newPath := filepath.Join(cfg.specs, p.old), filepath.Join(cfg.specs, p.new)
	for i, f := range []string{oldPath, newPath} {
		st, err := os.Stat(f)
		if err != nil {
			return r, fmt.Errorf("%s: %w (run scripts/fetch-specs.sh diffbench)", p.name, err)
		}
		r.sizes[i] = st.Size()
	}
	var anvilOut, oasOut []byte
	for round := 0; round < cfg.rounds; round++ {
		fmt.Fprintf(stderr, "diffbench: %s round %d\n", p.name, round+1)
		// Interleaved, so load on the machine falls on both alike.
		u, out, err := measure(exec.Command(cfg.anvil, "diff", oldPath, newPath, "--format", "json", "--fail-on", "none"))
		if err != nil {
			return r, err
		}
		r.anvilRuns, anvilOut = append(r.anvilRuns, u), out
		u, out, err = measure(exec.Command(cfg.oasdiff, "breaking", oldPath, newPath, "--format", "json", "--allow-external-refs=false"))
		if err != nil {
			return r, err
		}
		r.oasdiffRun, oasOut = append(r.oasdiffRun, u), out
	}
	r.anvilUse, r.oasdiffUse = medianUsage(r.anvilRuns), medianUsage(r.oasdiffRun)
	a, err := anvilBreaking(anvilOut)
	if err != nil {
		return r, fmt.Errorf("%s: anvil diff: %w", p.name, err)
	}
	o, err := oasdiffErrors(oasOut)
	if err != nil {
		return r, fmt.Errorf("%s: oasdiff: %w", p.name, err)
	}
	score(&r, a, o)
	return r, nil
}

// route is an operation as both tools name it: method and path with the
// parameter names forgotten.
type route struct{ method, path string }

var param = regexp.MustCompile(`\{[^}]*\}`)

func routeOf(method, path string) route {
	return route{strings.ToUpper(method), param.ReplaceAllString(path, "{}")}
}

// anvilReport is what diffbench reads of `anvil diff --format json`.
type anvilReport struct {
	Changes []struct {
		OperationID string `json:"operation_id"`
		Method      string `json:"method"`
		Path        string `json:"path"`
		Kind        string `json:"kind"`
		Breaking    bool   `json:"breaking"`
		Detail      string `json:"detail"`
	} `json:"changes"`
}

// anvilFindings are the routes anvil diff calls breaking (or could not
// compare) and the routes it pairs without a breaking change.
type anvilFindings struct {
	breaking map[route][]string
	moved    map[route]bool // an old route anvil pairs with a new one
}

var movedFrom = regexp.MustCompile(`^moved from (\S+) (\S+) to `)

func anvilBreaking(out []byte) (anvilFindings, error) {
	var rep anvilReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return anvilFindings{}, err
	}
	f := anvilFindings{breaking: map[route][]string{}, moved: map[route]bool{}}
	// An operation moved to another path is known to anvil by its new
	// route; oasdiff names its old one.
	aliases := map[string][]route{}
	for _, c := range rep.Changes {
		if m := movedFrom.FindStringSubmatch(c.Detail); m != nil && c.Kind == "operation_renamed" {
			old := routeOf(m[1], m[2])
			aliases[c.OperationID] = append(aliases[c.OperationID], old)
			f.moved[old] = true
		}
	}
	for _, c := range rep.Changes {
		if c.Method == "" || !(c.Breaking || c.Kind == "comparison_incomplete") {
			continue
		}
		for _, r := range append([]route{routeOf(c.Method, c.Path)}, aliases[c.OperationID]...) {
			f.breaking[r] = append(f.breaking[r], c.Kind+": "+c.Detail)
		}
	}
	return f, nil
}

// oasdiffFinding is one entry of `oasdiff breaking --format json`.
type oasdiffFinding struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Level     int    `json:"level"`
	Operation string `json:"operation"`
	Path      string `json:"path"`
}

// errLevel is oasdiff's ERR.
const errLevel = 3

func oasdiffErrors(out []byte) (map[route][]oasdiffFinding, error) {
	var all []oasdiffFinding
	if len(strings.TrimSpace(string(out))) > 0 {
		if err := json.Unmarshal(out, &all); err != nil {
			return nil, err
		}
	}
	m := map[route][]oasdiffFinding{}
	for _, f := range all {
		if f.Level == errLevel && f.Operation != "" {
			r := routeOf(f.Operation, f.Path)
			m[r] = append(m[r], f)
		}
	}
	return m, nil
}

// decision names the documented decision of docs/diff.md ("Decisions
// against oasdiff") that an oasdiff ERR finding anvil diff does not share
// falls under, or "" for none.
func decision(f oasdiffFinding, a anvilFindings, r route) string {
	switch {
	case (strings.HasPrefix(f.ID, "request-parameter-type-changed") || strings.HasPrefix(f.ID, "request-property-type-changed")) &&
		(strings.Contains(f.Text, "from `none` to `int64`") || strings.Contains(f.Text, "from `none` to `double`")):
		return "width format added to an input"
	case (f.ID == "api-path-removed-without-deprecation" || f.ID == "api-removed-without-deprecation") && a.moved[r]:
		return "operation moved, same tool"
	case strings.HasSuffix(f.ID, "-any-of-added") || strings.HasSuffix(f.ID, "-one-of-added"):
		// anvil diff pairs alternatives by position and reports a change
		// in their number; this finding is an inline alternative that
		// changed in place, which anvil compares with its counterpart.
		return "alternative changed in place"
	}
	return ""
}

// score fills found, missed, excluded and extra: an operation oasdiff
// calls breaking is excluded when each of its findings is a documented
// decision, found when anvil diff reports it breaking (or not compared),
// missed otherwise.
func score(r *recallResult, a anvilFindings, o map[route][]oasdiffFinding) {
	routes := make([]route, 0, len(o))
	for k := range o {
		routes = append(routes, k)
	}
	sort.Slice(routes, func(i, j int) bool {
		return cmp.Or(cmp.Compare(routes[i].path, routes[j].path), cmp.Compare(routes[i].method, routes[j].method)) < 0
	})
	r.oas = len(routes)
	for _, k := range routes {
		if _, ok := a.breaking[k]; ok {
			r.found++
			continue
		}
		why := ""
		for _, f := range o[k] {
			d := decision(f, a, k)
			if d == "" {
				why = ""
				break
			}
			why = d
		}
		if why != "" {
			r.excluded[why]++
			continue
		}
		r.missed = append(r.missed, fmt.Sprintf("%s %s: %s: %s", k.method, o[k][0].Path, o[k][0].ID, o[k][0].Text))
	}
	for k := range a.breaking {
		if _, ok := o[k]; !ok {
			r.extra++
		}
	}
}

func printRecall(out io.Writer, rs []recallResult) {
	fmt.Fprintln(out, "| pair | auth | old → new MB | oasdiff ERR ops | excluded (documented) | found | missed | recall | extra | anvil s, CPU s, peak MB | oasdiff s, CPU s, peak MB | time ÷ | peak ÷ |")
	fmt.Fprintln(out, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |")
	var tf, tm, tx int
	for _, r := range rs {
		ex := 0
		for _, n := range r.excluded {
			ex += n
		}
		tf, tm, tx = tf+r.found, tm+len(r.missed), tx+ex
		fmt.Fprintf(out, "| %s | %s | %s → %s | %d | %d | %d | %d | %s | %d | %s, %s, %s | %s, %s, %s | %s | %s |\n",
			r.pair.name, r.pair.auth, mb(r.sizes[0]), mb(r.sizes[1]), r.oas, ex, r.found, len(r.missed), pct(r.found, r.found+len(r.missed)), r.extra,
			secs(r.anvilUse.wall), secs(r.anvilUse.cpu), mb(r.anvilUse.peak), secs(r.oasdiffUse.wall), secs(r.oasdiffUse.cpu), mb(r.oasdiffUse.peak),
			ratio(float64(r.anvilUse.wall), float64(r.oasdiffUse.wall)), ratio(float64(r.anvilUse.peak), float64(r.oasdiffUse.peak)))
	}
	fmt.Fprintf(out, "\nall pairs: found %d of %d (%s; %d excluded as documented decisions)\n", tf, tf+tm, pct(tf, tf+tm), tx)
	for _, r := range rs {
		keys := make([]string, 0, len(r.excluded))
		for k := range r.excluded {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(out, "- %s: excluded %d: %s\n", r.pair.name, r.excluded[k], k)
		}
		for _, m := range r.missed {
			fmt.Fprintf(out, "- %s: MISSED %s\n", r.pair.name, m)
		}
	}
	fmt.Fprintln(out)
}

type memoryRow struct {
	name         string
	old, new     int64
	use          usage
	changes      int
	sameAsItself bool
}

func memoryRows(cfg config, stderr io.Writer) ([]memoryRow, error) {
	var rows []memoryRow
	for _, name := range cfg.memory {
		row, ok, err := memoryRowOf(cfg, name, stderr)
		if err != nil {
			return nil, err
		}
		if ok {
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// memoryRowOf measures one description's diff; ok is false when it is not
// fetched.
func memoryRowOf(cfg config, name string, stderr io.Writer) (memoryRow, bool, error) {
	newPath := filepath.Join(cfg.specs, name+".json")
	oldPath := filepath.Join(cfg.specs, name+"-old.json")
	row := memoryRow{name: name}
	if _, err := os.Stat(oldPath); err != nil {
		oldPath, row.sameAsItself = newPath, true
	}
	for i, f := range []string{oldPath, newPath} {
		st, err := os.Stat(f)
		if err != nil {
			fmt.Fprintf(stderr, "diffbench: %s is not fetched, skipped\n", f)
			return row, false, nil
		}
		if i == 0 {
			row.old = st.Size()
		} else {
			row.new = st.Size()
		}
	}
	var runs []usage
	for round := 0; round < cfg.rounds; round++ {
		fmt.Fprintf(stderr, "diffbench: memory %s round %d\n", name, round+1)
		u, out, err := measure(exec.Command(cfg.anvil, "diff", oldPath, newPath, "--format", "json", "--fail-on", "none"))
		if err != nil {
			return row, false, err
		}
		runs = append(runs, u)
		var rep anvilReport
		if err := json.Unmarshal(out, &rep); err != nil {
			return row, false, err
		}
		row.changes = len(rep.Changes)
	}
	row.use = medianUsage(runs)
	return row, true, nil
}

func printMemory(out io.Writer, rows []memoryRow, base int64) {
	fmt.Fprintln(out, "| description | old → new MB | changes | anvil diff s, CPU s | peak MB | peak ÷ larger | (peak − binary) ÷ larger |")
	fmt.Fprintln(out, "| --- | --- | ---: | --- | ---: | ---: | ---: |")
	for _, r := range rows {
		larger := float64(max(r.old, r.new))
		note := ""
		if r.sameAsItself {
			note = " (itself)"
		}
		fmt.Fprintf(out, "| %s%s | %s → %s | %d | %s, %s | %s | %s | %s |\n", r.name, note, mb(r.old), mb(r.new), r.changes,
			secs(r.use.wall), secs(r.use.cpu), mb(r.use.peak), ratio(float64(r.use.peak), larger), ratio(float64(r.use.peak-base), larger))
	}
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) }

func mb(b int64) string { return strconv.FormatFloat(float64(b)/1e6, 'f', 1, 64) }

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 1, 64) + "%"
}
