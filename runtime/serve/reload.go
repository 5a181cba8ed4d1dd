package serve

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/fleet"
)

// DefaultReloadPoll is how often the fleet gateway looks for changed
// bundles in its workspace directory.
const DefaultReloadPoll = time.Second

// reloader re-reads a workspace directory into the gateway's fleet on
// SIGHUP and when its bundles change on disk. A workspace that fails to
// load (a bad bundle, a tool-name collision, no bundle left) keeps the
// served fleet and logs why.
type reloader struct {
	dir  string
	g    *Gateway
	logf func(format string, args ...any)
	// loaded is the workspace's stamp when the served fleet was read;
	// seen is the stamp of the previous poll (a change is reloaded once
	// two polls agree, so a bundle being written is not read half-way).
	loaded, seen string
}

// workspaceStamp names every bundle directory under dir with the identity,
// size and modification time of its air.json and generation.json: what
// fleet.Load reads, so any change it would see changes the stamp. It costs
// one walk of the workspace (as air.Discover) and two stats per bundle.
func workspaceStamp(dir string) string {
	dirs, err := air.Discover(dir)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, d := range dirs {
		b.WriteString(d)
		for _, name := range []string{air.DocumentFile, air.GenerationFile} {
			fi, err := os.Stat(filepath.Join(d, name))
			if err != nil {
				b.WriteString("|-")
				continue
			}
			fmt.Fprintf(&b, "|%d:%d:%s", fi.Size(), fi.ModTime().UnixNano(), fileID(fi))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// reload reads the workspace and serves it; on failure the served fleet
// stays and the reason is logged. why names what asked for it.
func (r *reloader) reload(why string) {
	stamp := workspaceStamp(r.dir)
	f, err := fleet.Load(r.dir)
	if err == nil {
		err = r.g.Reload(f)
	}
	r.loaded, r.seen = stamp, stamp
	if err != nil {
		r.g.SetReloadFailed(true)
		r.logf("anvil: reload (%s) failed, still serving the fleet loaded before: %v", why, err)
		return
	}
	r.g.SetReloadFailed(false)
	r.logf("anvil: reloaded (%s): %d bundle(s), %d tool(s): %s", why, len(f.Connectors), len(f.Tools), strings.Join(f.IDs(), ", "))
	// What the startup report warns about may have changed with the
	// bundles (a new upstream host, a new OAuth connector).
	for _, l := range r.g.StartupReport() {
		if strings.HasPrefix(l, "warning: ") {
			r.logf("anvil:   %s", l)
		}
	}
}

// poll reloads when the workspace changed since the last load and has
// stayed as it is since the previous poll, and the identity policy (oidc
// mode) likewise.
func (r *reloader) poll() {
	r.g.ReloadPolicy(false, "policy file changed on disk")
	s := workspaceStamp(r.dir)
	if s != r.loaded && s == r.seen {
		r.reload("bundles changed on disk")
		return
	}
	r.seen = s
}

// run serves reloads until ctx is done: on each signal of hup, and every
// interval (none when interval < 0).
func (r *reloader) run(ctx context.Context, hup <-chan os.Signal, interval time.Duration) {
	var tick <-chan time.Time
	if interval >= 0 {
		if interval == 0 {
			interval = DefaultReloadPoll
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			r.g.ReloadPolicy(true, "SIGHUP")
			r.reload("SIGHUP")
		case <-tick:
			r.poll()
		}
	}
}

// watchReload starts reloading the gateway's workspace directory (dir ""
// for a generated gateway, whose workspace is compiled in: SIGHUP is then
// only logged); stamp is the workspace's when the served fleet was read.
// hup is notified of SIGHUP (notifyHUP), from before the workspace was
// read, so that a SIGHUP while it loads is not the process's end but a
// reload once it serves. It returns when the watch is set up; stop ends it.
func watchReload(ctx context.Context, hup chan os.Signal, dir, stamp string, g *Gateway, logf func(string, ...any), interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	if dir == "" {
		go func() {
			defer close(done)
			for {
				select {
				case <-ctx.Done():
					return
				case <-hup:
					g.ReloadPolicy(true, "SIGHUP")
					logf("anvil: SIGHUP ignored: this gateway serves the workspace compiled into it; regenerate and rebuild it to change what it serves (reload is for anvil serve mcp <workspace> --fleet)")
				}
			}
		}()
	} else {
		r := &reloader{dir: dir, g: g, logf: logf}
		r.loaded, r.seen = stamp, stamp
		go func() {
			defer close(done)
			r.run(ctx, hup, interval)
		}()
	}
	return func() {
		cancel()
		<-done
	}
}

// notifyHUP starts catching SIGHUP on a channel; stop stops it.
func notifyHUP() (hup chan os.Signal, stop func()) {
	hup = make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return hup, func() { signal.Stop(hup) }
}
