// Command idp runs the test OpenID provider of internal/idptest as a
// process, for walkthroughs and manual tries:
//
//	go run ./internal/idptest/cmd/idp -config idp.yaml
//
// The config is idptest.Options as YAML or JSON (see LoadOptions). The
// first line on standard output is the issuer URL, alone, once the
// provider accepts connections; a summary of its clients and users (no
// secrets or passwords) goes to standard error. It stops on SIGINT or
// SIGTERM. Exit status 2 is a usage or config error.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/anvil-dev/anvil/internal/idptest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run serves until ctx ends and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("idp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "provider config, YAML or JSON (required)")
	addr := fs.String("addr", "", "loopback address to listen on, overriding the config's addr (default 127.0.0.1:0)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *config == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: idp -config FILE [-addr HOST:PORT]")
		return 2
	}
	opts, err := idptest.LoadOptions(*config)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *addr != "" {
		opts.Addr = *addr
	}
	p, err := idptest.New(opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	fmt.Fprintln(stdout, p.Issuer())
	for _, c := range opts.Clients {
		kind := "public"
		if c.Secret != "" {
			kind = "confidential"
		}
		fmt.Fprintf(stderr, "idp: client %s (%s)\n", c.ID, kind)
	}
	for _, u := range opts.Users {
		fmt.Fprintf(stderr, "idp: user %s (sub %s)\n", cmp.Or(u.Username, u.Subject), u.Subject)
	}
	<-ctx.Done()
	if err := p.Close(); err != nil {
		fmt.Fprintln(stderr, "idp: stop:", err)
		return 1
	}
	return 0
}
