// Package e2e drives github-mini end to end, the way Branchyard drives Anvil:
// every step is a separate process (the real anvil binary, the mock upstream
// command, the packaged Python SDK and CLI, the
// composite), and every observable fact the seed documents is one named
// check.
//
// The steps, in order (seed "Drive it step by step", then the write turn of
// "Effects and undo", then step 10, "Spanning connectors"):
//
//  1. build the anvil binary (or take --anvil) and the mock-upstream
//     command, and start the mock upstream;
//  2. compile openapi.yaml, its server rewritten to the mock, into
//     <work>/workspace/github;
//  3. anvil package harness into <work>/home/connectors/github, and anvil
//     connectors index for a github:read grant;
//  4. anvil keys init (the yard's signing key and JWKS) and anvil vault
//     keygen (a 0600 vault key);
//  5. anvil serve mcp <work>/workspace --fleet --http <port> in branchyard
//     mode (or the generated gateway), ready when /healthz answers 200;
//  6. a turn token (read grant), refused on the connect routes;
//  7. a connect token and anvil connect … --api-key-stdin;
//  8. the packaged Python SDK and CLI as the harness;
//  9. the audit log; then a write turn: REST and MCP calls with
//     idempotency keys, undo, compensation, staging and promotion, their
//     effect reports and audit lines;
//  10. anvil connectors compose, and a flow that fails on purpose and is
//     compensated.
//
// A step that cannot run (a command missing, a component not built yet, an
// earlier check that failed) is a failed check with a detail; nothing
// panics or hangs: every subprocess and HTTP call has a timeout, the whole
// run has one, and every started process is stopped (SIGTERM, then SIGKILL)
// on every exit path.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Gateway modes for [Options.Gateway].
const (
	// GatewayGeneric serves the workspace with anvil serve mcp --fleet.
	GatewayGeneric = "generic"
	// GatewayGenerated serves it with the per-yard gateway built from gen/.
	GatewayGenerated = "generated"
)

// DefaultTimeout bounds a run's steps after the builds when
// [Options.Timeout] is zero (the builds have [DefaultBuildTimeout]).
const DefaultTimeout = 4 * time.Minute

// ErrOptions is returned (wrapped) by [Options.Validate] for unusable options.
var ErrOptions = errors.New("e2e: bad options")

// Options configure [Run]. The zero value runs against the generic gateway
// in a fresh temporary directory that is removed afterwards.
type Options struct {
	// Repo is the Anvil module root (the directory holding go.mod). Empty:
	// found by walking up from the current directory.
	Repo string
	// Work is the work directory. Empty: a new directory under the system
	// temporary directory, named anvil-branchyard-e2e-*.
	Work string
	// Keep keeps the work directory after the run.
	Keep bool
	// Gateway is GatewayGeneric (the default when empty) or GatewayGenerated.
	Gateway string
	// Anvil is the path of a built anvil binary. Empty: build ./cmd/anvil.
	Anvil string
	// Timeout bounds the run after the builds: it starts when they end.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// BuildTimeout bounds the module download and the builds together.
	// Zero means DefaultBuildTimeout.
	BuildTimeout time.Duration
	// Progress, when set, receives one line per check as it completes.
	Progress io.Writer
}

// Validate reports whether the options can be used.
func (o *Options) Validate() error {
	switch o.Gateway {
	case "", GatewayGeneric, GatewayGenerated:
	default:
		return fmt.Errorf("%w: --gateway must be %s or %s, not %q", ErrOptions, GatewayGeneric, GatewayGenerated, o.Gateway)
	}
	if o.Timeout < 0 || o.BuildTimeout < 0 {
		return fmt.Errorf("%w: the timeout must not be negative", ErrOptions)
	}
	return nil
}

// Check is one observable fact and whether it held.
type Check struct {
	// Name is short and stable.
	Name string `json:"name"`
	// OK reports whether the fact held.
	OK bool `json:"ok"`
	// Detail says what was seen instead, or why the check could not run.
	Detail string `json:"detail,omitempty"`
}

// Result is a run's outcome. Its JSON form, one line, is the runner's
// output: {"ok":…,"work":…,"checks":[…]}.
type Result struct {
	// OK is true when there is at least one check and every check holds.
	OK bool `json:"ok"`
	// Work is the work directory (removed afterwards unless kept).
	Work string `json:"work"`
	// Checks are in the order they ran.
	Checks []Check `json:"checks"`
}

// JSONLine returns the result as one line of JSON followed by a newline.
func (r *Result) JSONLine() []byte {
	checks := r.Checks
	if checks == nil {
		checks = []Check{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(Result{OK: r.OK, Work: r.Work, Checks: checks})
	return buf.Bytes()
}

// Failed returns the checks that did not hold.
func (r *Result) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// Run drives the whole flow and returns its checks. It never panics; a
// problem with the options or the work directory is itself a failed check.
func Run(ctx context.Context, opts Options) *Result {
	res := &Result{}
	if err := opts.Validate(); err != nil {
		res.Checks = append(res.Checks, Check{Name: "options are valid", Detail: err.Error()})
		return res
	}
	if opts.Gateway == "" {
		opts.Gateway = GatewayGeneric
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	work, err := prepareWork(opts.Work)
	res.Work = work
	if err != nil {
		res.Checks = append(res.Checks, Check{Name: "work directory is made", Detail: err.Error()})
		return res
	}
	r := newRunner(ctx, opts, work, res) // all() bounds the builds and then the run
	func() {
		defer r.stopAll()
		r.all()
	}()
	if !opts.Keep {
		if err := os.RemoveAll(work); err != nil {
			r.record("work directory is removed", false, err.Error())
		}
	}
	res.OK = len(res.Checks) > 0
	for _, c := range res.Checks {
		res.OK = res.OK && c.OK
	}
	return res
}

// prepareWork makes the work directory (absolute) and returns it.
func prepareWork(dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "anvil-branchyard-e2e-")
		if err != nil {
			return "", fmt.Errorf("cannot make a work directory: %v", err)
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return dir, fmt.Errorf("cannot make the work directory: %v", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, fmt.Errorf("cannot resolve the work directory: %v", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}
