package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/anvil-dev/anvil/internal/idptest"
)

const config = `# a CLI with a loopback redirect, asking for the gateway as its resource
access_token_ttl: 90s
clients:
  - id: cli
    redirect_uris: [http://127.0.0.1:8765/callback]
    resources: [http://127.0.0.1:9/mcp]
users:
  - subject: u-1
    username: ada
    password: s3cret-pw
    groups: [eng]
`

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "idp.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The process prints its issuer first; a client then logs in through the
// Browser (knowing only the issuer) and gets a token with the config's
// TTL and the user's claims. Cancelling (SIGINT) stops it with status 0.
func TestRunServesTheConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	served, stop := context.WithCancel(ctx)
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(served, []string{"-config", writeConfig(t, config)}, outW, &stderr)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("no issuer line: %v", err)
	}
	issuer := strings.TrimSpace(line)
	if !strings.HasPrefix(issuer, "http://127.0.0.1:") {
		t.Fatalf("issuer line %q", line)
	}

	resp, err := http.Get(issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Auth  string `json:"authorization_endpoint"`
		Token string `json:"token_endpoint"`
	}
	err = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &oauth2.Config{
		ClientID:    "cli",
		Endpoint:    oauth2.Endpoint{AuthURL: md.Auth, TokenURL: md.Token, AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: "http://127.0.0.1:8765/callback",
		Scopes:      []string{"openid", "offline_access"},
	}
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", "http://127.0.0.1:9/mcp"))
	browser := &idptest.Browser{Issuer: issuer}
	r, err := browser.Login(ctx, authURL, "ada", "s3cret-pw")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cfg.Exchange(ctx, r.Code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	// The lifetime the provider states in its answer (access_token_ttl
	// 90s, less the moment between issuing the token and answering, which
	// it rounds down), not the time left when this line runs, which a
	// loaded machine stretches.
	ttl, _ := strconv.ParseFloat(fmt.Sprint(tok.Extra("expires_in")), 64)
	if ttl < 85 || ttl > 90 || tok.RefreshToken == "" {
		t.Errorf("token expires_in %v, want 85 to 90 (access_token_ttl 90s); refresh token %t", tok.Extra("expires_in"), tok.RefreshToken != "")
	}

	stop()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "idp: client cli (public)") || !strings.Contains(s, "idp: user ada (sub u-1)") || strings.Contains(s, "s3cret") {
		t.Errorf("stderr %q", s)
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no config":   {nil, "usage: idp -config FILE"},
		"missing":     {[]string{"-config", filepath.Join(t.TempDir(), "none.yaml")}, "no such file"},
		"unknown key": {[]string{"-config", writeConfig(t, "clients:\n  - id: a\n    secrett: x\n")}, "line 3: field secrett not found"},
		"invalid":     {[]string{"-config", writeConfig(t, "clients:\n  - id: a\n  - id: a\n")}, `clients[1]: id "a" is used twice`},
		"public addr": {[]string{"-config", writeConfig(t, "users: []\n"), "-addr", "0.0.0.0:0"}, "not a loopback"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and %q", name, code, stdout.String(), stderr.String(), tc.want)
		}
	}
}

// idp browse plays the browser: it logs in at the authorization URL, GETs
// the client's redirect URI with the code and state, and prints the
// client's answer; a wrong password or a refusing client exits 1.
func TestBrowse(t *testing.T) {
	var got string
	client := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query().Get("state")
		if r.URL.Query().Get("code") == "" {
			http.Error(w, "no code", http.StatusBadRequest)
			return
		}
		io.WriteString(w, "Connected.\n")
	}))
	defer client.Close()
	p := idptest.Start(t, idptest.Options{
		Clients: []idptest.Client{{ID: "cli", RedirectURIs: []string{client.URL + "/callback"}}},
		Users:   []idptest.User{{Subject: "u-1", Username: "ada", Password: "pw"}},
	})
	cfg := &oauth2.Config{ClientID: "cli", RedirectURL: client.URL + "/callback", Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: p.Issuer() + "/authorize", TokenURL: p.Issuer() + "/oauth/token"}}
	authURL := cfg.AuthCodeURL("st-1", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"browse", "-user", "ada", "-password", "pw", authURL}, &stdout, &stderr); code != 0 ||
		stdout.String() != "Connected.\n" || got != "st-1" {
		t.Errorf("browse: exit %d, stdout %q, stderr %q, state %q", code, stdout.String(), stderr.String(), got)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"browse", "-user", "ada", "-password", "wrong", authURL}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "login refused") {
		t.Errorf("wrong password: exit %d, stderr %q", code, stderr.String())
	}
	if code := run(context.Background(), []string{"browse", "-user", "ada", authURL}, &stdout, &stderr); code != 2 {
		t.Errorf("no password: exit %d", code)
	}
}
