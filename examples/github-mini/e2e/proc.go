package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Grace periods for stopping processes.
const (
	termGrace = 5 * time.Second // SIGTERM, then SIGKILL after this
	killGrace = 2 * time.Second // after SIGKILL, give up waiting after this
	outputCap = 4 << 20         // bytes kept of a command's stdout or stderr
)

// cmdSpec is one short-lived command.
type cmdSpec struct {
	argv    []string
	env     []string // the whole environment; nil means baseEnv()
	dir     string
	stdin   string
	timeout time.Duration
	// stderrLine, when set, is also given each line the command writes to
	// stderr, as it is written (progress of a long command).
	stderrLine func(string)
}

// cmdResult is what a short-lived command did.
type cmdResult struct {
	stdout, stderr string
	code           int   // the exit code; -1 when it did not exit normally
	err            error // it could not start, or it timed out
}

// failure describes a command that did not exit 0, for a check's detail.
func (c cmdResult) failure(what string) error {
	if c.err != nil {
		return fmt.Errorf("%s: %v%s", what, c.err, stderrNote(c.stderr))
	}
	return fmt.Errorf("%s exited %d%s", what, c.code, stderrNote(c.stderr+"\n"+c.stdout))
}

func stderrNote(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return ": " + tail(s, 600)
}

// runCmd runs one command to completion under a timeout. The command runs
// in its own process group, killed whole when the time runs out.
func runCmd(ctx context.Context, spec cmdSpec) cmdResult {
	if len(spec.argv) == 0 {
		return cmdResult{code: -1, err: errors.New("no command")}
	}
	timeout := spec.timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, spec.argv[0], spec.argv[1:]...)
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	if cmd.Env == nil {
		cmd.Env = baseEnv()
	}
	if spec.stdin != "" {
		cmd.Stdin = strings.NewReader(spec.stdin)
	}
	var stdout, stderr cappedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if spec.stderrLine != nil {
		cmd.Stderr = &lineTee{w: &stderr, line: spec.stderrLine}
	}
	setGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = killGrace
	err := cmd.Run()
	res := cmdResult{stdout: stdout.String(), stderr: stderr.String(), code: -1}
	if cmd.ProcessState != nil {
		res.code = cmd.ProcessState.ExitCode()
	}
	var exitErr *exec.ExitError
	switch {
	case cctx.Err() != nil && ctx.Err() == nil:
		res.err = fmt.Errorf("timed out after %s", timeout)
	case ctx.Err() != nil:
		res.err = errors.New("stopped: " + stopReason(ctx))
	case err != nil && !errors.As(err, &exitErr):
		res.err = err
	}
	return res
}

// lineTee writes to w and hands each complete line to line.
type lineTee struct {
	w    *cappedBuffer
	line func(string)
	part []byte
}

func (t *lineTee) Write(p []byte) (int, error) {
	_, _ = t.w.Write(p)
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		t.line(string(t.part[:i]))
		t.part = t.part[i+1:]
	}
	if len(t.part) > 64<<10 { // a line that never ends is not progress
		t.part = t.part[:0]
	}
	return len(p), nil
}

// cappedBuffer keeps the first outputCap bytes written to it.
type cappedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := outputCap - len(b.buf); room > 0 {
		if len(p) > room {
			b.buf = append(b.buf, p[:room]...)
		} else {
			b.buf = append(b.buf, p...)
		}
	}
	return len(p), nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// proc is a long-running process (the mock upstream, the gateway).
type proc struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}

	once     sync.Once
	code     int  // exit code after stop; -1 when killed by a signal
	graceful bool // it exited within termGrace of SIGTERM (or before)

	// after starts stop's grace timers; nil is time.After. A test sets it
	// to fire the timers itself, so it checks the order of events (SIGTERM,
	// the grace, SIGKILL) rather than how long they took.
	after func(time.Duration) <-chan time.Time
}

// startProc starts argv in its own process group with stdout and stderr
// appended to logPath. When firstLine is true, the first line the process
// writes to stdout is delivered on the returned channel (which is closed
// if stdout ends first).
func startProc(name string, argv, env []string, dir, logPath string, firstLine bool) (*proc, <-chan string, error) {
	if len(argv) == 0 {
		return nil, nil, errors.New("no command")
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open the log: %v", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stderr = logFile
	setGroup(cmd)

	var lines chan string
	var pr, pw *os.File
	if firstLine {
		pr, pw, err = os.Pipe()
		if err != nil {
			logFile.Close()
			return nil, nil, err
		}
		cmd.Stdout = pw
		lines = make(chan string, 1)
	} else {
		cmd.Stdout = logFile
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		if pr != nil {
			pr.Close()
			pw.Close()
		}
		return nil, nil, err
	}
	p := &proc{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{}), code: -1}
	if firstLine {
		pw.Close()
		go func() {
			defer pr.Close()
			sc := bufio.NewScanner(pr)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			first := true
			for sc.Scan() {
				line := sc.Text()
				fmt.Fprintln(logFile, line)
				if first {
					lines <- line
					close(lines)
					first = false
				}
			}
			if first {
				close(lines)
			}
		}()
	}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, lines, nil
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitCode is the exit code of an ended process (-1 when signalled).
func (p *proc) exitCode() int {
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// stop sends SIGTERM to the process group, then SIGKILL after termGrace.
// It is safe to call more than once; later calls return the first result.
func (p *proc) stop() (code int, graceful bool) {
	p.once.Do(func() {
		after := p.after
		if after == nil {
			after = time.After
		}
		if p.exited() {
			p.graceful = true
		} else {
			_ = termGroup(p.cmd)
			select {
			case <-p.done:
				p.graceful = true
			case <-after(termGrace):
				_ = killGroup(p.cmd)
				select {
				case <-p.done:
				case <-after(killGrace):
				}
			}
		}
		_ = killGroup(p.cmd) // any stray child left in the group
		p.code = p.exitCode()
	})
	return p.code, p.graceful
}

// logTail returns the end of the process's log.
func (p *proc) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	return tail(string(b), 800)
}

// baseEnv is this process's environment without any ANVIL_* variable,
// upstream credential variable or PYTHONPATH, so a step sets exactly what
// the seed sets.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "ANVIL_"), k == "GITHUB_TOKEN", k == "GH_TOKEN", k == "PYTHONPATH":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// withEnv returns env with the given KEY=value pairs set (replacing any
// earlier value of the same key).
func withEnv(env []string, kvs ...string) []string {
	set := map[string]bool{}
	for _, kv := range kvs {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	out := make([]string, 0, len(env)+len(kvs))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !set[k] {
			out = append(out, kv)
		}
	}
	return append(out, kvs...)
}
