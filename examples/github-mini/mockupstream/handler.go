package mockupstream

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxBody caps request bodies; larger ones are treated as unparsable.
const maxBody = 1 << 20

type message struct {
	Message string `json:"message"`
}

var (
	msgNotFound   = message{"Not Found"}
	msgBadCreds   = message{"Bad credentials"}
	msgBadJSON    = message{"Problems parsing JSON"}
	msgValidation = message{"Validation Failed"}
)

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/__requests" {
		writeJSON(w, http.StatusOK, h.Requests())
		return
	}
	authorized := h.token == "" || r.Header.Get("Authorization") == "Bearer "+h.token
	target := r.RequestURI
	if target == "" {
		target = r.URL.RequestURI()
	}
	h.mu.Lock()
	h.log = append(h.log, Request{
		Method:         r.Method,
		Path:           target,
		Authorized:     authorized,
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
	})
	h.mu.Unlock()
	if !authorized {
		writeJSON(w, http.StatusUnauthorized, msgBadCreds)
		return
	}
	h.route(w, r)
}

// segments splits the escaped path into unescaped segments. ok is false for
// a path that does not start with "/" or has an invalid escape.
func segments(r *http.Request) ([]string, bool) {
	p := r.URL.EscapedPath()
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, false
		}
		parts[i] = u
	}
	return parts, true
}

func (h *Handler) route(w http.ResponseWriter, r *http.Request) {
	seg, ok := segments(r)
	if !ok || len(seg) < 4 || seg[0] != "repos" || seg[1] == "" || seg[2] == "" {
		writeJSON(w, http.StatusNotFound, msgNotFound)
		return
	}
	rest := seg[3:]
	m := r.Method
	switch {
	case len(rest) == 1 && rest[0] == "issues" && m == http.MethodGet:
		h.listIssues(w, r)
	case len(rest) == 1 && rest[0] == "issues" && m == http.MethodPost:
		h.createIssue(w, r)
	case len(rest) == 2 && rest[0] == "issues" && isNumber(rest[1]) && m == http.MethodGet:
		h.getIssue(w, number(rest[1]))
	case len(rest) == 2 && rest[0] == "issues" && isNumber(rest[1]) && m == http.MethodPatch:
		h.updateIssue(w, r, number(rest[1]))
	case len(rest) == 3 && rest[0] == "issues" && isNumber(rest[1]) && rest[2] == "comments" && m == http.MethodGet:
		h.listComments(w, number(rest[1]))
	case len(rest) == 3 && rest[0] == "issues" && isNumber(rest[1]) && rest[2] == "comments" && m == http.MethodPost:
		h.createComment(w, r, number(rest[1]))
	case len(rest) == 3 && rest[0] == "issues" && rest[1] == "comments" && isNumber(rest[2]) && m == http.MethodDelete:
		h.deleteComment(w, number(rest[2]))
	case len(rest) == 1 && rest[0] == "releases" && m == http.MethodPost:
		h.createRelease(w, r)
	case len(rest) == 2 && rest[0] == "releases" && isNumber(rest[1]) && m == http.MethodPatch:
		h.updateRelease(w, r, number(rest[1]))
	case len(rest) == 2 && rest[0] == "releases" && isNumber(rest[1]) && m == http.MethodDelete:
		h.deleteRelease(w, number(rest[1]))
	case len(rest) == 3 && rest[0] == "releases" && rest[1] == "tags" && rest[2] != "" && m == http.MethodGet:
		h.getReleaseByTag(w, rest[2])
	case len(rest) == 1 && rest[0] == "pulls" && m == http.MethodGet:
		h.mu.Lock()
		pulls := append([]Pull{}, h.pulls...)
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, pulls)
	default:
		writeJSON(w, http.StatusNotFound, msgNotFound)
	}
}

func (h *Handler) listIssues(w http.ResponseWriter, r *http.Request) {
	state := r.URL.Query().Get("state")
	h.mu.Lock()
	out := []Issue{}
	for _, is := range h.issues {
		if state == "" || state == "all" || is.State == state {
			out = append(out, is)
		}
	}
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) createIssue(w http.ResponseWriter, r *http.Request) {
	fields, ok := readObject(w, r)
	if !ok {
		return
	}
	title, present, ok1 := stringField(fields, "title")
	body, _, ok2 := stringField(fields, "body")
	if !ok1 || !ok2 || !present || title == nil {
		writeJSON(w, http.StatusUnprocessableEntity, msgValidation)
		return
	}
	h.mu.Lock()
	is := Issue{Number: h.nextIssue, Title: *title, State: "open", Body: body}
	h.nextIssue++
	h.issues = append(h.issues, is)
	h.mu.Unlock()
	writeJSON(w, http.StatusCreated, is)
}

func (h *Handler) getIssue(w http.ResponseWriter, n int64) {
	h.mu.Lock()
	i := h.findIssue(n)
	var is Issue
	if i >= 0 {
		is = h.issues[i]
	}
	h.mu.Unlock()
	if i < 0 {
		writeJSON(w, http.StatusNotFound, msgNotFound)
		return
	}
	writeJSON(w, http.StatusOK, is)
}

func (h *Handler) updateIssue(w http.ResponseWriter, r *http.Request, n int64) {
	fields, ok := readObject(w, r)
	if !ok {
		return
	}
	title, hasTitle, ok1 := stringField(fields, "title")
	body, hasBody, ok2 := stringField(fields, "body")
	state, hasState, ok3 := stringField(fields, "state")
	if !ok1 || !ok2 || !ok3 || (hasTitle && title == nil) ||
		(hasState && (state == nil || (*state != "open" && *state != "closed"))) {
		writeJSON(w, http.StatusUnprocessableEntity, msgValidation)
		return
	}
	h.mu.Lock()
	i := h.findIssue(n)
	var is Issue
	if i >= 0 {
		p := &h.issues[i]
		if hasTitle {
			p.Title = *title
		}
		if hasBody {
			p.Body = body
		}
		if hasState {
			p.State = *state
		}
		is = *p
	}
	h.mu.Unlock()
	if i < 0 {
		writeJSON(w, http.StatusNotFound, msgNotFound)
		return
	}
	writeJSON(w, http.StatusOK, is)
}

func (h *Handler) listComments(w http.ResponseWriter, n int64) {
	h.mu.Lock()
	out := []Comment{}
	for _, c := range h.comments {
		if c.Issue == n {
			out = append(out, c)
		}
	}
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) createComment(w http.ResponseWriter, r *http.Request, n int64) {
	fields, ok := readObject(w, r)
	if !ok {
		return
	}
	body, present, ok := stringField(fields, "body")
	if !ok || !present || body == nil {
		writeJSON(w, http.StatusUnprocessableEntity, msgValidation)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	h.mu.Lock()
	c, replay := h.idempotent[key]
	if key == "" || !replay {
		c = Comment{ID: h.nextComment, Body: *body, Issue: n}
		h.nextComment++
		h.comments = append(h.comments, c)
		if key != "" {
			h.idempotent[key] = c
		}
	}
	h.mu.Unlock()
	writeJSON(w, http.StatusCreated, c)
}

func (h *Handler) deleteComment(w http.ResponseWriter, id int64) {
	h.mu.Lock()
	found := false
	for i, c := range h.comments {
		if c.ID == id {
			h.comments = append(h.comments[:i:i], h.comments[i+1:]...)
			found = true
			break
		}
	}
	h.mu.Unlock()
	if !found {
		writeJSON(w, http.StatusNotFound, msgNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) createRelease(w http.ResponseWriter, r *http.Request) {
	fields, ok := readObject(w, r)
	if !ok {
		return
	}
	tag, present, ok1 := stringField(fields, "tag_name")
	name, _, ok2 := stringField(fields, "name")
	body, _, ok3 := stringField(fields, "body")
	if !ok1 || !ok2 || !ok3 || !present || tag == nil {
		writeJSON(w, http.StatusUnprocessableEntity, msgValidation)
		return
	}
	draft := isTrue(fields["draft"])
	h.mu.Lock()
	rel := Release{ID: h.nextRelease, TagName: *tag, Name: name, Body: body, Draft: draft}
	h.nextRelease++
	h.releases = append(h.releases, rel)
	h.mu.Unlock()
	writeJSON(w, http.StatusCreated, rel)
}

func (h *Handler) updateRelease(w http.ResponseWriter, r *http.Request, id int64) {
	fields, ok := readObject(w, r)
	if !ok {
		return
	}
	name, hasName, ok1 := stringField(fields, "name")
	body, hasBody, ok2 := stringField(fields, "body")
	rawDraft, hasDraft := fields["draft"]
	if !ok1 || !ok2 {
		writeJSON(w, http.StatusUnprocessableEntity, msgValidation)
		return
	}
	h.mu.Lock()
	var rel Release
	found := false
	for i := range h.releases {
		if p := &h.releases[i]; p.ID == id {
			if hasName {
				p.Name = name
			}
			if hasBody {
				p.Body = body
			}
			if hasDraft {
				p.Draft = isTrue(rawDraft)
			}
			rel, found = *p, true
			break
		}
	}
	h.mu.Unlock()
	if !found {
		writeJSON(w, http.StatusNotFound, msgNotFound)
		return
	}
	writeJSON(w, http.StatusOK, rel)
}

func (h *Handler) deleteRelease(w http.ResponseWriter, id int64) {
	h.mu.Lock()
	for i, rel := range h.releases {
		if rel.ID == id {
			h.releases = append(h.releases[:i:i], h.releases[i+1:]...)
			break
		}
	}
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) getReleaseByTag(w http.ResponseWriter, tag string) {
	h.mu.Lock()
	var rel Release
	found := false
	for _, r := range h.releases {
		if r.TagName == tag {
			rel, found = r, true
			break
		}
	}
	h.mu.Unlock()
	if !found {
		writeJSON(w, http.StatusNotFound, msgNotFound)
		return
	}
	writeJSON(w, http.StatusOK, rel)
}

// findIssue returns the index of issue n, or -1. Call with h.mu held.
func (h *Handler) findIssue(n int64) int {
	for i, is := range h.issues {
		if is.Number == n {
			return i
		}
	}
	return -1
}

// readObject decodes the request body as one JSON object. On failure it
// answers 400 and returns ok false.
func readObject(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, bool) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	var fields map[string]json.RawMessage
	if err == nil && len(data) <= maxBody {
		err = json.Unmarshal(data, &fields)
	}
	if err != nil || len(data) > maxBody || fields == nil {
		writeJSON(w, http.StatusBadRequest, msgBadJSON)
		return nil, false
	}
	return fields, true
}

// stringField reads an optional string-or-null field. present reports
// whether the key was there; ok is false when it holds another JSON type.
func stringField(fields map[string]json.RawMessage, key string) (v *string, present, ok bool) {
	raw, present := fields[key]
	if !present || string(raw) == "null" {
		return nil, present, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, true, false
	}
	return &s, true, true
}

// isTrue mirrors JavaScript's `value === true`.
func isTrue(raw json.RawMessage) bool { return string(raw) == "true" }

func isNumber(s string) bool {
	if s == "" || len(s) > 18 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// number parses a segment already checked by isNumber.
func number(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// writeJSON writes v as JSON without HTML escaping or a trailing newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"message":"Internal Server Error"}`)
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(status)
	_, _ = w.Write(out)
}
