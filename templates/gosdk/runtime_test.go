package anvilsdk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestDerivedKeyIsTheOtherSDKs(t *testing.T) {
	// The Python and TypeScript SDKs derive "anvil-" + the first 32 hex of
	// sha256("op" NUL '{"a":"é","b":1}') for these inputs (templates/test).
	args, err := toArguments(json.RawMessage(`{"b": 1, "a": "é"}`))
	if err != nil {
		t.Fatal(err)
	}
	key, err := resolveKey(&operation{ID: "op", KeyDerived: true}, nil, args)
	if err != nil {
		t.Fatal(err)
	}
	want := "anvil-" + sha256hex("op\x00{\"a\":\"é\",\"b\":1}")[:32]
	if key != want {
		t.Errorf("derived %s, want %s", key, want)
	}
	if _, err := resolveKey(&operation{ID: "op", KeyRequired: true}, nil, args); !errors.Is(err, ErrIdempotencyRequired) {
		t.Errorf("a required key: %v", err)
	}
}

func TestErrorsMatchTheirCodesSentinel(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &Error{Code: CodePolicyDenied, Message: "no"})
	if !errors.Is(err, ErrPolicyDenied) || errors.Is(err, ErrNotFound) {
		t.Errorf("errors.Is does not tell the codes apart")
	}
	env := toolError(`{"error":{"code":"made_up","message":"m","required_flags":["--issue-number"]}}`, "op")
	var e *Error
	if !errors.As(env, &e) || e.Code != CodeUnknownUpstreamError || e.Details["code"] != "made_up" || e.RequiredArguments[0] != "issue_number" {
		t.Errorf("envelope: %+v", e)
	}
	h := http.Header{"Retry-After": {"3"}}
	if e := httpError(429, h, []byte(`{}`), "op"); e.Code != CodeRateLimited || !e.Retryable || *e.RetryAfterMs != 3000 {
		t.Errorf("429: %+v", e)
	}
}

func TestMessagesReadJSONAndServerSentEvents(t *testing.T) {
	sse := "event: message\r\ndata: {\"id\":1,\r\ndata: \"result\":{}}\r\n\r\ndata: [{\"id\":2},{\"id\":3}]\n\n"
	if got := messages("text/event-stream", []byte(sse)); len(got) != 3 {
		t.Errorf("SSE: %d messages: %s", len(got), got)
	}
	if got := messages("application/json", []byte(`[{"id":1},{"id":2}]`)); len(got) != 2 {
		t.Errorf("JSON array: %d", len(got))
	}
}

func TestRetryDelay(t *testing.T) {
	var got []time.Duration
	for i := range 6 {
		got = append(got, retryDelay(i, nil))
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("backoff %v", got)
	}
	ms := int64(1500)
	if d := retryDelay(0, &ms); d != 1500*time.Millisecond {
		t.Errorf("retry after: %v", d)
	}
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
