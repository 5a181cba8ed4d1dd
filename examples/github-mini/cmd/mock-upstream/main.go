// Command mock-upstream serves github-mini's mock GitHub API (see package
// mockupstream) until SIGINT or SIGTERM.
//
//	mock-upstream [--host 127.0.0.1] [--port 0] [--token <t>]
//
// Once listening it prints one line, {"url":"http://<host>:<port>"}, on
// standard output. With --token only "Authorization: Bearer <t>" is
// accepted. Bad usage prints the usage to standard error and exits 2; a
// listen failure exits 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
)

const usage = "usage: mock-upstream [--host 127.0.0.1] [--port 0] [--token <token>]\n"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, starts the mock, prints its URL line and serves until ctx
// is done. It returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mock-upstream", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	host := fs.String("host", "127.0.0.1", "")
	port := fs.String("port", "0", "")
	token := fs.String("token", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "mock-upstream: %v\n%s", err, usage)
		return 2
	}
	p, err := strconv.Atoi(*port)
	if fs.NArg() != 0 || err != nil || p < 0 || p > 65535 || *host == "" {
		fmt.Fprint(stderr, usage)
		return 2
	}
	srv, err := mockupstream.Start(mockupstream.Options{
		Addr:  net.JoinHostPort(*host, strconv.Itoa(p)),
		Token: *token,
	})
	if err != nil {
		fmt.Fprintf(stderr, "mock-upstream: %v\n", err)
		return 1
	}
	line, _ := json.Marshal(struct {
		URL string `json:"url"`
	}{srv.URL})
	fmt.Fprintf(stdout, "%s\n", line)
	<-ctx.Done()
	_ = srv.Close()
	return 0
}
