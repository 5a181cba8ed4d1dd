// Package procstat runs a benchmarked command and returns the kernel's
// account of it (wall time, CPU time, peak RSS), for the benchmark
// commands that measure anvil as a separate process (internal/compilebench,
// internal/diffbench).
package procstat

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Usage is one process's account: wall time, user + system CPU time, and
// peak resident set size in bytes (getrusage's ru_maxrss).
type Usage struct {
	Wall, CPU time.Duration
	Peak      int64
}

// Run runs cmd to its end (killed if this process dies) and returns its
// usage and exit code; err is for a process that could not start or was
// killed by a signal.
func Run(cmd *exec.Cmd) (Usage, int, error) {
	var u Usage
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	err := cmd.Run()
	u.Wall = time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return u, -1, err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return u, -1, errors.New("no rusage for the process")
	}
	u.CPU = time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
	u.Peak = ru.Maxrss * 1024
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return u, -1, fmt.Errorf("killed by %v", ws.Signal())
	}
	return u, cmd.ProcessState.ExitCode(), nil
}
