package serve

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// The fleet gateway over HTTP opens its listener before it reads the
// workspace, so that /healthz answers at once however large the fleet is
// (docs/scale.md). Until the gateway is built the listener is served by
// loadingHandler; then the same listener goes to the gateway.

// loadingHold is how long a request other than /healthz and /readyz that
// arrives while the fleet loads waits for the gateway before it is refused
// with gateway_loading: a client that calls as soon as /healthz answers
// (the ready signal documented before the listener opened first) is served
// as before whenever the load takes less.
const loadingHold = 5 * time.Second

// loading answers while the fleet loads: /healthz 200 (the process is up;
// "loading":true), /readyz 503 "ready":false, and every other request is
// held until the gateway serves (then the gateway answers it) or for
// loadingHold, after which it is refused 503 gateway_loading, retryable,
// with Retry-After. Refusals read nothing of the request and close their
// connection, so no client keeps a connection to the loading server once
// the gateway serves.
type loading struct {
	ready chan struct{} // closed when gw is set, or when the load failed
	gw    http.Handler  // the gateway's handler; nil when the load failed
	hold  time.Duration
}

func newLoading() *loading { return &loading{ready: make(chan struct{}), hold: loadingHold} }

// serving hands the held requests to gw (nil: refuse them).
func (l *loading) serving(gw http.Handler) {
	l.gw = gw
	close(l.ready)
}

func (l *loading) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		writeLoading(w, http.StatusOK, wirejson.Object("status", "ok", "fleet", true, "bundles", 0, "loading", true))
		return
	case "/readyz":
		writeLoading(w, http.StatusServiceUnavailable, wirejson.Object("ready", false, "loading", true,
			"reason", "the gateway is loading its workspace", "bundles", []any{}))
		return
	}
	t := time.NewTimer(l.hold)
	defer t.Stop()
	select {
	case <-l.ready:
		if l.gw != nil {
			// The loading server is stopping: the connection ends with
			// this answer, and the client's next one reaches the gateway.
			w.Header().Set("Connection", "close")
			l.gw.ServeHTTP(w, r)
			return
		}
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Retry-After", "1")
	e := &envelope.Error{Code: envelope.GatewayLoading, Retryable: true, SafeToRetry: true,
		Message: "The gateway is still loading its workspace; nothing was called. Retry shortly (GET /readyz says when it is ready)."}
	writeLoading(w, envelope.RESTStatus(e.Code), e.Marshal())
}

// writeLoading writes a loading answer, which closes its connection.
func writeLoading(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// handoff hands the connections one listener accepts to one server at a
// time: phase returns a listener for the next server, which takes every
// connection accepted from then on until it is closed. Closing the last
// phase (the one whose server runs until the process ends) closes the
// listener itself.
type handoff struct {
	ln    net.Listener
	conns chan net.Conn
	errc  chan error
	once  sync.Once
}

func newHandoff(ln net.Listener) *handoff {
	h := &handoff{ln: ln, conns: make(chan net.Conn), errc: make(chan error, 1)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				h.errc <- err
				return
			}
			h.conns <- c
		}
	}()
	return h
}

// phase is a listener over the handoff; last says closing it closes the
// underlying listener.
func (h *handoff) phase(last bool) net.Listener {
	return &phaseListener{h: h, closed: make(chan struct{}), last: last}
}

type phaseListener struct {
	h      *handoff
	closed chan struct{}
	once   sync.Once
	last   bool
}

func (p *phaseListener) Accept() (net.Conn, error) {
	select {
	case <-p.closed:
		return nil, net.ErrClosed
	default:
	}
	select {
	case c := <-p.h.conns:
		return c, nil
	case err := <-p.h.errc:
		p.h.errc <- err // every later Accept sees it too
		return nil, err
	case <-p.closed:
		return nil, net.ErrClosed
	}
}

func (p *phaseListener) Close() error {
	p.once.Do(func() { close(p.closed) })
	if p.last {
		var err error
		p.h.once.Do(func() { err = p.h.ln.Close() })
		return err
	}
	return nil
}

func (p *phaseListener) Addr() net.Addr { return p.h.ln.Addr() }

// serveLoading serves l on a phase of h until the returned stop is called
// (after l.serving), which stops taking connections, lets the requests in
// flight finish (held ones are answered by the gateway) and returns.
func serveLoading(h *handoff, l *loading) (stop func()) {
	ln := h.phase(false)
	srv := &http.Server{Handler: l, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
		<-done
	}
}
