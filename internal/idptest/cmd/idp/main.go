// Command idp runs the test OpenID provider of internal/idptest as a
// process, for walkthroughs and manual tries:
//
//	go run ./internal/idptest/cmd/idp -config idp.yaml
//
// and, for a walkthrough run by a script, plays the person's browser:
//
//	idp browse -user ada -password PW <authorization URL>
//
// opens the authorization URL, logs in on the provider's login page
// (idptest.Browser), follows the redirect back to the client (a GET of its
// redirect URI with the code and state, as a browser would) and prints the
// client's answer; it exits 1 when the login or the client refuses.
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
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/anvil-dev/anvil/internal/idptest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run serves until ctx ends and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "browse" {
		return browse(ctx, args[1:], stdout, stderr)
	}
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

// browse logs in at an authorization URL as a browser would and returns the
// exit status: 0 when the client answered the redirect with 2xx.
func browse(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("idp browse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.String("user", "", "the username to log in as (required)")
	password := fs.String("password", "", "its password (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *user == "" || *password == "" || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: idp browse -user NAME -password PW <authorization URL>")
		return 2
	}
	auth, err := url.Parse(fs.Arg(0))
	if err != nil || auth.Host == "" {
		fmt.Fprintln(stderr, "idp browse: not an authorization URL")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	b := &idptest.Browser{Issuer: auth.Scheme + "://" + auth.Host}
	r, err := b.Login(ctx, auth.String(), *user, *password)
	if err != nil {
		fmt.Fprintln(stderr, "idp browse:", err)
		return 1
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL.String(), nil)
	if err != nil {
		fmt.Fprintln(stderr, "idp browse:", err)
		return 1
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "idp browse: the client's redirect URI did not answer:", err)
		return 1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(stdout, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		fmt.Fprintf(stderr, "idp browse: the client answered %d\n", resp.StatusCode)
		return 1
	}
	return 0
}
