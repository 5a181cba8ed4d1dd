package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
)

// runner holds one run's state: what was built and started, and the checks.
type runner struct {
	ctx    context.Context
	opts   Options
	work   string
	res    *Result
	status map[string]bool
	http   *http.Client

	// Set by the steps as they pass.
	repo       string
	goBin      string
	python     string
	anvilBin   string
	mockBin    string
	gatewayBin string // the generated gateway; empty in generic mode
	mock       *proc
	mockURL    string
	gateway    *proc
	port       int
	paths      paths

	turnToken    string
	connectToken string
	writeToken   string

	readAudit  []auditLine // the read turn's lines
	auditCount int         // lines already attributed to a turn

	tools map[string]toolInfo // the write turn's tools/list, by name

	comment      commentState
	issueUndo    *followUp
	mcpClose     error // how the issue session's DELETE went
	stagedRel    *staged
	beforeFlow   map[int64][]int64
	flowCommentN int
}

// commentState is what the REST comment calls saw.
type commentState struct {
	id      int64
	effect  *effectReport
	rawHead string
}

func newRunner(ctx context.Context, opts Options, work string, res *Result) *runner {
	return &runner{
		ctx:    ctx,
		opts:   opts,
		work:   work,
		res:    res,
		status: map[string]bool{},
		http:   newHTTPClient(),
		paths:  newPaths(work),
	}
}

// errNotRun marks a step that could not start; its text is the detail.
var errNotRun = errors.New("not run")

// step runs fn as the check name unless a check it needs did not pass, in
// which case the check fails with a "not run" detail. A panic in fn is a
// failed check, never a crash. It reports whether the check passed.
func (r *runner) step(name string, needs []string, fn func(ctx context.Context) error) bool {
	for _, n := range needs {
		ok, seen := r.status[n]
		if !seen {
			r.record(name, false, fmt.Sprintf("not run: it needs %q, which has not run", n))
			return false
		}
		if !ok {
			r.record(name, false, fmt.Sprintf("not run: %q did not pass", n))
			return false
		}
	}
	if r.ctx.Err() != nil {
		r.record(name, false, "not run: "+stopReason(r.ctx))
		return false
	}
	err := safely(r.ctx, fn)
	if err != nil {
		r.record(name, false, err.Error())
		return false
	}
	r.record(name, true, "")
	return true
}

// safely calls fn and turns a panic into an error.
func safely(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error in the runner: %v\n%s", p, firstLines(string(debug.Stack()), 12))
		}
	}()
	err = fn(ctx)
	if err != nil && ctx.Err() != nil && !strings.Contains(err.Error(), stopReason(ctx)) {
		err = fmt.Errorf("%v (%s)", err, stopReason(ctx))
	}
	return err
}

// stopReason says why ctx ended: the run's time limit, or an interruption.
func stopReason(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the run's time limit was reached"
	}
	return "the run was interrupted"
}

// record appends one check and prints it as progress.
func (r *runner) record(name string, ok bool, detail string) {
	if _, dup := r.status[name]; dup {
		name += " (repeated check name)"
		ok = false
	}
	r.status[name] = ok
	r.res.Checks = append(r.res.Checks, Check{Name: name, OK: ok, Detail: detail})
	if r.opts.Progress != nil {
		progress(r.opts.Progress, Check{Name: name, OK: ok, Detail: detail})
	}
}

// progress prints one check as a human-readable line.
func progress(w io.Writer, c Check) {
	mark := "ok  "
	if !c.OK {
		mark = "FAIL"
	}
	if c.Detail == "" {
		fmt.Fprintf(w, "%s %s\n", mark, c.Name)
		return
	}
	fmt.Fprintf(w, "%s %s: %s\n", mark, c.Name, firstLines(c.Detail, 6))
}

// all runs every step in order: the builds under their own budget, then
// the rest under the run's Timeout, which starts when the builds end.
func (r *runner) all() {
	parent := r.ctx
	bctx, cancel := context.WithTimeout(parent, r.buildTimeout())
	r.ctx = bctx
	r.builds()
	cancel()
	rctx, cancel := context.WithTimeout(parent, r.opts.Timeout)
	defer cancel()
	r.ctx = rctx
	r.setup()
	r.readTurn()
	r.writeTurn()
	r.composite()
	r.shutdown()
}

// stopAll stops every started process; it is safe to call more than once.
func (r *runner) stopAll() {
	for _, p := range []*proc{r.gateway, r.mock} {
		if p != nil {
			p.stop()
		}
	}
}

// firstLines keeps at most n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

// tail keeps the last n bytes of s, on a line boundary where possible.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return "…" + s
}
