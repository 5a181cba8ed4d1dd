package specsweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Options configures Sweep.
type Options struct {
	// Worker returns the command of a fresh worker process (one that runs
	// ServeWorker on its standard input and output). Required.
	Worker func() *exec.Cmd
	// Workers is the number of worker processes; zero means one.
	Workers int
	// Timeout is the per-file timeout; zero means 20 s.
	Timeout time.Duration
	// MaxRSSMiB kills a worker whose resident memory passes it; zero means 6144.
	MaxRSSMiB int64
	// Limit, when positive, sweeps that many files spread evenly over the
	// sorted list instead of all of them.
	Limit int
	// Check configures the in-process checks.
	Check CheckOptions
	// CLI, when set, is the anvil binary that every CLIEvery-th file is
	// also compiled with (as a subprocess, with CLITimeout, --service
	// CLIService, in a temporary directory).
	CLI        string
	CLIEvery   int
	CLITimeout time.Duration
	CLIService string
	// Progress, when set, is called after each file.
	Progress func(done, total int, r Result)
}

// CLIResult is what running `anvil compile` on a file showed.
type CLIResult struct {
	Exit    int    `json:"exit"` // -1: killed after the timeout
	Millis  int64  `json:"ms"`
	Problem string `json:"problem,omitempty"`
	Stderr  string `json:"stderr,omitempty"` // the first lines, when there is a problem
	// BundleHash is the bundle hash of the bundle the CLI wrote (its
	// generation.json), when it wrote one.
	BundleHash string `json:"bundleHash,omitempty"`
	TimedOut   bool   `json:"timedOut,omitempty"`
}

// Files lists the *.json, *.yaml and *.yml files under dir, sorted.
func Files(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".json", ".yaml", ".yml":
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// spread picks n of files, evenly spaced.
func spread(files []string, n int) []string {
	if n <= 0 || n >= len(files) {
		return files
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, files[i*len(files)/n])
	}
	return out
}

// Sweep checks every description under dir and returns one Result per
// file, in file order.
func Sweep(ctx context.Context, dir string, opts Options) ([]Result, error) {
	if opts.Worker == nil {
		return nil, errors.New("specsweep: Options.Worker is required")
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 20 * time.Second
	}
	if opts.MaxRSSMiB <= 0 {
		opts.MaxRSSMiB = 6144
	}
	if opts.CLITimeout <= 0 {
		opts.CLITimeout = opts.Timeout
	}
	files, err := Files(dir)
	if err != nil {
		return nil, err
	}
	files = spread(files, opts.Limit)
	results := make([]Result, len(files))
	jobs := make(chan int)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	for k := 0; k < opts.Workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w *worker
			defer func() {
				if w != nil {
					w.stop()
				}
			}()
			for i := range jobs {
				if w == nil {
					var err error
					if w, err = startWorker(opts.Worker); err != nil {
						results[i] = Result{File: files[i], Outcome: OutcomeCrash, Panic: "starting a worker: " + err.Error()}
						continue
					}
				}
				r, alive := w.run(files[i], opts.Check, opts.Timeout, opts.MaxRSSMiB)
				if !alive {
					w = nil
				}
				if opts.CLI != "" && opts.CLIEvery > 0 && i%opts.CLIEvery == 0 {
					c := runCLI(ctx, opts.CLI, files[i], opts.CLIService, opts.CLITimeout)
					judgeCLI(&r, c, opts.CLIService == opts.Check.ServiceID)
				}
				if rel, err := filepath.Rel(dir, r.File); err == nil {
					r.File = filepath.ToSlash(rel)
				}
				results[i] = r
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(files), r)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range files {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return results, ctx.Err()
}

// runCLI runs `anvil compile <file> [--service id] --out <tmp>/out` in a
// temporary working directory.
func runCLI(ctx context.Context, bin, file, service string, timeout time.Duration) *CLIResult {
	tmp, err := os.MkdirTemp("", "specsweep-cli-")
	if err != nil {
		return &CLIResult{Exit: -1, Problem: err.Error()}
	}
	defer os.RemoveAll(tmp)
	abs, _ := filepath.Abs(file)
	args := []string{"compile", abs, "--out", filepath.Join(tmp, "out")}
	if service != "" {
		args = append(args, "--service", service)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &bytes.Buffer{}
	start := time.Now()
	err = cmd.Run()
	c := &CLIResult{Millis: time.Since(start).Milliseconds()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		c.Exit, c.TimedOut = -1, true
	case errors.As(err, &ee):
		c.Exit = ee.ExitCode()
	case err != nil:
		c.Exit = -1
		c.Problem = err.Error()
	}
	se := stderr.String()
	switch {
	case c.TimedOut:
		c.Problem = fmt.Sprintf("timed out after %s", timeout)
	case strings.Contains(se, "panic:") || strings.Contains(se, "goroutine ") || strings.Contains(se, "fatal error:"):
		c.Problem = "crashed"
	case c.Exit != 0 && c.Exit != 1:
		c.Problem = fmt.Sprintf("exit %d", c.Exit)
	case c.Exit == 0:
		if _, err := os.Stat(filepath.Join(tmp, "out", "air.json")); err != nil {
			c.Problem = "exit 0 without a bundle"
		}
	}
	if g, err := air.LoadGeneration(filepath.Join(tmp, "out")); err == nil {
		c.BundleHash = g.BundleHash
	}
	if c.Problem != "" {
		c.Stderr = firstLines(se, 20)
	}
	return c
}

// judgeCLI records the CLI run and compares its exit code with the
// in-process result: 1 for a fatal description or error diagnostics, else 0.
// With sameService (both compiled with the same service id) the bundle the
// CLI wrote must also be the in-process one: both call compiler.Compile.
func judgeCLI(r *Result, c *CLIResult, sameService bool) {
	r.CLI = c
	if c.Problem == "" && (r.Outcome == OutcomeOK || r.Outcome == OutcomeFatal) {
		want := 0
		if r.Outcome == OutcomeFatal || len(r.Errors) > 0 {
			want = 1
		}
		switch {
		case c.Exit != want:
			c.Problem = fmt.Sprintf("exit %d, the in-process compile says %d", c.Exit, want)
		case sameService && r.BundleHash != "" && c.BundleHash != r.BundleHash:
			c.Problem = fmt.Sprintf("the CLI wrote bundle %s, the in-process compile %s", c.BundleHash, r.BundleHash)
		}
	}
	if c.Problem != "" {
		r.Problems = append(r.Problems, Problem{Check: CheckCLI, Detail: c.Problem})
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return clip(strings.Join(lines, "\n"))
}
