package idptest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// Redirect is where the provider sent the browser at the end of an
// authorization: the client's redirect URI with the authorization response
// (RFC 6749 section 4.1.2), which the browser did not follow.
type Redirect struct {
	URL              *url.URL
	Code             string
	State            string
	Error            string // error code of an error response (access_denied, invalid_target, …)
	ErrorDescription string
}

// AuthorizationError is the error of an error response at the redirect
// URI; Login returns it beside the Redirect.
type AuthorizationError struct {
	Code        string
	Description string
}

func (e *AuthorizationError) Error() string {
	if e.Description == "" {
		return "idptest: authorization error " + e.Code
	}
	return "idptest: authorization error " + e.Code + ": " + e.Description
}

// ErrLoginRefused is returned when the login page refuses the username
// and password.
var ErrLoginRefused = errors.New("idptest: login refused: invalid username or password")

// Browser plays the user's browser against a provider's login page: the
// provider of this process (Provider.Browser) or a cmd/idp process, known
// by its issuer URL alone. It keeps no state between calls.
type Browser struct {
	// Issuer is the provider's issuer URL: the browser follows redirects
	// on its origin and stops at the first one that leaves it.
	Issuer string
	// Transport carries the requests; nil is http.DefaultTransport.
	Transport http.RoundTripper
}

// Browser returns a Browser for this provider.
func (p *Provider) Browser() *Browser { return &Browser{Issuer: p.issuer} }

// Login opens authURL (an authorization request to the provider), logs in
// on the login page as username with password, and follows the
// provider's redirects until one leaves the provider, which it returns
// without following: the client's redirect URI with code and state. An
// error response there (error=…) comes back as the Redirect and an
// *AuthorizationError; a refused password is ErrLoginRefused; a page the
// provider shows instead of redirecting (an unknown client or redirect
// URI) is an error quoting it.
func (b *Browser) Login(ctx context.Context, authURL, username, password string) (*Redirect, error) {
	return b.browse(ctx, authURL, url.Values{
		fieldUsername: {username},
		fieldPassword: {password},
		fieldAction:   {actionLogin},
	})
}

// Deny opens authURL and presses Deny on the login page: the client gets
// an access_denied error response.
func (b *Browser) Deny(ctx context.Context, authURL string) (*Redirect, error) {
	return b.browse(ctx, authURL, url.Values{fieldAction: {actionDeny}})
}

// Login is Browser.Login as username, with the password the provider
// knows for the user.
func (p *Provider) Login(ctx context.Context, authURL, username string) (*Redirect, error) {
	password, ok := p.store.password(username)
	if !ok {
		return nil, fmt.Errorf("idptest: no user %q", username)
	}
	return p.Browser().Login(ctx, authURL, username, password)
}

// Bounds of one browse: redirects followed, forms submitted, bytes of a
// page read.
const (
	maxRedirects = 10
	maxForms     = 2
	maxPageBytes = 1 << 20
)

// browse drives one authorization from authURL to the redirect that leaves
// the provider, submitting the login form with fill.
func (b *Browser) browse(ctx context.Context, authURL string, fill url.Values) (*Redirect, error) {
	start, err := url.Parse(authURL)
	if err != nil || !b.own(start) {
		return nil, fmt.Errorf("idptest: %q is not a URL of the provider %s", authURL, b.Issuer)
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{
		Jar:       jar,
		Transport: b.Transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !b.own(req.URL) {
				return http.ErrUseLastResponse // the client's redirect URI: stop there
			}
			if len(via) >= maxRedirects {
				return fmt.Errorf("idptest: more than %d redirects", maxRedirects)
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, start.String(), nil)
	if err != nil {
		return nil, err
	}
	for forms := 0; ; forms++ {
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("idptest: browse: %w", err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("idptest: browse: %w", err)
		}
		if loc, err := resp.Location(); err == nil && isRedirect(resp.StatusCode) {
			return redirectTo(loc, loc.Query())
		}
		f, ferr := parseForm(body, resp.Request.URL)
		switch {
		case resp.StatusCode == http.StatusUnauthorized && ferr == nil:
			return nil, ErrLoginRefused
		case ferr != nil || resp.StatusCode != http.StatusOK:
			return nil, fmt.Errorf("idptest: the provider answered %s with no redirect: %s", resp.Status, snippet(body))
		case !b.own(f.action):
			// response_mode=form_post: a form that posts the response to
			// the client.
			return redirectTo(f.action, f.values)
		case forms >= maxForms:
			return nil, fmt.Errorf("idptest: still on a form after %d submissions", maxForms)
		}
		vals := f.values
		for k, v := range fill {
			vals[k] = v
		}
		if f.method == http.MethodGet {
			target := *f.action
			target.RawQuery = vals.Encode()
			req, err = http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
		} else {
			req, err = http.NewRequestWithContext(ctx, f.method, f.action.String(), strings.NewReader(vals.Encode()))
			if req != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

// own reports whether u is on the provider's origin.
func (b *Browser) own(u *url.URL) bool {
	iss, err := url.Parse(b.Issuer)
	return err == nil && u != nil && u.Scheme == iss.Scheme && u.Host == iss.Host
}

func isRedirect(status int) bool {
	return status == http.StatusFound || status == http.StatusSeeOther ||
		status == http.StatusMovedPermanently || status == http.StatusTemporaryRedirect
}

func redirectTo(u *url.URL, params url.Values) (*Redirect, error) {
	if u.Fragment != "" && len(params) == 0 { // response_mode=fragment
		params, _ = url.ParseQuery(u.Fragment)
	}
	r := &Redirect{
		URL:              u,
		Code:             params.Get("code"),
		State:            params.Get("state"),
		Error:            params.Get("error"),
		ErrorDescription: params.Get("error_description"),
	}
	if r.Error != "" {
		return r, &AuthorizationError{Code: r.Error, Description: r.ErrorDescription}
	}
	if r.Code == "" {
		return r, fmt.Errorf("idptest: redirect to %s carries neither a code nor an error", u.Redacted())
	}
	return r, nil
}

// form is the first form of a page: where it posts and its fields' values
// (hidden ones included; text and password fields empty unless set).
type form struct {
	method string
	action *url.URL
	values url.Values
}

// parseForm finds the first form of an HTML page, with an HTML parser (not
// a pattern), so the page is read as a browser reads it.
func parseForm(page []byte, base *url.URL) (*form, error) {
	doc, err := html.Parse(strings.NewReader(string(page)))
	if err != nil {
		return nil, err
	}
	var f *form
	var walk func(n *html.Node, in bool)
	walk = func(n *html.Node, in bool) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "form":
				if f != nil {
					return // only the first form
				}
				action, _ := base.Parse(attr(n, "action"))
				method := strings.ToUpper(attr(n, "method"))
				if method == "" {
					method = http.MethodGet
				}
				f, in = &form{method: method, action: action, values: url.Values{}}, true
			case "input":
				if in && attr(n, "name") != "" && attr(n, "type") != "submit" {
					f.values.Set(attr(n, "name"), attr(n, "value"))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(doc, false)
	if f == nil || f.action == nil {
		return nil, errors.New("no form")
	}
	return f, nil
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// snippet is the start of a page, for an error message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
