package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/air"
)

func connectCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "connect",
		Usage:     "connect a person's account to a connector through the gateway",
		ArgsUsage: "<workspace> <connector>",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "account", Usage: "account name (default: default)"},
			&cli.StringFlag{Name: "gateway", Usage: "the gateway's /mcp URL (default $ANVIL_GATEWAY_URL)"},
			&cli.StringFlag{Name: "token-file", Usage: "the person's connect token (default $ANVIL_GATEWAY_TOKEN_FILE); not needed when the gateway's auth mode is none"},
			&cli.BoolFlag{Name: "open", Usage: "open the authorization URL in a browser"},
			&cli.BoolFlag{Name: "api-key-stdin", Usage: "read the key of a key connector from stdin"},
			&cli.BoolFlag{Name: "no-wait", Usage: "OAuth: print the authorization URL and return at once instead of waiting for the login to complete"},
			&cli.DurationFlag{Name: "timeout", Value: defaultConnectWait, Usage: "OAuth: how long to wait for the login to complete (at most until the sign-in link expires)"},
		},
		Action: func(c *cli.Context) error { return runConnect(e, c) },
	}
}

// workspaceConnectors lists the folded connector ids of a workspace's bundles.
func workspaceConnectors(ws string) ([]string, error) {
	dirs, err := air.Discover(ws)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, d := range dirs {
		rel, err := filepath.Rel(ws, d)
		if err != nil {
			return nil, err
		}
		ids = append(ids, air.FoldConnectorID(rel))
	}
	sort.Strings(ids)
	return ids, nil
}

func runConnect(e *env, c *cli.Context) error {
	if c.NArg() != 2 {
		return fail(1, "connect takes a workspace and a connector (usage: anvil connect <workspace> <connector> [--account name])")
	}
	ws, connector := c.Args().Get(0), c.Args().Get(1)
	ids, err := workspaceConnectors(ws)
	if err != nil {
		return fail(1, "cannot read the workspace %s: %v", ws, err)
	}
	found := false
	for _, id := range ids {
		if id == connector {
			found = true
		}
	}
	if !found {
		if len(ids) == 0 {
			return fail(1, "no connector '%s' in %s (no bundles found).", connector, ws)
		}
		return fail(1, "no connector '%s' in %s (it serves: %s).", connector, ws, strings.Join(ids, ", "))
	}
	gw := c.String("gateway")
	if gw == "" {
		gw = e.getenv("ANVIL_GATEWAY_URL")
	}
	gu, err := url.Parse(gw)
	if gw == "" || err != nil || (gu.Scheme != "http" && gu.Scheme != "https") || gu.Host == "" || gu.User != nil {
		return fail(1, "the gateway URL must be an http(s) URL without credentials (set --gateway or ANVIL_GATEWAY_URL)")
	}
	tokenFile := c.String("token-file")
	if tokenFile == "" {
		tokenFile = e.getenv("ANVIL_GATEWAY_TOKEN_FILE")
	}
	// Without a token file the routes are asked without a bearer: a gateway
	// in auth mode none takes that, and one in Branchyard mode answers 401.
	token := ""
	if tokenFile != "" {
		raw, err := os.ReadFile(tokenFile)
		token = strings.TrimSpace(string(raw))
		if err != nil || token == "" {
			return fail(4, "the connect token file %s is missing or empty", tokenFile)
		}
	}
	refused := func(status int, answer map[string]any) error {
		if status == http.StatusUnauthorized && token == "" {
			return fail(4, "the gateway wants a connect token (it verifies Branchyard tokens): pass --token-file or set ANVIL_GATEWAY_TOKEN_FILE (anvil token mint --purpose connect makes one)")
		}
		return refusal(status, answer)
	}
	account := c.String("account")
	body := map[string]string{"connector": connector}
	if account != "" {
		body["account"] = account
	}
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// A gateway started a moment ago (anvil serve mcp … &) may not listen
	// yet: wait a little for it rather than fail at once.
	waitForGateway(e, client, gu.ResolveReference(&url.URL{Path: "/healthz"}).String(), gatewayStartWait)
	// What the person's connection looked like before: the login is
	// complete when the gateway stores a new one (see loginWait).
	before, _ := connectionOf(client, gu.ResolveReference(&url.URL{Path: "/connect/status"}).String(), token, connector, cmp.Or(account, "default"))
	status, answer, err := postJSON(client, gu.ResolveReference(&url.URL{Path: "/connect/start"}).String(), token, body)
	if err != nil {
		return fail(7, "the gateway could not be reached")
	}
	if status != http.StatusOK {
		return refused(status, answer)
	}
	switch answer["kind"] {
	case "oauth":
		link, _ := answer["url"].(string)
		fmt.Fprintln(e.stdout, link)
		fmt.Fprintf(e.stderr, "anvil: open this URL in a browser to connect %s; the gateway stores the connection when the provider sends you back.\n", connector)
		if c.Bool("open") {
			if err := openBrowser(link); err != nil {
				fmt.Fprintf(e.stderr, "anvil: could not open a browser: %v\n", err)
			}
		}
		if c.Bool("no-wait") {
			return nil
		}
		w := &loginWait{e: e, client: client, status: gu.ResolveReference(&url.URL{Path: "/connect/status"}).String(), token: token,
			connector: connector, account: cmp.Or(account, "default"), before: before, poll: connectPoll}
		deadline := time.Now().Add(c.Duration("timeout"))
		if exp, err := time.Parse(time.RFC3339Nano, fmt.Sprint(answer["expires_at"])); err == nil && exp.Before(deadline) {
			deadline = exp
		}
		return w.wait(c.Context, deadline)
	case "static":
		if !c.Bool("api-key-stdin") {
			return fail(1, "%s is connected with a key: pipe it in with --api-key-stdin (for example: printf '%%s\\n' \"$KEY\" | anvil connect %s %s --api-key-stdin)", connector, ws, connector)
		}
		keyBytes, err := io.ReadAll(io.LimitReader(e.stdin, 1<<20))
		key := strings.TrimSpace(string(keyBytes))
		if err != nil || key == "" {
			return fail(1, "no key on stdin")
		}
		body["api_key"] = key
		submit := "/connect/api-key"
		status, answer, err := postJSON(client, gu.ResolveReference(&url.URL{Path: submit}).String(), token, body)
		if err != nil {
			return fail(7, "the gateway could not be reached")
		}
		if status != http.StatusOK {
			return refused(status, answer)
		}
		acct, _ := answer["account"].(string)
		if acct == "" {
			acct = "default"
		}
		fmt.Fprintf(e.stdout, "Connected %s (account %s).\n", connector, acct)
		return nil
	}
	return fail(1, "the gateway answered /connect/start with an unknown kind")
}

// refusal is the error for a non-200 answer of a connect route.
func refusal(status int, answer map[string]any) error {
	code, msg := "", ""
	if e, ok := answer["error"].(map[string]any); ok {
		code, _ = e["code"].(string)
		msg, _ = e["message"].(string)
	}
	exit := 1
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		exit = 4
	}
	return fail(exit, "the gateway refused (%d %s): %s", status, code, msg)
}

func postJSON(client *http.Client, u, token string, body any) (int, map[string]any, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var answer map[string]any
	_ = json.Unmarshal(raw, &answer)
	return resp.StatusCode, answer, nil
}

func openBrowser(link string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", link)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", link)
	default:
		cmd = exec.Command("xdg-open", link)
	}
	return cmd.Start()
}

// defaultConnectWait is how long anvil connect waits for an OAuth login by
// default: a started flow's lifetime (runtime/connect FlowTTL).
const defaultConnectWait = 10 * time.Minute

// connectPoll is how often anvil connect asks /connect/status whether the
// login completed.
const connectPoll = time.Second

// connectProgress is how often a waiting anvil connect says it still waits.
const connectProgress = 30 * time.Second

// statusEntry is one connection of GET /connect/status.
type statusEntry struct {
	Connector string `json:"connector"`
	Account   string `json:"account"`
	Kind      string `json:"kind"`
	Status    string `json:"status"`
	Scope     string `json:"scope"`
	UpdatedAt string `json:"updatedAt"`
}

// connectionOf reads the person's connection for connector and account from
// /connect/status: nil when there is none, and the answer's HTTP status.
func connectionOf(client *http.Client, statusURL, token, connector, account string) (*statusEntry, int) {
	req, err := http.NewRequest(http.MethodGet, statusURL, nil)
	if err != nil {
		return nil, 0
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0
	}
	defer resp.Body.Close()
	var answer struct {
		Connections []statusEntry `json:"connections"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&answer) != nil {
		return nil, resp.StatusCode
	}
	for i := range answer.Connections {
		if c := &answer.Connections[i]; c.Connector == connector && c.Account == account {
			return c, resp.StatusCode
		}
	}
	return nil, resp.StatusCode
}

// loginWait polls /connect/status until the gateway stores the connection
// an OAuth login makes: one for the connector and account, active, that
// differs from before (the connection before the flow started, if any).
type loginWait struct {
	e                  *env
	client             *http.Client
	status, token      string
	connector, account string
	before             *statusEntry
	poll               time.Duration
}

// wait polls until the login completes (exit 0), the deadline passes, the
// gateway refuses the token (a connect token lives ten minutes) or ctx
// ends, printing a progress line every connectProgress.
func (w *loginWait) wait(ctx context.Context, deadline time.Time) error {
	start := time.Now()
	fmt.Fprintf(w.e.stderr, "anvil: waiting for the login to complete (until %s; --no-wait returns at once)...\n", deadline.Format("15:04:05"))
	tick := time.NewTicker(w.poll)
	defer tick.Stop()
	next := start.Add(connectProgress)
	for {
		select {
		case <-ctx.Done():
			return fail(1, "stopped waiting for the login of %s; the connection is stored if the login completes anyway (anvil connect ... --no-wait does not wait)", w.connector)
		case now := <-tick.C:
			c, code := connectionOf(w.client, w.status, w.token, w.connector, w.account)
			switch {
			case code == http.StatusUnauthorized || code == http.StatusForbidden:
				return fail(4, "the gateway no longer accepts the connect token (%d) while waiting for the login; check /connect/status with a new one", code)
			case c != nil && c.Status == "active" && (w.before == nil || c.UpdatedAt != w.before.UpdatedAt):
				fmt.Fprintf(w.e.stdout, "Connected %s (account %s).\n", w.connector, w.account)
				if c.Scope != "" {
					fmt.Fprintf(w.e.stderr, "anvil: the provider granted: %s\n", c.Scope)
				}
				return nil
			case !now.Before(deadline):
				return fail(1, "the login of %s did not complete by %s (the sign-in link expires with it); run anvil connect again", w.connector, deadline.Format("15:04:05"))
			case !now.Before(next):
				fmt.Fprintf(w.e.stderr, "anvil: still waiting for the login (%s so far)...\n", now.Sub(start).Round(time.Second))
				next = now.Add(connectProgress)
			}
		}
	}
}

// gatewayStartWait is how long anvil connect waits for a gateway that does
// not answer yet (a variable: tests shorten it).
var gatewayStartWait = 15 * time.Second

// waitForGateway polls the gateway's /healthz until it answers or wait has
// passed, saying once that it waits. It returns either way: the request
// that follows reports an unreachable gateway.
func waitForGateway(e *env, client *http.Client, healthz string, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for said := false; ; {
		resp, err := client.Get(healthz)
		if err == nil {
			resp.Body.Close()
			return
		}
		if !time.Now().Add(200 * time.Millisecond).Before(deadline) {
			return
		}
		if !said {
			fmt.Fprintf(e.stderr, "anvil: waiting for the gateway to answer (up to %s)...\n", wait)
			said = true
		}
		time.Sleep(200 * time.Millisecond)
	}
}
