// Package serve is the one command line of a gateway: anvil serve mcp
// <workspace> --fleet [--http <port>] [--host <host>] (cmd/anvil registers
// Command) and every generated gateway's main (Main runs the same Command in
// an App of its own) parse the flags with urfave/cli, read the environment,
// build the fleet (from the workspace directory, or from the generated
// workspace compiled into the binary) and serve it over HTTP or stdio.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anvil-dev/anvil/runtime/buildinfo"
	"github.com/anvil-dev/anvil/runtime/cmdline"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/handler"
)

// Options are the process Main runs in.
type Options struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Gateway tunes the gateway (tests).
	Gateway *GatewayOptions
	// ReloadPoll is how often the fleet gateway over HTTP looks for changed
	// bundles in its workspace directory (DefaultReloadPoll when zero, never
	// when negative; SIGHUP reloads either way).
	ReloadPoll time.Duration
}

// serveMCP serves ws (nil: the workspace directory named by the one
// positional argument) as the command line f asks.
func serveMCP(ctx context.Context, f mcpArgs, ws *handler.Workspace, o Options) error {
	if len(f.positional) > 1 || (ws == nil && len(f.positional) != 1) {
		return cmdline.Fail(1, "serve mcp takes one workspace directory (usage: anvil serve mcp <workspace> --fleet --http <port>)")
	}
	if (f.httpSet || f.hostSet) && !f.fleet {
		return cmdline.Fail(1, "--http and --host need --fleet")
	}
	// Without --http the workspace is served over stdio, with or without
	// --fleet (one local caller; the flag only matters to HTTP serving).
	cfg, err := ConfigFromEnv(o.Getenv)
	if err != nil {
		return cmdline.Fail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	cfg.Host = f.host
	if cfg.Host == "" { // --host "" is the default, as it always was
		cfg.Host = defaultHost
	}
	if err := cfg.UseDevVaultKey(o.Getenv("HOME")); err != nil {
		return cmdline.Fail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	gopts := GatewayOptions{}
	if o.Gateway != nil {
		gopts = *o.Gateway
	}
	var readyDetails switchHandler // /readyz on the metrics listener
	readyDetails.set(newLoading())
	obs, stopObserve, err := observeFromEnv(o.Getenv, cfg.Auth.Mode, o.Stderr, &readyDetails)
	if err != nil {
		return cmdline.Fail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	defer stopObserve()
	if obs != (Observe{}) {
		gopts.Observe = obs
	}
	if !f.httpSet {
		if cfg.Auth.Enabled() {
			return cmdline.Fail(1, "ANVIL_INBOUND_AUTH_MODE=%s is served only by the fleet gateway over HTTP (--fleet --http <port>)", cfg.Auth.Mode)
		}
		g, err := newGateway(cfg, ws, f.positional, &gopts)
		if err != nil {
			return err
		}
		writeReport(o.Stderr, g)
		if err := g.ServeStdio(ctx, o.Stdin, o.Stdout); err != nil {
			return cmdline.Fail(1, "%v", err)
		}
		return nil
	}
	port, err := strconv.Atoi(f.http)
	if err != nil || port < 1 || port > 65535 {
		return cmdline.Fail(1, "--http takes a port from 1 to 65535, not %q", f.http)
	}
	cfg.Port = port
	logf := func(format string, args ...any) { fmt.Fprintf(o.Stderr, format+"\n", args...) }
	gopts.Logf = logf
	dir := ""
	if ws == nil {
		dir = f.positional[0]
	}
	if err := cfg.Check(); err != nil {
		return cmdline.Fail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	hup, stopHUP := notifyHUP()
	defer stopHUP()
	// The listener opens before the workspace is read: /healthz answers at
	// once, however large the fleet, and every other request waits for the
	// gateway (loadingHold at most, then 503 gateway_loading; loading.go).
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return cmdline.Fail(1, "cannot listen on %s: %v.", addr, err)
	}
	// One server for the life of the process: its handler passes from the
	// loading answers to the gateway's, so no connection changes hands.
	held := newLoading()
	var handler switchHandler
	handler.set(held)
	srv := httpServer(cfg, &handler)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(limitListener(ln, cfg, logf)) }()
	// The stamp is taken before the fleet is read, so a change made while
	// it loads is reloaded.
	stamp := ""
	if dir != "" {
		stamp = workspaceStamp(dir)
	}
	g, err := newGateway(cfg, ws, f.positional, &gopts)
	if err != nil {
		held.serving(nil)
		_ = srv.Close()
		return err
	}
	gw := g.Handler()
	handler.set(gw)
	readyDetails.set(g.ReadyDetails())
	held.serving(gw)
	mode := cfg.Auth.Mode
	if mode == "" {
		mode = "none"
	}
	logf("anvil: serving fleet of %d bundle(s) over StreamableHTTP at %s (%s); inbound auth %s; REST at /call/<tool>; health at /healthz",
		len(g.Fleet().Connectors), g.URL(), strings.Join(g.Fleet().IDs(), ", "), mode)
	writeReport(o.Stderr, g)
	stop := watchReload(ctx, hup, dir, stamp, g, logf, o.ReloadPoll)
	defer stop()
	if err := g.Run(ctx, srv, served); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, http.ErrServerClosed) {
		return cmdline.Fail(1, "%v", err)
	}
	return nil
}

// writeReport writes the gateway's startup report (Gateway.StartupReport)
// as one block.
func writeReport(w io.Writer, g *Gateway) {
	var b strings.Builder
	b.WriteString("anvil: startup report\n")
	for _, l := range g.StartupReport() {
		b.WriteString("anvil:   " + l + "\n")
	}
	_, _ = io.WriteString(w, b.String())
}

// writeVersion prints what the binary was built from: the line `anvil
// version` prints (Anvil version, VCS revision, Go) and, for a generated
// gateway, "bundle <connector> <bundleHash>" for each connector compiled
// into it.
func writeVersion(w io.Writer, ws *handler.Workspace) {
	var b strings.Builder
	b.WriteString(buildinfo.Read().String() + "\n")
	if ws != nil {
		for _, c := range ws.Connectors {
			hash := c.BundleHash
			if hash == "" {
				hash = "none"
			}
			fmt.Fprintf(&b, "bundle %s %s\n", c.ID, hash)
		}
	}
	_, _ = io.WriteString(w, b.String())
}

// newGateway builds the fleet (the generated workspace, else the workspace
// directory) and the gateway serving it.
func newGateway(cfg Config, ws *handler.Workspace, positional []string, o *GatewayOptions) (*Gateway, error) {
	if err := cfg.Check(); err != nil {
		return nil, cmdline.Fail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	var fl *fleet.Fleet
	var err error
	if ws != nil {
		fl, err = fleet.FromWorkspace(ws)
	} else {
		fl, err = fleet.Load(positional[0])
	}
	if err != nil {
		return nil, cmdline.Fail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	g, err := NewGateway(cfg, fl, o)
	if err != nil {
		return nil, cmdline.Fail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	return g, nil
}
