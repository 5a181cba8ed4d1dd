// Package serve is the one command line of a gateway: anvil serve mcp
// <workspace> --fleet [--http <port>] [--host <host>] and every generated
// gateway's main call Main, which parses the flags and the environment,
// builds the fleet (from the workspace directory, or from the generated
// workspace compiled into the binary) and serves it over HTTP or stdio.
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

// Main runs `<prog> serve mcp <workspace> --fleet --http <port> [--host
// <host>]` (without --http it serves MCP on stdin and stdout); args[0] is
// the program name. With ws nil it serves the workspace directory named by
// the one positional argument (anvil serve mcp); a generated gateway passes
// the workspace compiled into it, and the positional argument is then
// accepted for the same command line and not read. It returns the process
// exit code; messages go to stderr as "anvil: <message>".
func Main(ctx context.Context, args []string, ws *handler.Workspace, o Options) int {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if err := runMain(ctx, args, ws, o); err != nil {
		var ee *mainError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintf(o.Stderr, "anvil: %s\n", ee.msg)
			}
			return ee.code
		}
		fmt.Fprintf(o.Stderr, "anvil: %v\n", err)
		return 1
	}
	return 0
}

type mainError struct {
	code int
	msg  string
}

func (e *mainError) Error() string { return e.msg }

func mainFail(code int, format string, args ...any) error {
	return &mainError{code: code, msg: fmt.Sprintf(format, args...)}
}

const mainUsage = `usage: %s serve mcp [<workspace>] --fleet --http <port> [--host <host>]
       %[1]s serve mcp [<workspace>]      (MCP over stdin and stdout)
       %[1]s version

Serves the workspace compiled into this gateway, as anvil serve mcp --fleet
does (same flags and environment). The workspace argument is accepted and
not read; the served tools change only by regenerating and rebuilding the
gateway (SIGHUP is logged and ignored). version (or --version) prints the
module version, VCS revision and the bundle hashes compiled in.
`

const anvilUsage = `usage: %s serve mcp <workspace> --fleet --http <port> [--host <host>]
       %[1]s serve mcp <workspace>      (MCP over stdin and stdout)

Serves every bundle under the workspace as MCP tools (and REST calls)
through the fleet gateway. Over HTTP the workspace is read again on SIGHUP
and when its bundles change on disk. Without --http it serves MCP over
stdin and stdout to one local caller (auth mode none; --fleet optional).
`

// mainFlags are the parsed arguments of serve mcp.
type mainFlags struct {
	fleet            bool
	http, host       string
	httpSet, hostSet bool
	positional       []string
	help             bool
}

func parseMainFlags(args []string) (*mainFlags, error) {
	f := &mainFlags{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			f.positional = append(f.positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			f.positional = append(f.positional, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "h", "help":
			f.help = true
		case "fleet":
			if hasValue {
				b, err := strconv.ParseBool(value)
				if err != nil {
					return nil, mainFail(1, "invalid value %q for flag -fleet", value)
				}
				f.fleet = b
			} else {
				f.fleet = true
			}
		case "http", "host":
			if !hasValue {
				if i+1 >= len(args) {
					return nil, mainFail(1, "flag needs an argument: -%s", name)
				}
				i++
				value = args[i]
			}
			if name == "http" {
				f.http, f.httpSet = value, true
			} else {
				f.host, f.hostSet = value, true
			}
		default:
			return nil, mainFail(1, "flag provided but not defined: -%s", name)
		}
	}
	return f, nil
}

func runMain(ctx context.Context, args []string, ws *handler.Workspace, o Options) error {
	prog := "gateway"
	if len(args) > 0 {
		prog = args[0]
		args = args[1:]
	}
	usage := mainUsage
	if ws == nil {
		usage = anvilUsage
	}
	if len(args) == 1 && (args[0] == "version" || args[0] == "--version" || args[0] == "-version") {
		writeVersion(o.Stdout, ws)
		return nil
	}
	if len(args) < 2 || args[0] != "serve" || args[1] != "mcp" {
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintf(o.Stdout, usage, prog)
			return nil
		}
		fmt.Fprintf(o.Stderr, usage, prog)
		return &mainError{code: 1}
	}
	f, err := parseMainFlags(args[2:])
	if err != nil {
		return err
	}
	if f.help {
		fmt.Fprintf(o.Stdout, usage, prog)
		return nil
	}
	if len(f.positional) > 1 || (ws == nil && len(f.positional) != 1) {
		return mainFail(1, "serve mcp takes one workspace directory (usage: anvil serve mcp <workspace> --fleet --http <port>)")
	}
	if (f.httpSet || f.hostSet) && !f.fleet {
		return mainFail(1, "--http and --host need --fleet")
	}
	// Without --http the workspace is served over stdio, with or without
	// --fleet (one local caller; the flag only matters to HTTP serving).
	cfg, err := ConfigFromEnv(o.Getenv)
	if err != nil {
		return mainFail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	cfg.Host = f.host
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if err := cfg.UseDevVaultKey(o.Getenv("HOME")); err != nil {
		return mainFail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	gopts := GatewayOptions{}
	if o.Gateway != nil {
		gopts = *o.Gateway
	}
	var readyDetails switchHandler // /readyz on the metrics listener
	readyDetails.set(newLoading())
	obs, stopObserve, err := observeFromEnv(o.Getenv, cfg.Auth.Mode, o.Stderr, &readyDetails)
	if err != nil {
		return mainFail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	defer stopObserve()
	if obs != (Observe{}) {
		gopts.Observe = obs
	}
	if !f.httpSet {
		if cfg.Auth.Enabled() {
			return mainFail(1, "ANVIL_INBOUND_AUTH_MODE=%s is served only by the fleet gateway over HTTP (--fleet --http <port>)", cfg.Auth.Mode)
		}
		g, err := newGateway(cfg, ws, f.positional, &gopts)
		if err != nil {
			return err
		}
		writeReport(o.Stderr, g)
		if err := g.ServeStdio(ctx, o.Stdin, o.Stdout); err != nil {
			return mainFail(1, "%v", err)
		}
		return nil
	}
	port, err := strconv.Atoi(f.http)
	if err != nil || port < 1 || port > 65535 {
		return mainFail(1, "--http takes a port from 1 to 65535, not %q", f.http)
	}
	cfg.Port = port
	logf := func(format string, args ...any) { fmt.Fprintf(o.Stderr, format+"\n", args...) }
	gopts.Logf = logf
	dir := ""
	if ws == nil {
		dir = f.positional[0]
	}
	if err := cfg.Check(); err != nil {
		return mainFail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	hup, stopHUP := notifyHUP()
	defer stopHUP()
	// The listener opens before the workspace is read: /healthz answers at
	// once, however large the fleet, and every other request waits for the
	// gateway (loadingHold at most, then 503 gateway_loading; loading.go).
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return mainFail(1, "cannot listen on %s: %v.", addr, err)
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
		return mainFail(1, "%v", err)
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
		return nil, mainFail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	var fl *fleet.Fleet
	var err error
	if ws != nil {
		fl, err = fleet.FromWorkspace(ws)
	} else {
		fl, err = fleet.Load(positional[0])
	}
	if err != nil {
		return nil, mainFail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	g, err := NewGateway(cfg, fl, o)
	if err != nil {
		return nil, mainFail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	return g, nil
}
