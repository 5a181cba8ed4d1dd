package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// AsEnvelope returns err as an error envelope: the *envelope.Error it is or
// wraps (every error BuildRequest and Client.Do return is one), or, for any
// other non-nil error, upstream_unavailable with a generic message that does
// not repeat err's text (it might hold a URL with a credential). nil gives nil.
func AsEnvelope(err error) *envelope.Error {
	if err == nil {
		return nil
	}
	var e *envelope.Error
	if errors.As(err, &e) && e != nil {
		return e
	}
	return &envelope.Error{Code: envelope.UpstreamUnavailable, Message: "The upstream call failed."}
}

// maxUpstreamMessage is the longest upstream message copied into an envelope.
const maxUpstreamMessage = 300

// ErrorFor maps a non-2xx upstream answer to an error envelope, or returns
// nil for a 2xx answer:
//
//	400, 422 → validation_error      401 → auth_required
//	403      → permission_denied     404 → not_found
//	409, 412 → conflict              429 → rate_limited (retryable; details.retry_after in seconds)
//	5xx      → upstream_unavailable (retryable)
//	others   → unknown_upstream_error
//
// The envelope carries upstream {status, request_id (X-Request-Id or
// X-GitHub-Request-Id), code (the upstream's own error code)}. Its message
// quotes the upstream's JSON "message" or "error" when that is a short single
// line; credential-looking words ("Bearer …", "token=…") and every string in
// secrets are replaced by "***", so a credential the upstream echoes back
// never reaches the caller. Operation is op.ID; SafeToRetry is set for
// retryable errors of operations whose retry policy is "safe".
func ErrorFor(resp *Response, op *air.Operation, secrets ...string) *envelope.Error {
	if resp == nil || resp.OK() {
		return nil
	}
	code, what, retryable := classifyStatus(resp.Status)
	e := &envelope.Error{
		Code:      code,
		Retryable: retryable,
		Upstream: &envelope.Upstream{
			Status:    resp.Status,
			RequestID: requestID(resp.Header),
		},
	}
	if op != nil {
		e.Operation = op.ID
		e.SafeToRetry = retryable && op.Retries.Mode == air.RetrySafe
	}
	msg, upCode := upstreamDetail(resp.Decoded())
	e.Upstream.Code = scrub(upCode, secrets)
	if len(e.Upstream.Code) > 100 {
		e.Upstream.Code = ""
	}
	text := http.StatusText(resp.Status)
	if text == "" {
		text = "status"
	}
	e.Message = fmt.Sprintf("Upstream answered %d %s (%s).", resp.Status, text, what)
	if msg = scrub(msg, secrets); msg != "" {
		e.Message = fmt.Sprintf("Upstream answered %d %s: %s", resp.Status, text, msg)
	}
	if resp.Status == http.StatusTooManyRequests {
		if s, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			e.Details = orderedJSON("retry_after", s)
		}
	}
	return e
}

func classifyStatus(status int) (code, what string, retryable bool) {
	switch {
	case status == 400 || status == 422:
		return envelope.ValidationError, "the upstream rejected the request", false
	case status == 401:
		return envelope.AuthRequired, "the upstream refused the credential", false
	case status == 403:
		return envelope.PermissionDenied, "the credential lacks permission", false
	case status == 404:
		return envelope.NotFound, "no such upstream resource", false
	case status == 409 || status == 412:
		return envelope.Conflict, "the upstream reported a conflict", false
	case status == 429:
		return envelope.RateLimited, "rate limited", true
	case status >= 500 && status <= 599:
		return envelope.UpstreamUnavailable, "the upstream failed", true
	}
	return envelope.UnknownUpstreamError, "unexpected upstream answer", false
}

// upstreamDetail extracts a message and an error code from a JSON error body:
// message | error (string) | error.message | error_description, and
// code | error (an identifier) | error.code.
func upstreamDetail(body any) (msg, code string) {
	m, ok := body.(map[string]any)
	if !ok {
		return "", ""
	}
	str := func(v any) string {
		switch x := v.(type) {
		case string:
			return x
		case json.Number:
			return x.String()
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		return ""
	}
	msg = str(m["message"])
	code = str(m["code"])
	switch e := m["error"].(type) {
	case string:
		if isIdentifier(e) {
			if code == "" {
				code = e
			}
		} else if msg == "" {
			msg = e
		}
	case map[string]any:
		if msg == "" {
			msg = str(e["message"])
		}
		if code == "" {
			code = str(e["code"])
		}
	}
	if msg == "" {
		msg = str(m["error_description"])
	}
	msg = sanitizeLine(msg)
	if utf8.RuneCountInString(msg) > maxUpstreamMessage || strings.ContainsAny(msg, "\r\n") {
		msg = ""
	}
	if !isIdentifier(code) {
		code = ""
	}
	return strings.TrimSpace(msg), code
}

// isIdentifier reports a short code-like word (letters, digits, _ - . /).
func isIdentifier(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r == '/' || r == ':' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
			return false
		}
	}
	return true
}

// sanitizeLine drops control characters.
func sanitizeLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

var credentialWords = regexp.MustCompile(
	`(?i)\b(bearer|basic|token|api[_-]?key|access[_-]?token|secret|password)(\s*[:=]\s*|\s+)[^\s,;"']+`)

// scrub hides credentials in an upstream message.
func scrub(s string, secrets []string) string {
	if s == "" {
		return s
	}
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	return credentialWords.ReplaceAllString(s, "$1$2***")
}

// retryAfter parses a Retry-After header (seconds or an HTTP date) into
// whole seconds from now.
func retryAfter(v string, now time.Time) (int64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return n, true
	}
	if t, err := http.ParseTime(v); err == nil {
		s := int64(t.Sub(now).Round(time.Second) / time.Second)
		return max(s, 0), true
	}
	return 0, false
}
