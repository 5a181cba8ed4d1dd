package envelope

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

func TestRESTStatus(t *testing.T) {
	want := map[string]int{
		ValidationError: 400, AuthRequired: 401, PermissionDenied: 403, PolicyDenied: 403, NotFound: 404,
		Conflict: 409, UnsafeRetryBlocked: 409, UnsupportedOperation: 422, ConfirmationRequired: 428,
		IdempotencyRequired: 428, RateLimited: 429, SchemaMismatch: 502, UpstreamUnavailable: 502,
		UnknownUpstreamError: 502, "something_new": 502, IdempotencyLedgerUnavailable: 503,
		UpstreamTimeout: 504, InternalError: 500,
	}
	for code, status := range want {
		if got := RESTStatus(code); got != status {
			t.Errorf("%s: %d, want %d", code, got, status)
		}
	}
}

func TestMarshalKeyOrder(t *testing.T) {
	e := &Error{Code: PolicyDenied, Message: "no", Operation: "github.issues.create", TraceID: "trace_1",
		Details: json.RawMessage(`{"code":"policy/grant_denied","rule":null}`)}
	want := `{"error":{"code":"policy_denied","message":"no","retryable":false,"safe_to_retry":false,"operation":"github.issues.create","trace_id":"trace_1","details":{"code":"policy/grant_denied","rule":null}}}`
	if got := string(e.Marshal()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	e.Details = json.RawMessage(`{broken`)
	var back map[string]any
	if err := json.Unmarshal(e.Marshal(), &back); err != nil {
		t.Errorf("invalid details made invalid JSON: %v", err)
	}
}

func TestWriteSimple(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteSimple(rec, 404, "not_found", "No such route.")
	if rec.Code != 404 || rec.Body.String() != `{"error":{"code":"not_found","message":"No such route."}}` ||
		rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("%d %s %v", rec.Code, rec.Body.String(), rec.Header())
	}
}
