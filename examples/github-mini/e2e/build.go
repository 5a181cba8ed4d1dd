package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The builds come first and have a budget of their own: on a cold machine
// the module download (about 260 MB) and the first build take minutes, and
// the run's Timeout (the calls, which take seconds) starts when they end.
const (
	chkModules = "go modules are downloaded"

	// DefaultBuildTimeout bounds the module download and the builds
	// together when [Options.BuildTimeout] is zero: far longer than a cold
	// build on a small machine, so it stops only a build that is stuck.
	DefaultBuildTimeout = 30 * time.Minute
	// progressEvery is how often a running build step says it still runs.
	progressEvery = 15 * time.Second
)

// builds is the first phase: the toolchain, the modules, then each binary.
func (r *runner) builds() {
	r.step(chkToolchain, nil, r.findToolchain)
	r.step(chkModules, []string{chkToolchain}, r.downloadModules)
	r.step(chkAnvil, []string{chkModules}, r.buildAnvil)
	r.step(chkExamples, []string{chkModules}, r.buildExamples)
	if r.opts.Gateway == GatewayGenerated {
		r.step(chkGenerated, []string{chkModules}, r.buildGeneratedGateway)
	}
}

// builtPackages are the packages the run builds: what the module download
// fetches the modules of.
func (r *runner) builtPackages() []string {
	pkgs := []string{"./examples/github-mini/cmd/mock-upstream"}
	if r.opts.Anvil == "" {
		pkgs = append(pkgs, "./cmd/anvil")
	}
	if r.opts.Gateway == GatewayGenerated {
		if st, err := os.Stat(filepath.Join(r.repo, "gen")); err == nil && st.IsDir() {
			pkgs = append(pkgs, "./gen/...")
		}
	}
	return pkgs
}

// downloadModules fetches the modules of the packages the run builds (go
// list -deps loads them, downloading what the module cache lacks), saying
// how many it has fetched as it goes. With a warm cache it downloads
// nothing and takes a second.
func (r *runner) downloadModules(ctx context.Context) error {
	var n atomic.Int64
	stop := r.heartbeat("downloading Go modules", func() string {
		return fmt.Sprintf("%d module(s) fetched so far", n.Load())
	})
	res := runCmd(ctx, cmdSpec{
		argv:    append([]string{r.goBin, "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}}{{end}}"}, r.builtPackages()...),
		dir:     r.repo,
		timeout: r.buildTimeout(),
		stderrLine: func(l string) {
			if strings.HasPrefix(l, "go: downloading ") {
				n.Add(1)
			}
		},
	})
	stop(fmt.Sprintf("%d module(s) fetched", n.Load()))
	if res.err != nil || res.code != 0 {
		return res.failure("go list -deps (module download)")
	}
	return nil
}

// buildTimeout is the budget of one build command: the phase's (the
// phase's context ends them all at its deadline anyway).
func (r *runner) buildTimeout() time.Duration {
	if r.opts.BuildTimeout > 0 {
		return r.opts.BuildTimeout
	}
	return DefaultBuildTimeout
}

// heartbeat prints "…   <what>: <status()>, <elapsed>" every progressEvery
// until the returned function is called, which prints the final line
// (when the step took longer than one beat, or said anything).
func (r *runner) heartbeat(what string, status func() string) func(final string) {
	w := r.opts.Progress
	if w == nil {
		return func(string) {}
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				line := "…    " + what + ": "
				if status != nil {
					line += status() + ", "
				}
				fmt.Fprintf(w, "%s%s so far\n", line, now.Sub(start).Round(time.Second))
			}
		}
	}()
	return func(final string) {
		close(done)
		wg.Wait()
		if d := time.Since(start); d >= progressEvery || (final != "" && !strings.HasPrefix(final, "0 ")) {
			if final != "" {
				final += ", "
			}
			fmt.Fprintf(w, "…    %s: %sdone in %s\n", what, final, d.Round(time.Second))
		}
	}
}
