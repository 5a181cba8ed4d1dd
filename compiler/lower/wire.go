package lower

import (
	"net/url"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Codes of what a gateway could not send upstream.
const (
	// CodeInvalidServerURL: a server URL with a scheme other than http or
	// https (javascript:, file:, ftp:); a relative URL is left to the
	// deployment's base URL.
	CodeInvalidServerURL = "lower/invalid_server_url"
	// CodeInvalidHeaderName: a header parameter or API key header whose
	// name is not an HTTP token (RFC 9110, section 5.1).
	CodeInvalidHeaderName = "lower/invalid_header_name"
)

// checkWire reports, as errors, server URLs and header names no request
// could carry: before, they compiled without a word and failed on every
// call (or, for a javascript: URL, waited for a deployment to trust it).
func (l *lowerer) checkWire(doc *air.Document) {
	for _, s := range doc.Service.Servers {
		if scheme, bad := badServerScheme(s.URL); bad {
			l.addDiag(diag.Pos{File: l.spec.File}, diag.Error, CodeInvalidServerURL, -1,
				"server URL %q has the scheme %q; the gateway calls only http and https servers", s.URL, scheme)
		}
	}
	for name, ss := range l.spec.SecuritySchemes {
		if strings.EqualFold(ss.Type, "apiKey") && ss.In == "header" && !validHeaderName(ss.ParamName) {
			l.addDiag(diag.Pos{File: l.spec.File}, diag.Error, CodeInvalidHeaderName, -1,
				"security scheme %q sends its key in the header %q, which is not a valid header name", name, ss.ParamName)
		}
	}
	for _, st := range l.ops {
		for _, p := range st.spec.Params {
			if p.In == "header" && !validHeaderName(p.Name) {
				l.addDiag(l.opPos(st), diag.Error, CodeInvalidHeaderName, st.i,
					"%s %s: header parameter %q is not a valid header name (letters, digits and !#$%%&'*+-.^_`|~ only)", st.spec.Method, st.spec.Path, p.Name)
			}
		}
	}
}

// badServerScheme returns the scheme of an absolute URL that is not http
// or https. Templated URLs ({scheme}://…) and relative ones pass.
func badServerScheme(raw string) (string, bool) {
	if strings.Contains(raw, "{") {
		i := strings.Index(raw, ":")
		if i < 0 || strings.ContainsAny(raw[:i], "{}") {
			return "", false
		}
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		i := strings.Index(raw, ":")
		if i > 0 && !strings.ContainsAny(raw[:i], "/?#") {
			return raw[:i], true
		}
		return "", false
	}
	switch s := strings.ToLower(u.Scheme); s {
	case "", "http", "https":
		return "", false
	default:
		return s, true
	}
}

// validHeaderName reports whether s is an HTTP field name (a token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
