package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/anvil-dev/anvil/compiler/diag"
)

// Bounds of fetching a description by URL. Variables so tests can lower
// them.
var (
	// fetchLimit is the largest description accepted (GitHub's full
	// description is about 12 MiB).
	fetchLimit int64 = 64 << 20
	// fetchTimeout bounds the whole fetch, redirects and body included.
	fetchTimeout = 60 * time.Second
)

// maxFetchRedirects bounds redirects, all of which must stay on the host
// first asked.
const maxFetchRedirects = 5

// isSpecURL reports whether a spec argument is an http(s) URL rather than
// a file.
func isSpecURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// fetchSpec downloads the description at raw into a new temporary
// directory, named after the URL's last path segment so its format is
// recognised, and returns the file's path and a function that removes it.
// The file is then read (and snapshotted) like any other. It refuses a
// redirect to another host (or scheme downgrade), a response that is not
// 200, a body over fetchLimit, and anything slower than fetchTimeout.
func fetchSpec(ctx context.Context, raw string) (string, func(), error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("%q is not an http(s) URL", raw)
	}
	if u.User != nil {
		return "", nil, fmt.Errorf("%s: a URL with credentials in it is refused; fetch the file yourself", redact(u))
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	client := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) > maxFetchRedirects {
			return fmt.Errorf("more than %d redirects", maxFetchRedirects)
		}
		if req.URL.Host != u.Host || (u.Scheme == "https" && req.URL.Scheme != "https") {
			return fmt.Errorf("redirected to %s, another host (only redirects on %s are followed)", redact(req.URL), u.Host)
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", nil, err
	}
	req.Header.Set("Accept", "application/yaml, application/json;q=0.9, */*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", nil, fmt.Errorf("fetching %s: no complete answer within %s", redact(u), fetchTimeout)
		}
		return "", nil, fmt.Errorf("fetching %s: %v", redact(u), unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("fetching %s: the server answered %s", redact(u), resp.Status)
	}
	if resp.ContentLength > fetchLimit {
		return "", nil, fmt.Errorf("fetching %s: the description is %d bytes, over the %d-byte limit", redact(u), resp.ContentLength, fetchLimit)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, fetchLimit+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return "", nil, fmt.Errorf("fetching %s: no complete answer within %s", redact(u), fetchTimeout)
		}
		return "", nil, fmt.Errorf("fetching %s: %v", redact(u), err)
	}
	if int64(len(data)) > fetchLimit {
		return "", nil, fmt.Errorf("fetching %s: the description is over the %d-byte limit", redact(u), fetchLimit)
	}
	dir, err := os.MkdirTemp("", "anvil-fetch-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	p := filepath.Join(dir, specFileName(u.Path, resp.Header.Get("Content-Type")))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		cleanup()
		return "", nil, err
	}
	return p, cleanup, nil
}

// specFileName names the fetched file: the URL's last segment when it is a
// plain file name, else openapi with an extension from the content type.
func specFileName(urlPath, contentType string) string {
	base := path.Base(urlPath)
	ok := base != "" && base != "." && base != "/" && len(base) <= 100
	for _, r := range base {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			ok = false
		}
	}
	if ok && !strings.HasPrefix(base, ".") {
		return base
	}
	if strings.Contains(contentType, "json") {
		return "openapi.json"
	}
	return "openapi.yaml"
}

// redact drops a URL's query (which may hold a token) from messages.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		c.RawQuery = "…"
	}
	return c.String()
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// shownURL is how output names a description's URL: without userinfo or
// query (either may hold a secret).
func shownURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return redact(u)
	}
	return raw
}

// nameURL rewrites diagnostics about a description fetched to the file
// local so that they name the URL it came from (shown, as shownURL writes
// it): their position's file, and the path wherever a message repeats it.
// The temporary file is gone by the time anyone reads them.
func nameURL(l diag.List, local, shown string) {
	for i := range l {
		if l[i].Pos.File == local {
			l[i].Pos.File = shown
		}
		l[i].Message = strings.ReplaceAll(l[i].Message, local, shown)
	}
}
