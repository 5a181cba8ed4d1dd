package handler

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/anvil-dev/anvil/runtime/air"
)

// NewRequest is the upstream request of a generated builder: method on url
// with body (none when body is nil), or the BuildError upstream.BuildRequest
// returns for a URL that does not parse. One shared function instead of
// the same lines in every builder keeps large generated trees small.
func NewRequest(ctx context.Context, opID, method, url string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, BuildError(opID, "The arguments do not make a valid upstream URL.", false)
	}
	return req, nil
}

// FinishRequest sets the headers every upstream request carries unless an
// input already set them, as upstream.BuildRequest does: Accept (the
// operation's accepted media types) and User-Agent.
func FinishRequest(req *http.Request, accept string) (*http.Request, error) {
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", accept)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	return req, nil
}

// userAgent is the User-Agent of upstream requests.
const userAgent = "anvil-gateway/" + air.AnvilVersion
