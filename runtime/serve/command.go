package serve

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/cmdline"
	"github.com/anvil-dev/anvil/runtime/handler"
)

// defaultHost is the address serve mcp binds when --host is not given (or
// given empty): loopback, so a gateway is never exposed by default.
const defaultHost = "127.0.0.1"

// The usage texts are urfave help templates: the serve mcp command's (its
// --help) names the command by its full name ({{.HelpName}}, "anvil serve
// mcp"), the generated gateway's App's (its --help, help, and an unknown
// command line) by the program ({{.Name}}).
const (
	anvilAbout = `Serves every bundle under the workspace as MCP tools (and REST calls)
through the fleet gateway. Over HTTP the workspace is read again on SIGHUP
and when its bundles change on disk. Without --http it serves MCP over
stdin and stdout to one local caller (auth mode none; --fleet optional).
`
	gatewayAbout = `Serves the workspace compiled into this gateway, as anvil serve mcp --fleet
does (same flags and environment). The workspace argument is accepted and
not read; the served tools change only by regenerating and rebuilding the
gateway (SIGHUP is logged and ignored). version (or --version) prints the
module version, VCS revision and the bundle hashes compiled in.
`
	flagsHelp = `
Flags:
{{range .VisibleFlags}}   {{.}}
{{end}}`
)

// usageLines are serve mcp's usage lines, name standing for "<prog> serve
// mcp"; the workspace argument is optional where it is compiled in.
func usageLines(name string, ws *handler.Workspace) string {
	workspace := "<workspace>"
	if ws != nil {
		workspace = "[<workspace>]"
	}
	return fmt.Sprintf("usage: %s %s --fleet --http <port> [--host <host>]\n       %[1]s %[2]s      (MCP over stdin and stdout)\n", name, workspace)
}

func about(ws *handler.Workspace) string {
	if ws == nil {
		return anvilAbout
	}
	return gatewayAbout
}

// commandHelp is serve mcp's --help template.
func commandHelp(ws *handler.Workspace) string {
	return usageLines("{{.HelpName}}", ws) + "\n" + about(ws) + flagsHelp
}

// appHelp is Main's App's help template.
func appHelp(ws *handler.Workspace) string {
	lines := usageLines("{{.Name}} serve mcp", ws)
	if ws != nil {
		lines += "       {{.Name}} version\n"
	}
	return lines + "\n" + about(ws)
}

// usageFail is every urfave command's OnUsageError here: a flag the command
// does not declare, a flag without its value or a boolean that does not
// parse is "anvil: <the flag package's message>", exit 1, with no help
// printed after it.
func usageFail(_ *cli.Context, err error, _ bool) error { return cmdline.Fail(1, "%v", err) }

// Flag names of serve mcp.
const (
	flagFleet = "fleet"
	flagHTTP  = "http"
	flagHost  = "host"
	flagHelp  = "help"
)

// flags declares serve mcp's flags, the one declaration anvil serve mcp and
// every generated gateway parse. They are new on each call: urfave's flags
// record state while a command line is parsed, so two parses (two gateways
// in one test process) must not share them. The help flag is ours, not
// urfave's package-wide cli.HelpFlag, for the same reason; urfave still
// answers it (with the command's CustomHelpTemplate).
func flags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: flagFleet, Usage: "serve through the fleet gateway (needed by --http and --host)"},
		&cli.StringFlag{Name: flagHTTP, Usage: "serve over HTTP on this `port` (1 to 65535); without it, MCP over stdin and stdout"},
		&cli.StringFlag{Name: flagHost, Usage: "the `host` (address) the HTTP listener binds", Value: defaultHost},
		helpFlag(),
	}
}

func helpFlag() cli.Flag {
	return &cli.BoolFlag{Name: flagHelp, Aliases: []string{"h"}, Usage: "print the usage"}
}

// mcpArgs are serve mcp's arguments as the flags parsed them.
type mcpArgs struct {
	fleet            bool
	http, host       string
	httpSet, hostSet bool
	positional       []string
}

// argsFrom reads serve mcp's arguments from a context whose command
// declares flags().
func argsFrom(c *cli.Context) mcpArgs {
	return mcpArgs{
		fleet: c.Bool(flagFleet),
		http:  c.String(flagHTTP), httpSet: c.IsSet(flagHTTP),
		host: c.String(flagHost), hostSet: c.IsSet(flagHost),
		positional: c.Args().Slice(),
	}
}

// Command is serve mcp as a urfave command: cmd/anvil registers it under
// its serve command (ws nil: the positional argument names the workspace
// directory), Main under the generated gateway's (ws compiled in). It fails
// with a cmdline.Error (cmdline.Code prints it and gives the exit code).
// Run it with its arguments passed through cmdline.Interspersed, so flags
// may follow the workspace argument.
func Command(ws *handler.Workspace, o Options) *cli.Command {
	o = o.withDefaults()
	return &cli.Command{
		Name:               "mcp",
		Usage:              "serve a workspace of bundles as MCP tools (and REST calls) through the fleet gateway",
		ArgsUsage:          "<workspace> --fleet [--http <port>] [--host <host>]",
		Flags:              flags(),
		HideHelp:           true,
		CustomHelpTemplate: commandHelp(ws),
		OnUsageError:       usageFail,
		Action:             func(c *cli.Context) error { return serveMCP(c.Context, argsFrom(c), ws, o) },
	}
}

func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	return o
}

// Main runs `<prog> serve mcp <workspace> --fleet --http <port> [--host
// <host>]` (without --http it serves MCP on stdin and stdout), `<prog>
// version` or `<prog> --version`; args[0] is the program name. With ws nil
// it serves the workspace directory named by the one positional argument,
// as anvil serve mcp does; a generated gateway passes the workspace compiled
// into it, and the positional argument is then accepted for the same
// command line and not read. It returns the process exit code; messages go
// to stderr as "anvil: <message>". A command line it does not know prints
// the usage on stderr and exits 1; --help (or help) prints it on stdout.
func Main(ctx context.Context, args []string, ws *handler.Workspace, o Options) int {
	o = o.withDefaults()
	if len(args) == 0 {
		args = []string{"gateway"}
	}
	// usage answers a command line that names nothing Main runs: the usage
	// on stderr, exit 1.
	usage := func(c *cli.Context) error {
		cli.HelpPrinter(o.Stderr, c.App.CustomAppHelpTemplate, c.App)
		return cmdline.Silent(1)
	}
	badUsage := func(c *cli.Context, _ error, _ bool) error { return usage(c) }
	version := func(c *cli.Context) error {
		if c.NArg() > 0 {
			return usage(c)
		}
		writeVersion(o.Stdout, ws)
		return nil
	}
	app := &cli.App{
		Name:                  args[0],
		Usage:                 "the fleet gateway",
		Reader:                o.Stdin,
		Writer:                o.Stdout,
		ErrWriter:             o.Stderr,
		HideHelp:              true, // helpFlag answers with CustomAppHelpTemplate
		CustomAppHelpTemplate: appHelp(ws),
		ExitErrHandler:        func(*cli.Context, error) {}, // Main returns the code; it never exits
		OnUsageError:          badUsage,
		Flags:                 []cli.Flag{&cli.BoolFlag{Name: "version", Usage: "print the version and the bundle hashes compiled in"}, helpFlag()},
		Action: func(c *cli.Context) error {
			switch {
			case c.Bool("version"):
				return version(c)
			case c.NArg() == 1 && c.Args().First() == "help": // as --help
				return cli.ShowAppHelp(c)
			}
			return usage(c)
		},
		Commands: []*cli.Command{
			{Name: "serve", HideHelp: true, OnUsageError: badUsage, Action: usage, Subcommands: []*cli.Command{Command(ws, o)}},
			{Name: "version", HideHelp: true, OnUsageError: badUsage, Action: version},
		},
	}
	err := app.RunContext(ctx, cmdline.Interspersed(app.Commands, args))
	return cmdline.Code(o.Stderr, err)
}
