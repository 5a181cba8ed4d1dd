package identity_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/anvil-dev/anvil/runtime/identity"
)

// TestNone: auth mode none makes every request the local person, for every
// route, unrestricted, with a fresh principal each time.
func TestNone(t *testing.T) {
	var id identity.Identity = identity.None{}
	a, ref := id.Authenticate(context.Background(), httptest.NewRequest(http.MethodGet, "/mcp", nil))
	if ref != nil {
		t.Fatalf("refused: %+v", ref)
	}
	if !a.May(identity.ForTurn) || !a.May(identity.ForConnect) || a.Fingerprint != "local" ||
		a.Principal.Sub != "local" || a.Principal.Subject() != "local" || !a.Principal.Unrestricted {
		t.Errorf("local caller %+v, principal %+v", a, a.Principal)
	}
	b, _ := id.Authenticate(context.Background(), httptest.NewRequest(http.MethodGet, "/mcp", nil))
	if a.Principal == b.Principal {
		t.Error("two requests share one principal")
	}
}

// TestRefusalWrite: a refusal answers its status (401 when unset), its
// challenge and the error envelope.
func TestRefusalWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	(&identity.Refusal{Code: "invalid_token", Message: "Token has expired.", Challenge: `Bearer realm="mcp", error="invalid_token"`}).Write(rec)
	if rec.Code != 401 || rec.Header().Get("WWW-Authenticate") != `Bearer realm="mcp", error="invalid_token"` ||
		rec.Body.String() != `{"error":{"code":"invalid_token","message":"Token has expired."}}` {
		t.Errorf("%d %q %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
	var nobody *identity.Caller
	if nobody.May(identity.ForTurn) || (*identity.Principal)(nil).Subject() != "" {
		t.Error("a nil caller may call")
	}
}
