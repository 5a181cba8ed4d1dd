package specsweep

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
)

const workerEnv = "ANVIL_SWEEP_WORKER"

// TestMain turns the test binary into a worker when ANVIL_SWEEP_WORKER is
// set: "1" serves requests; "hang" and "crash" misbehave, for the pool's
// own tests.
func TestMain(m *testing.M) {
	switch os.Getenv(workerEnv) {
	case "":
		os.Exit(m.Run())
	case "hang":
		bufio.NewReader(os.Stdin).ReadString('\n')
		time.Sleep(time.Minute)
		os.Exit(0)
	case "crash":
		bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Fprintln(os.Stderr, "fatal error: stack overflow")
		os.Exit(2)
	default:
		if err := ServeWorker(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// selfWorker starts this test binary as a worker of the given mode.
func selfWorker(mode string) func() *exec.Cmd {
	return func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerEnv+"="+mode, "GOMAXPROCS=1")
		return cmd
	}
}

func TestSweepTestdata(t *testing.T) {
	results, err := Sweep(context.Background(), filepath.Join("testdata", "specs"), Options{Worker: selfWorker("1"), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Result{}
	for _, r := range results {
		got[r.File] = r
	}
	if len(results) != 3 {
		t.Fatalf("swept %d files, want 3 (.txt is not a description): %+v", len(results), results)
	}
	ok := got["ok.yaml"]
	if ok.Outcome != OutcomeOK || ok.Operations != 2 || len(ok.Problems) != 0 || len(ok.Errors) != 0 {
		t.Errorf("ok.yaml: %+v", ok)
	}
	if r := got["nopaths.json"]; r.Outcome != OutcomeFatal || strings.Join(r.Fatal, ",") != "spec/no_paths" {
		t.Errorf("nopaths.json: %+v", r)
	}
	if r := got["broken.yml"]; r.Outcome != OutcomeFatal || strings.Join(r.Fatal, ",") != "spec/invalid_yaml" {
		t.Errorf("broken.yml: %+v", r)
	}
	var buf bytes.Buffer
	WriteText(&buf, results, 5)
	for _, want := range []string{"3 files, 2 operations compiled, 1 clean", "1  spec/no_paths", "2  fatal"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}
	if s := Summarize(results); !s.OK() {
		t.Errorf("summary not OK: %+v", s)
	}
}

func TestSweepKillsHangingAndCrashingWorkers(t *testing.T) {
	// A hanging worker is cut off after a short timeout; a crashing one gets
	// a long one, so that a loaded machine's slow stack overflow still ends
	// as a crash rather than a timeout.
	for _, tc := range []struct {
		mode, want string
		timeout    time.Duration
	}{{"hang", OutcomeTimeout, 300 * time.Millisecond}, {"crash", OutcomeCrash, 2 * time.Minute}} {
		t.Run(tc.mode, func(t *testing.T) {
			results, err := Sweep(context.Background(), filepath.Join("testdata", "specs"),
				Options{Worker: selfWorker(tc.mode), Timeout: tc.timeout, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != 2 {
				t.Fatalf("%d results", len(results))
			}
			for _, r := range results {
				if r.Outcome != tc.want {
					t.Errorf("%s: outcome %s, want %s", r.File, r.Outcome, tc.want)
				}
			}
			if tc.mode == "crash" && !strings.Contains(results[0].Panic, "stack overflow") {
				t.Errorf("crash report lacks the worker's stderr: %q", results[0].Panic)
			}
			if Summarize(results).OK() {
				t.Error("summary OK despite failures")
			}
		})
	}
}

func TestCheckFileFindsCollisions(t *testing.T) {
	// A compiled document checked by checkNames directly: duplicate names
	// and a bad tool name are reported.
	res := CheckFile(filepath.Join("testdata", "specs", "ok.yaml"), CheckOptions{ServiceID: "svc", ConnectorLen: 120})
	if res.Outcome != OutcomeOK {
		t.Fatalf("%+v", res)
	}
	found := false
	for _, p := range res.Problems {
		if p.Check == CheckServedLength {
			found = true
		}
	}
	if !found {
		t.Errorf("a 120-character connector should overflow 128: %+v", res.Problems)
	}
}

// TestSweep sweeps ANVIL_SWEEP_DIR (see the package doc for the knobs).
func TestSweep(t *testing.T) {
	dir := os.Getenv("ANVIL_SWEEP_DIR")
	if dir == "" {
		t.Skip("ANVIL_SWEEP_DIR not set")
	}
	env := func(k, def string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return def
	}
	atoi := func(k string, def int) int {
		n, err := strconv.Atoi(env(k, strconv.Itoa(def)))
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		return n
	}
	timeout, err := time.ParseDuration(env("ANVIL_SWEEP_TIMEOUT", "20s"))
	if err != nil {
		t.Fatal(err)
	}
	out := env("ANVIL_SWEEP_OUT", filepath.Join(os.TempDir(), "specsweep-summary.txt"))
	opts := Options{
		Worker:     selfWorker("1"),
		Workers:    atoi("ANVIL_SWEEP_WORKERS", 1),
		Timeout:    timeout,
		MaxRSSMiB:  int64(atoi("ANVIL_SWEEP_MAX_RSS_MIB", 6144)),
		Limit:      atoi("ANVIL_SWEEP_LIMIT", 0),
		Check:      CheckOptions{ServiceID: os.Getenv("ANVIL_SWEEP_SERVICE")},
		CLI:        os.Getenv("ANVIL_SWEEP_CLI"),
		CLIEvery:   atoi("ANVIL_SWEEP_CLI_EVERY", 10),
		CLIService: env("ANVIL_SWEEP_CLI_SERVICE", "svc"),
		Progress: func(done, total int, r Result) {
			if done%100 == 0 || done == total {
				t.Logf("%d/%d", done, total)
			}
		},
	}
	results, err := Sweep(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteText(&buf, results, 25)
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var jl bytes.Buffer
	if err := WriteJSONLines(&jl, results); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(strings.TrimSuffix(out, filepath.Ext(out))+".jsonl", jl.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Summarize(results)
	t.Logf("summary in %s: %d files, outcomes %v, failed checks %v", out, s.Files, s.Outcomes, s.Problems)
	if os.Getenv("ANVIL_SWEEP_STRICT") == "1" && !s.OK() {
		t.Errorf("the sweep found panics, timeouts, crashes or failed checks; see %s", out)
	}
}

func TestValidateAIRInParts(t *testing.T) {
	c := compileOnce(filepath.Join("testdata", "specs", "ok.yaml"), "svc")
	if c.doc == nil {
		t.Fatal(c.diags)
	}
	// The parts of a valid document validate; a bad tool name is found in its operation.
	if err := validateAIRDoc(c.doc, bytes.Repeat([]byte{' '}, bigAIR+1)); err != nil {
		t.Fatalf("valid document: %v", err)
	}
	c.doc.Operations[1].MCP.ToolName = "bad name"
	err := validateAIRDoc(c.doc, bytes.Repeat([]byte{' '}, bigAIR+1))
	if err == nil || !strings.Contains(err.Error(), "operations[1]") {
		t.Fatalf("want an error in operations[1], got %v", err)
	}
	if validateAIR(c.files[air.DocumentFile]) != nil {
		t.Fatal("whole document")
	}
}

func TestJudgeCLIComparesBundles(t *testing.T) {
	ok := func() Result { return Result{Outcome: OutcomeOK, BundleHash: "aa"} }
	r := ok()
	judgeCLI(&r, &CLIResult{Exit: 0, BundleHash: "aa"}, true)
	if len(r.Problems) != 0 {
		t.Errorf("same bundle: %+v", r.Problems)
	}
	r = ok()
	judgeCLI(&r, &CLIResult{Exit: 0, BundleHash: "bb"}, true)
	if len(r.Problems) != 1 || r.Problems[0].Check != CheckCLI || !strings.Contains(r.Problems[0].Detail, "bundle bb") {
		t.Errorf("different bundle: %+v", r.Problems)
	}
	r = ok()
	judgeCLI(&r, &CLIResult{Exit: 0, BundleHash: "bb"}, false)
	if len(r.Problems) != 0 {
		t.Errorf("different service ids are not compared: %+v", r.Problems)
	}
	r = ok()
	judgeCLI(&r, &CLIResult{Exit: 1}, true)
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Detail, "exit 1") {
		t.Errorf("exit code: %+v", r.Problems)
	}
}
