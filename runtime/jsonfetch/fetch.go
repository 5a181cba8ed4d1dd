// Package jsonfetch fetches the JSON documents the gateway trusts a third
// party for (a JWKS, OpenID / RFC 8414 metadata) within bounds: one
// timeout for connect, headers and body, a size cap, a 200 wanted, and no
// redirect except to https. Both inbound identities use it (Branchyard's
// verifier for an https JWKS, the OIDC identity for every issuer). It
// imports nothing of Anvil.
package jsonfetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// MaxRedirects is the most redirects a Client follows (each to https).
const MaxRedirects = 3

// ErrUnreadable is every failure of Get: the caller decides what it means
// (a refused token, for the identities), and never says more than that.
var ErrUnreadable = errors.New("document unreadable")

// Client is an HTTP client with timeout that follows a redirect only to
// https, at most MaxRedirects times: documents are named exactly, and a
// redirect to plain http would let the network choose the keys.
func Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to %s refused", req.URL.Scheme)
			}
			if len(via) >= MaxRedirects {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
}

// Get GETs u with client within timeout and returns its body: a 200 whose
// body is at most max bytes of valid JSON, else ErrUnreadable.
func Get(ctx context.Context, client *http.Client, u string, max int64, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, ErrUnreadable
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, ErrUnreadable
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, ErrUnreadable
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil || int64(len(raw)) > max || !json.Valid(bytes.TrimSpace(raw)) {
		return nil, ErrUnreadable
	}
	return raw, nil
}
