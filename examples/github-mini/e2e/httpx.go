package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Limits for HTTP calls.
const (
	httpTimeout = 15 * time.Second
	bodyCap     = 8 << 20
)

// mcpProtocolVersion is the version the SDKs offer.
const mcpProtocolVersion = "2025-06-18"

// newHTTPClient returns a loopback client that never follows redirects.
func newHTTPClient() *http.Client {
	return &http.Client{
		Timeout:       httpTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     30 * time.Second,
		},
	}
}

// httpAnswer is one HTTP response, read whole.
type httpAnswer struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request with a per-call timeout and reads the whole answer.
func do(ctx context.Context, hc *http.Client, method, url string, header map[string]string, body []byte) (*httpAnswer, error) {
	cctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(cctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", method, url, unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, bodyCap))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %v", method, url, err)
	}
	return &httpAnswer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

func unwrapURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap()
	}
	return err
}

// bearer returns the Authorization header map for token, plus extra pairs.
func bearer(token string, extra ...string) map[string]string {
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return h
}

// decodeJSON decodes b into v, keeping numbers exact.
func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// errorCode returns error.code of an {"error":{…}} envelope, or "".
func errorCode(body []byte) string {
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil {
		return ""
	}
	return env.Error.Code
}

// brief shortens a body for a detail.
func brief(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// restCall is POST /call/<tool> with the caller's token.
type restCall struct {
	tool  string
	args  any
	stage bool
	key   string // Idempotency-Key; empty: none
}

// callREST sends a REST call and returns the answer (any status).
func callREST(ctx context.Context, hc *http.Client, base, token string, c restCall) (*httpAnswer, error) {
	body := map[string]any{"arguments": c.args}
	if c.stage {
		body["stage"] = true
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	h := bearer(token, "Content-Type", "application/json")
	if c.key != "" {
		h["Idempotency-Key"] = c.key
	}
	return do(ctx, hc, http.MethodPost, base+"/call/"+c.tool, h, b)
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// rpcMessage is one JSON-RPC message.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// decodeRPC finds the answer to request id in an HTTP body that is JSON (one
// message or an array) or an SSE stream.
func decodeRPC(contentType string, body []byte, id int) (*rpcMessage, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	var payloads [][]byte
	if mt == "text/event-stream" {
		payloads = sseData(body)
	} else {
		payloads = [][]byte{body}
	}
	want := strconv.Itoa(id)
	for _, p := range payloads {
		p = bytes.TrimSpace(p)
		var msgs []rpcMessage
		if len(p) > 0 && p[0] == '[' {
			if json.Unmarshal(p, &msgs) != nil {
				continue
			}
		} else {
			var m rpcMessage
			if json.Unmarshal(p, &m) != nil {
				continue
			}
			msgs = []rpcMessage{m}
		}
		for i := range msgs {
			if msgs[i].Method == "" && string(bytes.TrimSpace(msgs[i].ID)) == want {
				return &msgs[i], nil
			}
		}
	}
	return nil, fmt.Errorf("no JSON-RPC answer with id %d in %s", id, brief(body))
}

// sseData splits an SSE stream into its events' data, each event's data
// lines joined with "\n".
func sseData(body []byte) [][]byte {
	var out [][]byte
	var cur []string
	flush := func() {
		if cur != nil {
			out = append(out, []byte(strings.Join(cur, "\n")))
			cur = nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), bodyCap)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "data:"):
			v := strings.TrimPrefix(line, "data:")
			v = strings.TrimPrefix(v, " ")
			cur = append(cur, v)
		}
	}
	flush()
	return out
}

// mcpClient speaks raw JSON-RPC over Streamable HTTP, one session.
type mcpClient struct {
	hc       *http.Client
	url      string
	token    string
	session  string
	protocol string
	nextID   int
}

func newMCP(hc *http.Client, url, token string) *mcpClient {
	return &mcpClient{hc: hc, url: url, token: token, nextID: 1}
}

func (m *mcpClient) headers() map[string]string {
	h := bearer(m.token, "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	if m.session != "" {
		h["Mcp-Session-Id"] = m.session
		h["Mcp-Protocol-Version"] = m.protocol
	}
	return h
}

// post sends one JSON-RPC message.
func (m *mcpClient) post(ctx context.Context, msg any) (*httpAnswer, error) {
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return do(ctx, m.hc, http.MethodPost, m.url, m.headers(), b)
}

// request sends a request and returns its result (a JSON-RPC error is an
// error).
func (m *mcpClient) request(ctx context.Context, method string, params any) (json.RawMessage, *httpAnswer, error) {
	id := m.nextID
	m.nextID++
	ans, err := m.post(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, nil, err
	}
	if ans.status != http.StatusOK {
		return nil, ans, fmt.Errorf("%s answered HTTP %d: %s", method, ans.status, brief(ans.body))
	}
	msg, err := decodeRPC(ans.header.Get("Content-Type"), ans.body, id)
	if err != nil {
		return nil, ans, fmt.Errorf("%s: %v", method, err)
	}
	if msg.Error != nil {
		return nil, ans, fmt.Errorf("%s: JSON-RPC error %d: %s", method, msg.Error.Code, msg.Error.Message)
	}
	return msg.Result, ans, nil
}

// open runs initialize and notifications/initialized.
func (m *mcpClient) open(ctx context.Context) error {
	res, ans, err := m.request(ctx, "initialize", map[string]any{
		"protocolVersion": mcpProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "anvil-e2e", "version": "1"},
	})
	if err != nil {
		return err
	}
	m.session = ans.header.Get("Mcp-Session-Id")
	if m.session == "" {
		return errors.New("initialize answered without an mcp-session-id header")
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(res, &init)
	m.protocol = init.ProtocolVersion
	if m.protocol == "" {
		m.protocol = mcpProtocolVersion
	}
	note, err := m.post(ctx, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if err != nil {
		return err
	}
	if note.status/100 != 2 {
		return fmt.Errorf("notifications/initialized answered HTTP %d: %s", note.status, brief(note.body))
	}
	return nil
}

// close ends the session with DELETE.
func (m *mcpClient) close(ctx context.Context) error {
	if m.session == "" {
		return nil
	}
	ans, err := do(ctx, m.hc, http.MethodDelete, m.url, m.headers(), nil)
	m.session = ""
	if err != nil {
		return err
	}
	if ans.status/100 != 2 {
		return fmt.Errorf("DELETE answered HTTP %d: %s", ans.status, brief(ans.body))
	}
	return nil
}

// toolResult is a tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Meta              struct {
		Effect json.RawMessage `json:"effect"`
	} `json:"_meta"`
}

// text is the first text content item.
func (t *toolResult) text() string {
	for _, c := range t.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// callTool sends tools/call with an optional idempotency key in _meta.
func (m *mcpClient) callTool(ctx context.Context, name string, args any, key string) (*toolResult, error) {
	params := map[string]any{"name": name, "arguments": args}
	if key != "" {
		params["_meta"] = map[string]any{"idempotency_key": key}
	}
	raw, _, err := m.request(ctx, "tools/call", params)
	if err != nil {
		return nil, err
	}
	var tr toolResult
	if err := json.Unmarshal(raw, &tr); err != nil {
		return nil, fmt.Errorf("tools/call result is not a tool result: %v", err)
	}
	return &tr, nil
}

// toolInfo is one tools/list entry.
type toolInfo struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// listTools sends tools/list (following nextCursor).
func (m *mcpClient) listTools(ctx context.Context) ([]toolInfo, error) {
	var all []toolInfo
	cursor := ""
	for page := 0; page < 50; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, _, err := m.request(ctx, "tools/list", params)
		if err != nil {
			return nil, err
		}
		var res struct {
			Tools      []toolInfo `json:"tools"`
			NextCursor string     `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("tools/list result: %v", err)
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			return all, nil
		}
		cursor = res.NextCursor
	}
	return nil, errors.New("tools/list kept paginating")
}

// confirmArgs returns the argument names a tool's input schema requires as
// a boolean const true (Anvil's confirm), which a follow-up call sets.
func confirmArgs(schema json.RawMessage) []string {
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Const *bool  `json:"const"`
			Type  any    `json:"type"`
			Enum  []any  `json:"enum"`
			Ref   string `json:"$ref"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []string
	for _, name := range s.Required {
		p, ok := s.Properties[name]
		if !ok {
			continue
		}
		isTrue := p.Const != nil && *p.Const
		if !isTrue && len(p.Enum) == 1 {
			b, ok := p.Enum[0].(bool)
			isTrue = ok && b
		}
		if isTrue || (name == "confirm" && p.Type == "boolean") {
			out = append(out, name)
		}
	}
	return out
}
