package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/gateway"
)

func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve compiled bundles",
		Subcommands: []*cli.Command{{
			Name:      "mcp",
			Usage:     "serve a workspace of bundles as MCP tools (and REST calls) through the fleet gateway",
			ArgsUsage: "<workspace>",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "fleet", Usage: "serve every bundle under the workspace"},
				&cli.StringFlag{Name: "http", Usage: "serve Streamable HTTP on this port"},
				&cli.StringFlag{Name: "host", Usage: "bind address (default 127.0.0.1)"},
			},
			Action: func(c *cli.Context) error { return runServe(e, c) },
		}},
	}
}

func runServe(e *env, c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(1, "serve mcp takes one workspace directory (usage: anvil serve mcp <workspace> --fleet --http <port>)")
	}
	if (c.IsSet("http") || c.IsSet("host")) && !c.Bool("fleet") {
		return fail(1, "--http and --host need --fleet")
	}
	if !c.Bool("fleet") {
		return fail(1, "only the fleet gateway is served: use anvil serve mcp <workspace> --fleet --http <port>")
	}
	cfg, err := gateway.ConfigFromEnv(e.getenv)
	if err != nil {
		return fail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	cfg.Workspace = c.Args().First()
	cfg.Host = c.String("host")
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if !c.IsSet("http") {
		return serveStdio(e, c, cfg)
	}
	port, err := strconv.Atoi(c.String("http"))
	if err != nil || port < 1 || port > 65535 {
		return fail(1, "--http takes a port from 1 to 65535, not %q", c.String("http"))
	}
	cfg.Port = port
	logf := func(format string, args ...any) { fmt.Fprintf(e.stderr, format+"\n", args...) }
	g, err := gateway.New(cfg, &gateway.Options{Logf: logf})
	if err != nil {
		return fail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(port)))
	if err != nil {
		return fail(1, "cannot listen on %s: %v.", net.JoinHostPort(cfg.Host, strconv.Itoa(port)), err)
	}
	mode := cfg.Auth.Mode
	if mode == "" {
		mode = "none"
	}
	logf("anvil: serving fleet of %d bundle(s) over StreamableHTTP at %s (%s); inbound auth %s; REST at /call/<tool>; health at /healthz",
		len(g.Fleet().Connectors), g.URL(), strings.Join(g.Fleet().IDs(), ", "), mode)
	if err := g.Serve(c.Context, ln); err != nil && !errors.Is(err, net.ErrClosed) {
		return fail(1, "%v", err)
	}
	return nil
}

func serveStdio(e *env, c *cli.Context, cfg gateway.Config) error {
	if cfg.Auth.Mode == "branchyard" {
		return fail(1, "ANVIL_INBOUND_AUTH_MODE=branchyard is served only by the fleet gateway over HTTP (--fleet --http <port>)")
	}
	g, err := gateway.New(cfg, nil)
	if err != nil {
		return fail(1, "%s.", strings.TrimSuffix(err.Error(), "."))
	}
	if err := g.ServeStdio(c.Context, e.stdin, e.stdout); err != nil {
		return fail(1, "%v", err)
	}
	return nil
}
