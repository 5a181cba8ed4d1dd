package handler

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/envelope"
)

func TestNewRequestAndFinish(t *testing.T) {
	ctx := context.Background()
	if _, err := NewRequest(ctx, "svc.x.get", "GET", urlOf("http://a b/\x7f"), "", nil); err == nil {
		t.Fatal("a URL that does not parse made a request")
	} else if e := (*envelope.Error)(nil); !errors.As(err, &e) || e.Code != envelope.ValidationError || e.Operation != "svc.x.get" {
		t.Errorf("error %#v, want the builder's validation_error", err)
	}
	req, err := NewRequest(ctx, "svc.x.create", "POST", urlOf("http://h/x"), "a=1&b=%20", []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "http://h/x?a=1&b=%20" {
		t.Errorf("URL %s", req.URL)
	}
	if b, _ := io.ReadAll(req.Body); string(b) != `{"a":1}` {
		t.Errorf("body %q", b)
	}
	req.Header.Set("Accept", "text/plain")
	if req, _ = FinishRequest(req, "application/json"); req.Header.Get("Accept") != "text/plain" || req.Header.Get("User-Agent") != userAgent {
		t.Errorf("headers %v: an input's Accept must win, the User-Agent must be set", req.Header)
	}
	req, _ = NewRequest(ctx, "svc.x.get", "GET", urlOf("http://h/x"), "", nil)
	if req.Body != nil || req.URL.RawQuery != "" {
		t.Error("a nil body made a request body")
	}
	if req, _ = FinishRequest(req, "application/json"); req.Header.Get("Accept") != "application/json" {
		t.Errorf("Accept %q", req.Header.Get("Accept"))
	}
}

func urlOf(s string) *strings.Builder {
	var u strings.Builder
	u.WriteString(s)
	return &u
}

func TestAppendJSONKey(t *testing.T) {
	w := []byte{'{'}
	w = AppendJSONKey(w, `"a":`)
	w = append(w, '1')
	w = AppendJSONKey(w, `"b":`)
	if w = append(w, "null}"...); string(w) != `{"a":1,"b":null}` {
		t.Errorf("%s", w)
	}
}
