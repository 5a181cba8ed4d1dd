package upstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/anvil-dev/anvil/runtime/envelope"
)

// Defaults for ClientOptions.
const (
	// DefaultTimeout bounds a whole upstream exchange, body included.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponseBytes caps an upstream response body (8 MiB).
	DefaultMaxResponseBytes int64 = 8 << 20
)

// TimeoutEnv names the variable ParseTimeoutMS reads for the gateway.
const TimeoutEnv = "ANVIL_UPSTREAM_TIMEOUT_MS"

// ParseTimeoutMS parses ANVIL_UPSTREAM_TIMEOUT_MS: a positive whole number of
// milliseconds. An empty value gives DefaultTimeout.
func ParseTimeoutMS(value string) (time.Duration, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return DefaultTimeout, nil
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n <= 0 || n > int64(time.Duration(1<<62)/time.Millisecond) {
		return 0, fmt.Errorf("upstream: %s must be a positive number of milliseconds", TimeoutEnv)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// ClientOptions configures a Client. The zero value (or nil) allows no host.
type ClientOptions struct {
	// Allowlist is the egress allowlist; the zero value allows nothing.
	Allowlist Allowlist
	// Timeout bounds each exchange, from sending to the last body byte.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes caps response bodies. Zero means DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Transport sends requests. Nil means NewTransport().
	Transport http.RoundTripper
}

// Client sends upstream requests under the gateway's egress rules. It is
// safe for concurrent use and should be shared: its transport pools
// connections.
type Client struct {
	allow   Allowlist
	timeout time.Duration
	max     int64
	// rt sends requests. It is called directly rather than through an
	// http.Client: the gateway never follows a redirect (Do turns one into
	// an error) and keeps no cookies, which is all a Client would add.
	rt http.RoundTripper
}

// NewTransport returns an http.Transport tuned for a gateway: proxy from the
// environment, keep-alives, 256 idle connections (64 per host), HTTP/2 when
// offered, bounded dial and TLS handshake times.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
	}
}

// NewClient returns a Client; opts may be nil.
func NewClient(opts *ClientOptions) *Client {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.Transport == nil {
		o.Transport = NewTransport()
	}
	return &Client{
		allow:   o.Allowlist,
		timeout: o.Timeout,
		max:     o.MaxResponseBytes,
		rt:      o.Transport,
	}
}

// Allowlist returns the client's egress allowlist.
func (c *Client) Allowlist() Allowlist { return c.allow }

// Timeout returns the client's per-exchange timeout.
func (c *Client) Timeout() time.Duration { return c.timeout }

// CheckHost returns the policy_denied envelope Do answers for a host the
// allowlist does not allow, or nil. The gateway calls it before resolving
// credentials, so a refused call never reads the vault.
func (c *Client) CheckHost(host string) error {
	if c.allow.Allows(host) {
		return nil
	}
	return &envelope.Error{
		Code:    envelope.PolicyDenied,
		Message: fmt.Sprintf("Upstream host is not in the allowed hosts list (ANVIL_ALLOWED_HOSTS): %s.", host),
		Details: orderedJSON("host", host),
	}
}

// Response is a complete upstream answer.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Header holds the response headers.
	Header http.Header
	// Body is the whole response body (at most the client's cap).
	Body []byte
	// JSON is the decoded body (numbers as json.Number), filled in by
	// Decoded on first use; nil for an empty or non-JSON body.
	JSON any
	// IsJSON reports whether Body is one JSON value (by its content type, or
	// any body that parses when the upstream names no content type).
	IsJSON bool
	// Compact is Body with insignificant whitespace removed and its key
	// order kept, when IsJSON.
	Compact json.RawMessage

	decoded bool
}

// Decoded returns the decoded JSON body (numbers as json.Number), or nil
// when the body is not JSON. It decodes on first use: a gateway whose
// effect report never reads the answer does not pay for it.
func (r *Response) Decoded() any {
	if r == nil {
		return nil
	}
	if r.JSON == nil && r.IsJSON && !r.decoded {
		r.decoded = true
		r.JSON = decodeJSON(r.Body)
	}
	return r.JSON
}

// OK reports a 2xx status.
func (r *Response) OK() bool { return r != nil && r.Status >= 200 && r.Status < 300 }

// Do sends req and reads the whole answer. In order:
//
//   - a host the allowlist does not allow is refused before anything is
//     sent: policy_denied "Upstream host is not in the allowed hosts list…";
//   - a redirect (301, 302, 303, 307, 308) is never followed: it is the
//     transport error upstream_unavailable, connection_reset "after response";
//   - no answer within the timeout: upstream_timeout;
//   - a connection that fails: upstream_unavailable, with details.transport
//     naming the failure (connection_refused, connection_reset, dns_error,
//     tls_error, network_error) and details.phase "before response" or
//     "after response";
//   - a body over the cap: upstream_unavailable "response too large".
//
// Every error is an *envelope.Error whose message never includes the URL
// (it may carry a query credential). Non-2xx answers are returned as a
// Response, not an error: map them with ErrorFor.
func (c *Client) Do(req *http.Request) (*Response, error) {
	if req == nil || req.URL == nil {
		return nil, internalError("", "No upstream request.")
	}
	if err := c.CheckHost(req.URL.Hostname()); err != nil {
		return nil, err
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return nil, internalError("", "The upstream URL is not http(s).")
	}
	parent := req.Context()
	ctx, cancel := context.WithTimeout(parent, c.timeout)
	defer cancel()
	req = req.WithContext(ctx)
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if u := req.URL.User; u != nil && req.Header.Get("Authorization") == "" {
		// As http.Client does: credentials in the server URL are basic auth.
		pw, _ := u.Password()
		req.SetBasicAuth(u.Username(), pw)
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		return nil, c.transportError(err, ctx, parent, "before response")
	}
	if resp == nil {
		return nil, c.transportError(io.ErrUnexpectedEOF, ctx, parent, "before response")
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return nil, &envelope.Error{
			Code: envelope.UpstreamUnavailable,
			Message: fmt.Sprintf("Upstream transport failed (connection_reset after response): "+
				"the upstream answered with a redirect (HTTP %d), which the gateway never follows.", resp.StatusCode),
			Upstream: &envelope.Upstream{Status: resp.StatusCode, RequestID: requestID(resp.Header)},
			Details:  orderedJSON("transport", "connection_reset", "phase", "after response", "status", resp.StatusCode),
		}
	}
	if resp.ContentLength > c.max {
		return nil, c.tooLarge(resp)
	}
	body, err := readAll(io.LimitReader(resp.Body, c.max+1), resp.ContentLength)
	if err != nil {
		return nil, c.transportError(err, ctx, parent, "after response")
	}
	if int64(len(body)) > c.max {
		return nil, c.tooLarge(resp)
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	out.Compact, out.IsJSON = compactBody(resp.Header.Get("Content-Type"), body)
	return out, nil
}

// readAll is io.ReadAll with the buffer sized from the declared length
// (-1 when unknown; the caller has refused one over the limit), so a body of
// known length is read into one allocation instead of a growing series.
func readAll(r io.Reader, declared int64) ([]byte, error) {
	size := int64(512) // as io.ReadAll starts
	if declared >= size {
		size = declared + 1 // room for the read that sees EOF
	}
	b := make([]byte, 0, size)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the next size
		}
	}
}

func (c *Client) tooLarge(resp *http.Response) *envelope.Error {
	return &envelope.Error{
		Code:     envelope.UpstreamUnavailable,
		Message:  fmt.Sprintf("Upstream response too large (over %d bytes).", c.max),
		Upstream: &envelope.Upstream{Status: resp.StatusCode, RequestID: requestID(resp.Header)},
		Details:  orderedJSON("transport", "response_too_large", "limit_bytes", c.max),
	}
}

// transportError classifies a failed exchange without echoing err's text.
func (c *Client) transportError(err error, ctx, parent context.Context, phase string) *envelope.Error {
	timedOut := errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded)
	var ne net.Error
	if !timedOut && errors.As(err, &ne) && ne.Timeout() {
		timedOut = true
	}
	if parent.Err() == context.Canceled {
		return &envelope.Error{
			Code:    envelope.UpstreamUnavailable,
			Message: "The upstream call was cancelled.",
			Details: orderedJSON("transport", "cancelled", "phase", phase),
		}
	}
	if timedOut {
		return &envelope.Error{
			Code:      envelope.UpstreamTimeout,
			Message:   fmt.Sprintf("Upstream did not answer within %d ms.", c.timeout.Milliseconds()),
			Retryable: true,
			Details:   orderedJSON("transport", "timeout", "phase", phase, "timeout_ms", c.timeout.Milliseconds()),
		}
	}
	kind := transportKind(err)
	return &envelope.Error{
		Code:      envelope.UpstreamUnavailable,
		Message:   fmt.Sprintf("Upstream transport failed (%s %s).", kind, phase),
		Retryable: true,
		Details:   orderedJSON("transport", kind, "phase", phase),
	}
}

func transportKind(err error) string {
	var dnsErr *net.DNSError
	var recErr tls.RecordHeaderError
	var alertErr tls.AlertError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidErr x509.CertificateInvalidError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection_refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection_reset"
	case errors.As(err, &dnsErr):
		return "dns_error"
	case errors.As(err, &recErr), errors.As(err, &alertErr), errors.As(err, &certErr),
		errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &invalidErr):
		return "tls_error"
	}
	return "network_error"
}

// compactBody checks that body is one JSON value (by content type, or any
// body that parses when no content type is given) and returns it compacted.
func compactBody(contentType string, body []byte) (json.RawMessage, bool) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, false
	}
	if contentType != "" && !isJSONType(contentType) {
		return nil, false
	}
	out := make([]byte, 0, len(body))
	buf := bytes.NewBuffer(out)
	if err := json.Compact(buf, body); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// decodeJSON decodes one valid JSON value keeping numbers as json.Number.
func decodeJSON(body []byte) any {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// isJSONType reports whether a Content-Type names JSON: application/json or
// a +json type, parameters ignored. (mime.ParseMediaType yields the same
// media type, lower-cased and trimmed, or an error on malformed parameters,
// where the type is then taken the same way; this skips its parameter map.)
func isJSONType(contentType string) bool {
	base, _, _ := strings.Cut(contentType, ";")
	mt := strings.ToLower(strings.TrimSpace(base))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// requestID is the upstream's request id header, if any.
func requestID(h http.Header) string {
	for _, k := range []string{"X-Request-Id", "X-Github-Request-Id", "Request-Id", "X-Amzn-Requestid"} {
		if v := h.Get(k); v != "" {
			if len(v) > 200 {
				v = v[:200]
			}
			return sanitizeLine(v)
		}
	}
	return ""
}
