package handler

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// NewRequest is the upstream request of a generated builder: method on the
// URL u holds (scheme, host and path) with the query q ("" for none) and
// body (none when body is nil), or the BuildError upstream.BuildRequest
// returns for a URL that does not parse or whose path has a dot segment
// (upstream.KeepsPathShape, the check upstream.BuildRequest applies to the
// AIR-driven handler's requests). One shared function instead of
// the same lines in every builder keeps large generated trees small; u is
// only written to here, not kept, so it stays on the builder's stack.
func NewRequest(ctx context.Context, opID, method string, u *strings.Builder, q string, body []byte) (*http.Request, error) {
	if q != "" {
		u.WriteByte('?')
		u.WriteString(q)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, BuildError(opID, "The arguments do not make a valid upstream URL.", false)
	}
	if !upstream.KeepsPathShape(req.URL.EscapedPath()) {
		return nil, BuildError(opID, upstream.DotSegmentMessage, false)
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

// AppendJSONKey appends key (a JSON string and its colon) to the JSON
// object w is writing, which holds '{' and the members written so far: a
// comma first when a member precedes it.
func AppendJSONKey(w []byte, key string) []byte {
	if len(w) > 1 {
		w = append(w, ',')
	}
	return append(w, key...)
}
