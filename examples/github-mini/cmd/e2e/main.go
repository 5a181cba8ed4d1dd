// Command e2e drives examples/github-mini end to end through the real
// anvil binary, as Branchyard would (see package e2e for the steps).
//
//	go run ./examples/github-mini/cmd/e2e [--keep] [--gateway generic|generated]
//	                                       [--anvil <path>] [--timeout 4m] [--build-timeout 30m]
//
// It prints one JSON line on stdout,
//
//	{"ok":true,"work":"/tmp/anvil-branchyard-e2e-…","checks":[{"name":"index lists github","ok":true},…]}
//
// and a progress line per check on stderr. It exits 0 when every check
// holds, 1 when one does not, and 2 on bad usage. --keep keeps the work
// directory (otherwise it is removed); --anvil uses a built anvil binary
// instead of building ./cmd/anvil. The module download and the builds come
// first, each with progress lines, under --build-timeout; --timeout bounds
// the rest and starts when they end. SIGINT or SIGTERM stops the run, and
// every process it started, early.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/anvil-dev/anvil/examples/github-mini/e2e"
)

const usage = "usage: e2e [--keep] [--gateway generic|generated] [--anvil <path to anvil binary>] [--timeout <duration>] [--build-timeout <duration>]\n"

func main() {
	// A closed stdout or stderr (e2e | head) must not kill the runner
	// before it stops the processes it started: writes fail instead.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, drives the flow and prints the result line. It returns
// the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("e2e", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	keep := fs.Bool("keep", false, "")
	gateway := fs.String("gateway", e2e.GatewayGeneric, "")
	anvil := fs.String("anvil", "", "")
	timeout := fs.Duration("timeout", e2e.DefaultTimeout, "")
	buildTimeout := fs.Duration("build-timeout", e2e.DefaultBuildTimeout, "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "e2e: %v\n%s", err, usage)
		return 2
	}
	opts := e2e.Options{Keep: *keep, Gateway: *gateway, Anvil: *anvil, Timeout: *timeout, BuildTimeout: *buildTimeout, Progress: stderr}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "e2e: unexpected argument %q\n%s", fs.Arg(0), usage)
		return 2
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintf(stderr, "%v\n%s", err, usage)
		return 2
	}
	res := e2e.Run(ctx, opts)
	_, _ = stdout.Write(res.JSONLine())
	if !res.OK {
		return 1
	}
	return 0
}
