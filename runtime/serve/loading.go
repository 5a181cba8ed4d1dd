package serve

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// The fleet gateway over HTTP opens its listener before it reads the
// workspace, so that /healthz answers at once however large the fleet is
// (docs/scale.md). Its one server's handler (switchHandler) is loading
// until the gateway is built, and the gateway's handler from then on.

// switchHandler serves with the handler last set.
type switchHandler struct{ h atomic.Pointer[http.Handler] }

func (s *switchHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *switchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

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
// with Retry-After. A refusal reads nothing of the request, so it closes
// its connection.
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
			l.gw.ServeHTTP(w, r)
			return
		}
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Connection", "close")
	e := &envelope.Error{Code: envelope.GatewayLoading, Retryable: true, SafeToRetry: true,
		Message: "The gateway is still loading its workspace; nothing was called. Retry shortly (GET /readyz says when it is ready)."}
	writeLoading(w, envelope.RESTStatus(e.Code), e.Marshal())
}

// writeLoading writes a loading answer.
func writeLoading(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
