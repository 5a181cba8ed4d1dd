// Package faultproxy injects network faults on loopback for the fault
// suite and make soak: a TCP proxy (between a gateway and PostgreSQL, or
// its upstream) whose behaviour is switched while it runs, and an HTTP
// layer that answers bursts of 5xx in front of an upstream.
//
// It is small on purpose: the faults the suite needs are latency, resets,
// connections that stop answering (half-open) and refusal, which net gives
// directly; a fault library (Shopify/toxiproxy) would bring its own HTTP
// API, logger and metrics for the same few behaviours, and no HTTP-level
// faults.
package faultproxy

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what the proxy does to connections.
type Fault int

// Faults.
const (
	// Pass forwards bytes both ways.
	Pass Fault = iota
	// Latency delays every chunk each way by the proxy's Delay.
	Latency
	// Blackhole accepts and reads but forwards nothing and never answers:
	// a peer that stopped answering, a half-open connection. Existing
	// connections stop forwarding too.
	Blackhole
	// Refuse resets every new connection at once, and existing ones.
	Refuse
)

// Proxy is a TCP proxy on loopback to one target.
type Proxy struct {
	ln     net.Listener
	target string
	fault  atomic.Int32
	delay  atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	done  chan struct{}
	wg    sync.WaitGroup
}

// Listen starts a proxy to target on a free loopback port.
func Listen(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Set switches the fault; Latency uses delay. Switching to Refuse or
// Blackhole also acts on open connections (reset, or stalled).
func (p *Proxy) Set(f Fault, delay time.Duration) {
	p.delay.Store(int64(delay))
	p.fault.Store(int32(f))
	if f == Refuse {
		p.ResetAll()
	}
}

// ResetAll resets every open connection (both sides see a reset).
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		reset(c)
	}
}

// Open is how many connections the proxy holds open.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() error {
	close(p.done)
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close sends RST
	}
	c.Close()
}

func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	if on {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if Fault(p.fault.Load()) == Refuse {
			reset(c)
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) serve(c net.Conn) {
	defer p.wg.Done()
	up, err := net.DialTimeout("tcp", p.target, 3*time.Second)
	if err != nil {
		reset(c)
		return
	}
	p.track(c, true)
	p.track(up, true)
	defer func() {
		p.track(c, false)
		p.track(up, false)
		c.Close()
		up.Close()
	}()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(up, c) }()
	go func() { defer wg.Done(); p.pipe(c, up) }()
	wg.Wait()
}

// pipe copies src to dst chunk by chunk, applying the fault to each.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer func() {
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			switch Fault(p.fault.Load()) {
			case Latency:
				select {
				case <-time.After(time.Duration(p.delay.Load())):
				case <-p.done:
					return
				}
			case Blackhole:
				continue // swallowed: the peer waits for an answer that never comes
			case Refuse:
				reset(src)
				reset(dst)
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				reset(dst)
			}
			return
		}
	}
}

// HTTP is an HTTP fault layer in front of an upstream handler: while a
// burst is set, requests are answered with its status by the layer, and
// the upstream never sees them (an overloaded load balancer's 503s).
type HTTP struct {
	Next   http.Handler
	left   atomic.Int64
	status atomic.Int32
	served atomic.Int64
	hold   atomic.Pointer[chan struct{}]
}

// Hold makes the layer pass requests on (the upstream acts) and keep each
// answer until Release: a window in which a write has acted upstream and
// its answer has not come back.
func (h *HTTP) Hold() {
	ch := make(chan struct{})
	h.hold.Store(&ch)
}

// Release lets the held answers through.
func (h *HTTP) Release() {
	if p := h.hold.Swap(nil); p != nil {
		close(*p)
	}
}

// Burst answers the next n requests with status.
func (h *HTTP) Burst(n int, status int) {
	h.status.Store(int32(status))
	h.left.Store(int64(n))
}

// Bursted is how many requests a burst answered.
func (h *HTTP) Bursted() int64 { return h.served.Load() }

func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.left.Add(-1) >= 0 {
		h.served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(h.status.Load()))
		_, _ = io.WriteString(w, `{"message":"injected fault"}`)
		return
	}
	h.left.Store(0)
	if p := h.hold.Load(); p != nil {
		rec := httptest.NewRecorder()
		h.Next.ServeHTTP(rec, r)
		select {
		case <-*p:
		case <-r.Context().Done():
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	h.Next.ServeHTTP(w, r)
}
