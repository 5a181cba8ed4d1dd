// Command anvil is the Anvil toolchain: it compiles OpenAPI descriptions and
// manifests into AIR bundles, packages harnesses, and serves bundles through
// the fleet gateway.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/cmdline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// fail returns an error that makes run print "anvil: <msg>" and exit with
// code: a cmdline.Error, the one exit-error type, which serve mcp fails with
// too. (A function, not a variable, so go vet checks its format strings.)
func fail(code int, format string, args ...any) error {
	return cmdline.Fail(code, format, args...)
}

// silentExit makes run exit with code without printing anything more.
func silentExit(code int) error { return cmdline.Silent(code) }

// env is what a command may read of its process: streams and environment.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// run executes the command line and returns the process exit code. It never
// calls os.Exit, so commands are testable in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	return runEnv(ctx, e, args)
}

func runEnv(ctx context.Context, e *env, args []string) int {
	app := &cli.App{
		Name:            "anvil",
		Usage:           "compile OpenAPI descriptions into AIR bundles, gateways and harness packages",
		Reader:          e.stdin,
		Writer:          e.stdout,
		ErrWriter:       e.stderr,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {},
		Flags:           []cli.Flag{versionFlag},
		Action:          rootAction(e),
		Commands: []*cli.Command{
			withGatewayCompile(e, compileCommand(e)), // compile_gateway.go: --workspace --yard
			approveCommand(e),
			initCommand(e),
			schemaCommand(e),
			diffCommand(e),
			serveCommand(e),
			connectCommand(e),
			packageCommand(e),
			connectorsCommand(e),
			keysCommand(e),    // keys.go
			tokenCommand(e),   // token.go
			policyCommand(e),  // policy.go
			vaultCommand(e),   // vault.go
			auditCommand(e),   // audit.go
			versionCommand(e), // version.go
			toolsCommand(e),   // tools.go
		},
	}
	return cmdline.Code(e.stderr, app.RunContext(ctx, cmdline.Interspersed(app.Commands, args)))
}
