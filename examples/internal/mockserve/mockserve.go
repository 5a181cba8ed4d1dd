// Package mockserve runs an example's mock upstream the way the docs and
// scripts that start one expect: on a loopback listener, its base URL on
// standard output once it accepts connections, until SIGINT or SIGTERM,
// then a graceful shutdown.
package mockserve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// Run listens on 127.0.0.1:port (0: a free port), prints
// http://<address><basePath> on stdout, serves h until the process is told
// to stop and gives requests in flight grace to finish. A port it cannot
// listen on is reported on stderr with the command's name, exit status 1.
func Run(name string, port int, basePath string, h http.Handler, grace time.Duration) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("http://%s%s\n", ln.Addr(), basePath)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { _ = srv.Serve(ln) }()
	<-ctx.Done()
	shut, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	_ = srv.Shutdown(shut)
}
