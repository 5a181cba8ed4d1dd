package httpkit

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Shared header values: a response's header map may hold them (nothing
// appends to or edits a value slice in place).
var (
	headerJSON    = []string{"application/json"}
	headerNoStore = []string{"no-store"}
)

// SetJSONHeaders marks an answer as uncacheable JSON.
func SetJSONHeaders(h http.Header) {
	h["Content-Type"] = headerJSON
	h["Cache-Control"] = headerNoStore
}

// WriteJSON answers body, a JSON document, with status as uncacheable JSON.
func WriteJSON(w http.ResponseWriter, status int, body []byte) {
	SetJSONHeaders(w.Header())
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// MediaType returns the lower-cased media type of a Content-Type value.
func MediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// IsLoopbackAddr reports whether a host or host:port names a loopback
// address or localhost, as the MCP SDK's DNS-rebinding check reads it.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// LocalLoopback reports whether a listener's address is a loopback one.
func LocalLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return IsLoopbackAddr(a.String())
}
