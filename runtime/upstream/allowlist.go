// Package upstream sends a served operation's request to its upstream API:
// it builds the HTTP request from AIR and the caller's arguments
// (BuildRequest), applies the resolved credential (ApplyStatic,
// ApplyBearer), enforces the egress allowlist, never follows redirects,
// caps response sizes and time (Client.Do), and maps upstream failures to
// error envelopes (ErrorFor).
//
// Every error this package returns to describe a call's outcome is an
// *envelope.Error (use errors.As); its Operation and TraceID are left for the
// caller to fill when the package does not know them.
package upstream

import (
	"net"
	"net/url"
	"strings"
)

// EnvDev is the ANVIL_ENV value under which an empty allowlist allows any host.
const EnvDev = "dev"

// Allowlist is the upstream egress allowlist (ANVIL_ALLOWED_HOSTS). The zero
// value allows nothing.
type Allowlist struct {
	hosts    []string
	allowAll bool
}

// ParseAllowlist parses ANVIL_ALLOWED_HOSTS: comma-separated host names.
// Entries are compared case-insensitively by host name only: a port, a
// scheme ("https://api.example.com"), brackets around an IPv6 address, a
// trailing dot, and a leading "." or "*." are ignored, and empty entries are
// skipped. An empty list allows every host only when env (ANVIL_ENV) is
// exactly "dev"; any other environment, including the default (prod), fails
// closed.
func ParseAllowlist(value, env string) Allowlist {
	var a Allowlist
	for _, e := range strings.Split(value, ",") {
		if h := normalizeEntry(e); h != "" {
			a.hosts = append(a.hosts, h)
		}
	}
	a.allowAll = len(a.hosts) == 0 && strings.TrimSpace(env) == EnvDev
	return a
}

// AllowAll returns an allowlist that allows every host (tests, dev tools).
func AllowAll() Allowlist { return Allowlist{allowAll: true} }

// Hosts returns the normalized entries.
func (a Allowlist) Hosts() []string { return append([]string(nil), a.hosts...) }

// AllowsAny reports whether the list allows every host (an empty list in dev).
func (a Allowlist) AllowsAny() bool { return a.allowAll }

// Allows reports whether host (a host name or IP, optionally with a port) is
// allowed: it equals an entry or is a subdomain of one. "api.github.example"
// is allowed by "github.example"; "evilgithub.example" is not.
func (a Allowlist) Allows(host string) bool {
	if a.allowAll {
		return true
	}
	h := normalizeHost(host)
	if h == "" {
		return false
	}
	for _, e := range a.hosts {
		if h == e || (len(h) > len(e) && strings.HasSuffix(h, e) && h[len(h)-len(e)-1] == '.') {
			return true
		}
	}
	return false
}

func normalizeEntry(e string) string {
	e = strings.TrimSpace(e)
	if i := strings.Index(e, "://"); i >= 0 {
		if u, err := url.Parse(e); err == nil && u.Host != "" {
			e = u.Host
		} else {
			e = e[i+3:]
		}
	}
	if i := strings.IndexAny(e, "/?#"); i >= 0 {
		e = e[:i]
	}
	e = strings.TrimPrefix(e, "*.")
	e = strings.TrimPrefix(e, ".")
	return normalizeHost(e)
}

// normalizeHost lowercases host, drops a port, IPv6 brackets and a trailing dot.
func normalizeHost(h string) string {
	h = strings.TrimSpace(h)
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	h = strings.TrimPrefix(h, "[")
	h = strings.TrimSuffix(h, "]")
	h = strings.TrimSuffix(h, ".")
	return strings.ToLower(h)
}
