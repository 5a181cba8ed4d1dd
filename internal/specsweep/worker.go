package specsweep

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// request is one line a worker reads.
type request struct {
	File string       `json:"file"`
	Opts CheckOptions `json:"opts"`
}

// ServeWorker is the worker side: it reads one JSON request per line from r
// ({"file": path, "opts": CheckOptions}), runs CheckFile and writes the
// Result as one JSON line to w, until r ends.
func ServeWorker(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	bw := bufio.NewWriter(w)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("specsweep worker: bad request: %w", err)
		}
		res := CheckFile(req.File, req.Opts)
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

// worker is one running worker process.
type worker struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	stderr *tailBuffer
	done   chan struct{}
}

// startWorker starts newCmd() as a worker in its own process group.
func startWorker(newCmd func() *exec.Cmd) (*worker, error) {
	cmd := newCmd()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w := &worker{cmd: cmd, in: in, lines: make(chan []byte, 1), stderr: &tailBuffer{max: 8 << 10}, done: make(chan struct{})}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			b := append([]byte(nil), sc.Bytes()...)
			w.lines <- b
		}
	}()
	go func() {
		cmd.Wait()
		close(w.done)
	}()
	return w, nil
}

// kill ends the worker's process group and waits for it.
func (w *worker) kill() {
	if w.cmd.Process != nil {
		syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-w.done
}

// stop closes the worker's input and waits for it to exit.
func (w *worker) stop() {
	w.in.Close()
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		w.kill()
	}
}

// rssMiB reads the resident set size of a process, in MiB (0 when unknown).
func rssMiB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb / 1024
			}
		}
	}
	return 0
}

var errOOM = errors.New("memory watchdog")

// run sends one file to the worker and waits for its result, the timeout,
// the worker's death or the memory limit. After a timeout, a death or the
// memory limit the worker is gone (ok=false) and a new one must be started.
func (w *worker) run(file string, opts CheckOptions, timeout time.Duration, maxRSSMiB int64) (res Result, alive bool) {
	start := time.Now()
	req, _ := json.Marshal(request{File: file, Opts: opts})
	if _, err := w.in.Write(append(req, '\n')); err != nil {
		w.kill()
		return Result{File: file, Outcome: OutcomeCrash, Panic: "writing to the worker: " + err.Error() + "\n" + w.stderr.String()}, false
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var peak int64
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				<-w.done
				return Result{File: file, Outcome: OutcomeCrash, Millis: time.Since(start).Milliseconds(), PeakRSSMiB: peak,
					Panic: "the worker died: " + exitText(w.cmd) + "\n" + w.stderr.String()}, false
			}
			if err := json.Unmarshal(line, &res); err != nil {
				w.kill()
				return Result{File: file, Outcome: OutcomeCrash, Panic: "bad worker output: " + err.Error()}, false
			}
			res.PeakRSSMiB = peak
			return res, true
		case <-tick.C:
			if r := rssMiB(w.cmd.Process.Pid); r > peak {
				peak = r
			}
			if maxRSSMiB > 0 && peak > maxRSSMiB {
				w.kill()
				return Result{File: file, Outcome: OutcomeCrash, Millis: time.Since(start).Milliseconds(), PeakRSSMiB: peak,
					Panic: fmt.Sprintf("%v: resident memory above %d MiB", errOOM, maxRSSMiB)}, false
			}
		case <-timer.C:
			w.kill()
			return Result{File: file, Outcome: OutcomeTimeout, Millis: time.Since(start).Milliseconds(), PeakRSSMiB: peak}, false
		}
	}
}

func exitText(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return "unknown exit"
	}
	return cmd.ProcessState.String()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
