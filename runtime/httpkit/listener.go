// Package httpkit is what the gateway's HTTP rooms share (the front hall
// and every door): the listener's limits, refusing a request without
// reading its body, JSON answers, media types and loopback addresses. It
// imports nothing of Anvil.
package httpkit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Listener limits (issue 15, finding 2). An unauthenticated client must not
// be able to hold the gateway's sockets: every phase of a connection has a
// deadline, refused requests are not drained, and the number of open
// connections is capped.
const (
	// DefaultHeaderTimeout bounds reading a request's headers
	// (ANVIL_HTTP_HEADER_TIMEOUT_MS).
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds reading a request's body, from the moment
	// the handler starts (ANVIL_HTTP_BODY_TIMEOUT_MS).
	DefaultBodyTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for
	// its next request (ANVIL_HTTP_IDLE_TIMEOUT_MS).
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxConns caps the connections open at once
	// (ANVIL_HTTP_MAX_CONNS); past it new connections wait in the kernel's
	// accept queue until one closes.
	DefaultMaxConns = 512
	// lingerDelay is how long a refused connection stays half-closed so the
	// client can read the answer before the socket closes (as net/http's own
	// closeWriteAndWait does, to avoid a reset that discards the answer).
	lingerDelay = 500 * time.Millisecond
)

// Limits are the listener's limits; zero fields take the defaults.
type Limits struct {
	HeaderTimeout time.Duration
	BodyTimeout   time.Duration
	IdleTimeout   time.Duration
	MaxConns      int
}

// WithDefaults fills the zero fields.
func (l Limits) WithDefaults() Limits {
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = DefaultHeaderTimeout
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	return l
}

// LimitsFromEnv reads ANVIL_HTTP_HEADER_TIMEOUT_MS,
// ANVIL_HTTP_BODY_TIMEOUT_MS, ANVIL_HTTP_IDLE_TIMEOUT_MS (positive
// milliseconds) and ANVIL_HTTP_MAX_CONNS (a positive count).
func LimitsFromEnv(getenv func(string) string) (Limits, error) {
	var l Limits
	for _, v := range []struct {
		name string
		dst  *time.Duration
	}{
		{"ANVIL_HTTP_HEADER_TIMEOUT_MS", &l.HeaderTimeout},
		{"ANVIL_HTTP_BODY_TIMEOUT_MS", &l.BodyTimeout},
		{"ANVIL_HTTP_IDLE_TIMEOUT_MS", &l.IdleTimeout},
	} {
		s := getenv(v.name)
		if s == "" {
			continue
		}
		ms, err := strconv.Atoi(s)
		if err != nil || ms <= 0 {
			return Limits{}, fmt.Errorf("%s must be a positive number of milliseconds", v.name)
		}
		*v.dst = time.Duration(ms) * time.Millisecond
	}
	if s := getenv("ANVIL_HTTP_MAX_CONNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return Limits{}, errors.New("ANVIL_HTTP_MAX_CONNS must be a positive number of connections")
		}
		l.MaxConns = n
	}
	return l, nil
}

// BodyDeadline sets the connection's read deadline for the request body:
// it must arrive within d of the handler starting. Reading it to the end
// lifts the deadline again, so a long upstream call or an event stream that
// follows is not cut off (a read deadline left in place would cancel the
// request's context once it passed).
func BodyDeadline(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return // not a net/http connection (tests with a recorder)
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
}

// deadlineBody lifts the body deadline when the body has been read to EOF.
type deadlineBody struct {
	io.ReadCloser
	once sync.Once
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.lift)
	}
	return n, err
}

// RefuseRequest answers a request refused before its body was read (a
// foreign Host or Origin, a bad token, an unknown route) and closes the
// connection without reading the body. net/http would otherwise read up to
// 256 KiB of an unread body before answering, with no deadline of its own,
// so a client sending a slow body without any token could hold a socket for
// as long as it liked.
func RefuseRequest(w http.ResponseWriter, r *http.Request, write func(http.ResponseWriter)) {
	unread := r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
	if !unread {
		write(w)
		return
	}
	rec := &bufferedAnswer{header: w.Header()}
	write(rec)
	h := w.Header()
	h.Set("Connection", "close")
	h.Set("Content-Length", strconv.Itoa(rec.body.Len()))
	w.WriteHeader(rec.statusOr200())
	_, _ = w.Write(rec.body.Bytes())
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	conn, _, err := rc.Hijack()
	if err != nil {
		return // Connection: close still keeps net/http from waiting for the body before answering
	}
	if tc, ok := conn.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
		_ = conn.SetReadDeadline(time.Now().Add(lingerDelay))
		time.Sleep(lingerDelay)
	}
	_ = conn.Close()
}

// bufferedAnswer holds an answer so that it can be sent with its length.
type bufferedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedAnswer) Header() http.Header { return b.header }

func (b *bufferedAnswer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedAnswer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedAnswer) statusOr200() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}

// Server is the server a gateway's port is served by: l's header and idle
// timeouts around h. There is no ReadTimeout: the body's deadline is set
// per request (BodyDeadline), since a whole-request read deadline would
// also cancel long calls and event streams once it passed.
func Server(l Limits, h http.Handler) *http.Server {
	l = l.WithDefaults()
	return &http.Server{Handler: h, ReadHeaderTimeout: l.HeaderTimeout, IdleTimeout: l.IdleTimeout}
}

// LimitListener holds ln to l's cap on open connections (MaxConns),
// logging through logf when the cap is reached.
func LimitListener(ln net.Listener, l Limits, logf func(string, ...any)) net.Listener {
	return newLimitListener(ln, l.WithDefaults().MaxConns, logf)
}

// limitListener accepts at most max connections at once: Accept waits for
// one of them to close. Reaching the cap is logged, at most once a minute.
type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	logf      func(format string, args ...any)
	mu        sync.Mutex
	lastLog   time.Time
}

func newLimitListener(ln net.Listener, max int, logf func(string, ...any)) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, max), done: make(chan struct{}), logf: logf}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	default:
		l.mu.Lock()
		if now := time.Now(); now.Sub(l.lastLog) >= time.Minute {
			l.lastLog = now
			l.logf("anvil: %d connections are open, the limit (ANVIL_HTTP_MAX_CONNS); new connections wait until one closes", cap(l.sem))
		}
		l.mu.Unlock()
		select {
		case l.sem <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

// Close closes the listener and ends a wait for a free slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn frees its slot on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes a TCP connection (RefuseRequest's linger).
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
