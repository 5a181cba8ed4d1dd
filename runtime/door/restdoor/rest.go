// Package restdoor is the REST door: POST /call/<tool> runs a tool through
// the executor and answers its data (the effect report in X-Anvil-Effect,
// or in the body on Prefer: anvil-effect=body), and GET /tools lists or
// searches the tools the caller's grant shows (runtime/catalog). The front
// hall has verified the caller before a door is reached.
package restdoor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/catalog"
	"github.com/anvil-dev/anvil/runtime/effect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/httpkit"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/jsonscan"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// MaxBody bounds a /call request body.
const MaxBody = 64 << 10

// Door serves /call/<tool> and /tools.
type Door struct {
	exec *executor.Executor
}

// New returns the REST door calling through exec.
func New(exec *executor.Executor) *Door { return &Door{exec: exec} }

// validToolName reports whether name matches ^[A-Za-z0-9_.-]{1,128}$, the
// tool names /call/<tool> accepts.
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// ServeCall handles POST /call/<tool> for an authenticated caller.
func (d *Door) ServeCall(w http.ResponseWriter, r *http.Request, p *identity.Principal) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
			envelope.WriteSimple(w, http.StatusMethodNotAllowed, "method_not_allowed", "Use POST for /call/<tool>.")
		})
		return
	}
	if httpkit.MediaType(r.Header.Get("Content-Type")) != "application/json" {
		httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
			envelope.WriteSimple(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json.")
		})
		return
	}
	name, err := url.PathUnescape(strings.TrimPrefix(r.URL.EscapedPath(), "/call/"))
	if err != nil || !validToolName(name) {
		writeEnvelope(w, &envelope.Error{Code: envelope.NotFound, Message: "No such tool."}, nil)
		return
	}
	// A call a wider scope would allow asks for it (OIDC step-up) before
	// anything is read.
	if up := d.exec.StepUp(p, name); up != nil {
		httpkit.RefuseRequest(w, r, up.Write)
		return
	}
	keys := r.Header.Values("Idempotency-Key")
	if len(keys) > 1 {
		writeEnvelope(w, &envelope.Error{Code: envelope.ValidationError, Message: "Send at most one Idempotency-Key header."}, nil)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		msg := "Could not read the request body."
		if errors.As(err, &mbe) {
			msg = "The request body exceeds 64 KiB."
		}
		writeEnvelope(w, &envelope.Error{Code: envelope.ValidationError, Message: msg}, nil)
		return
	}
	req, verr := parseCallBody(body)
	if verr != nil {
		writeEnvelope(w, verr, nil)
		return
	}
	var meta map[string]any // most calls carry neither
	if len(keys) == 1 || req.Stage != nil {
		meta = map[string]any{}
		if len(keys) == 1 {
			meta["idempotency_key"] = keys[0]
		}
		if req.Stage != nil {
			meta["stage"] = *req.Stage
		}
	}
	out := d.exec.Call(r.Context(), executor.Call{Tool: name, Args: req.Arguments, Meta: meta, Principal: p})
	if out.Err != nil && out.Tool == nil && out.Err.Code == envelope.NotFound && d.exec.CurrentFleet().Tool(name) == nil {
		out.Err = catalog.UnknownTool(d.exec.CurrentFleet(), p, name, out.Err, "GET /tools lists the served tools.")
	}
	inBody := effectInBody(r.Header)
	if out.Err != nil {
		if ra := out.Err.RetryAfterSeconds(); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		if inBody {
			setEffectHeaders(w.Header(), out.Effect, true)
			httpkit.SetJSONHeaders(w.Header())
			w.WriteHeader(envelope.RESTStatus(out.Err.Code))
			_, _ = w.Write(withEffect(out.Err.Marshal(), out.Effect))
			return
		}
		writeEnvelope(w, out.Err, out.Effect)
		return
	}
	setEffectHeaders(w.Header(), out.Effect, inBody)
	b := out.Raw
	if out.Plan != nil {
		b, _ = wirejson.Marshal(out.Plan)
	} else if b == nil {
		b = json.RawMessage("null")
	}
	if inBody {
		b = withEffect(append(append([]byte(`{"data":`), b...), '}'), out.Effect)
	}
	httpkit.SetJSONHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// The REST answer's effect report (finding 9). X-Anvil-Effect is at most
// effect.MaxHeaderBytes (8 KiB: Node's HTTP client refuses headers over 16
// KiB), so a larger report is cut down there and the answer says so with
// X-Anvil-Effect-Truncated: true. The seed fixes a 200's body as the response
// data, so the full report goes in the body only when the caller asks for
// it with Prefer: anvil-effect=body (RFC 7240): then every /call answer is
// {"data": <response data>, "effect": <report or null>} or {"error": {...},
// "effect": <report or null>}, with Preference-Applied: anvil-effect=body.
// Over MCP the full report is always in _meta.effect.
const (
	preferEffectBody   = "anvil-effect=body"
	headerEffect       = "X-Anvil-Effect"
	headerEffectCut    = "X-Anvil-Effect-Truncated"
	headerPrefApplied  = "Preference-Applied"
	maxPreferenceCount = 32 // preferences looked at, of a Prefer header
)

// effectInBody reports whether a Prefer header asks for anvil-effect=body
// (token case-insensitive, the value optionally quoted, parameters after ';'
// ignored).
func effectInBody(h http.Header) bool {
	n := 0
	for _, line := range h.Values("Prefer") {
		for _, pref := range strings.Split(line, ",") {
			if n++; n > maxPreferenceCount {
				return false
			}
			pref, _, _ = strings.Cut(pref, ";")
			name, value, _ := strings.Cut(strings.TrimSpace(pref), "=")
			value = strings.Trim(strings.TrimSpace(value), `"`)
			if strings.EqualFold(strings.TrimSpace(name), "anvil-effect") && strings.EqualFold(value, "body") {
				return true
			}
		}
	}
	return false
}

// setEffectHeaders sets X-Anvil-Effect (bounded) and, when the report was
// cut down, X-Anvil-Effect-Truncated; inBody adds Preference-Applied.
func setEffectHeaders(h http.Header, rep *effect.Report, inBody bool) {
	if rep != nil {
		v, cut := effect.HeaderValueBounded(rep)
		h.Set(headerEffect, v)
		if cut {
			h.Set(headerEffectCut, "true")
		}
	}
	if inBody {
		h.Set(headerPrefApplied, preferEffectBody)
	}
}

// withEffect adds "effect": <the full report> as the last member of obj, a
// JSON object the gateway wrote.
func withEffect(obj []byte, rep *effect.Report) []byte {
	obj = bytes.TrimRight(obj, " \n")
	out := append(obj[:len(obj)-1:len(obj)-1], `,"effect":`...)
	return append(rep.AppendJSON(out), '}')
}

type callBody struct {
	Arguments json.RawMessage
	Stage     *bool
}

// parseCallBody reads {"arguments": {...}, "stage": bool?} (the keys the
// contract defines for POST /call/<tool>); an empty body is {}, and any
// other top-level key is a validation_error naming it (a tool argument sent
// beside "arguments" would otherwise be silently dropped).
func parseCallBody(body []byte) (*callBody, *envelope.Error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return &callBody{}, nil
	}
	members, ok := jsonscan.ObjectMembers(body)
	if !ok {
		return nil, &envelope.Error{Code: envelope.ValidationError, Message: "The body must be a JSON object {\"arguments\": {...}}."}
	}
	var args, stage []byte
	var hasArgs, hasStage bool
	for _, m := range members { // the last of repeated keys wins, as in a map
		switch m.Key {
		case "arguments":
			args, hasArgs = m.Value, true
		case "stage":
			stage, hasStage = m.Value, true
		default:
			return nil, &envelope.Error{Code: envelope.ValidationError, Message: fmt.Sprintf(
				"Unknown top-level key %s: the body is {\"arguments\": {...}, \"stage\": true?}; put the tool's arguments inside \"arguments\".", strconv.Quote(m.Key))}
		}
	}
	out := &callBody{}
	if hasArgs {
		a := bytes.TrimSpace(args)
		if len(a) == 0 || a[0] != '{' {
			if !bytes.Equal(a, []byte("null")) {
				return nil, &envelope.Error{Code: envelope.ValidationError, Message: "\"arguments\" must be a JSON object."}
			}
		} else {
			out.Arguments = a
		}
	}
	if hasStage {
		var b bool
		switch string(bytes.TrimSpace(stage)) {
		case "true":
			b = true
		case "false":
		default: // null too: json.Unmarshal would leave b false
			return nil, &envelope.Error{Code: envelope.ValidationError, Message: "\"stage\" must be a boolean."}
		}
		out.Stage = &b
	}
	return out, nil
}

// writeEnvelope answers an error with the status of its code, with the
// effect report in X-Anvil-Effect when there is one.
func writeEnvelope(w http.ResponseWriter, e *envelope.Error, rep *effect.Report) {
	setEffectHeaders(w.Header(), rep, false)
	httpkit.SetJSONHeaders(w.Header())
	w.WriteHeader(envelope.RESTStatus(e.Code))
	_, _ = w.Write(e.Marshal())
}

// ServeTools handles GET /tools for an authenticated caller: without
// search, every tool the caller's grant shows, in name order; with
// ?search=<text>[&limit=<n>][&connector=<id>], the same ranking as
// anvil_search. Both answer {"tools":[{"name","operation_id","title",
// "summary","effect","confirm_required"}]}. GET /tools/<tool> is
// anvil_describe of that one tool (catalog.Describe): the same bytes.
func (d *Door) ServeTools(w http.ResponseWriter, r *http.Request, p *identity.Principal) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
			envelope.WriteSimple(w, http.StatusMethodNotAllowed, "method_not_allowed", "Use GET for /tools.")
		})
		return
	}
	q := r.URL.Query()
	if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/tools/"); ok {
		name, err := url.PathUnescape(rest)
		if err != nil || name == "" || len(q) > 0 {
			writeEnvelope(w, &envelope.Error{Code: envelope.ValidationError, Message: "GET /tools/<tool> takes one tool name and no query parameters."}, nil)
			return
		}
		b, e := catalog.Describe(d.exec.CurrentFleet(), p, []string{name})
		if e != nil {
			if e.Code == envelope.NotFound {
				e = catalog.UnknownTool(d.exec.CurrentFleet(), p, name, e, "GET /tools lists the served tools.")
			}
			writeEnvelope(w, e, nil)
			return
		}
		httpkit.WriteJSON(w, http.StatusOK, b)
		return
	}
	for k := range q {
		if k != "search" && k != "limit" && k != "connector" {
			writeEnvelope(w, &envelope.Error{Code: envelope.ValidationError, Message: "Unknown query parameter " + strconv.Quote(k) + "; /tools takes search, limit and connector."}, nil)
			return
		}
	}
	var limit *int
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[len(v)-1]) // the last of repeated values wins, as for search
		if err != nil {
			writeEnvelope(w, &envelope.Error{Code: envelope.ValidationError, Message: "limit must be an integer."}, nil)
			return
		}
		limit = &n
	}
	if _, ok := q["search"]; ok {
		b, e := catalog.Search(d.exec.CurrentFleet(), p, q.Get("search"), q.Get("connector"), limit)
		if e != nil {
			writeEnvelope(w, e, nil)
			return
		}
		httpkit.WriteJSON(w, http.StatusOK, b)
		return
	}
	if limit != nil {
		writeEnvelope(w, &envelope.Error{Code: envelope.ValidationError, Message: "limit applies to a search (/tools?search=<text>&limit=<n>)."}, nil)
		return
	}
	b, e := catalog.List(d.exec.CurrentFleet(), p, q.Get("connector"))
	if e != nil {
		writeEnvelope(w, e, nil)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, b)
}
