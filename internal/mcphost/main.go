// Command mcphost is a scripted MCP host for walkthroughs and tests of
// inbound auth mode oidc (docs/identity.md): the MCP Go SDK's client with
// its OAuth support, as Claude Desktop, VS Code or any MCP host runs it,
// with the person's browser played by internal/idptest's programmatic
// browser against the test OpenID provider (cmd/idp).
//
//	mcphost call  -server URL -client ID -user NAME -password PW TOOL [ARGS_JSON]
//	mcphost list  -server URL -client ID -user NAME -password PW
//	mcphost login -issuer URL -client ID -user NAME -password PW -resource URL -scope "a b"
//
// call and list connect to the gateway with no token: the 401's
// resource_metadata leads to the protected resource metadata, then the
// provider's metadata, then authorization code with PKCE (the gateway as
// the RFC 8707 resource) and the token; a step-up (403 insufficient_scope)
// logs in again for the wider scope and retries. Each login prints one
// line, "login N: scope …". call prints the tool's result (its structured
// content, or its text) as one line; list the tools' names. login prints
// an access token for the resource (for anvil connect --token-file).
// The client is pre-registered (the provider has no dynamic registration).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/anvil-dev/anvil/internal/idptest"
)

// redirect is the loopback redirect URI the host registers; the browser
// stops there, so nothing listens on it.
const redirect = "http://127.0.0.1:7777/callback"

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: mcphost call|list|login [flags]")
		return 2
	}
	fs := flag.NewFlagSet("mcphost "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "", "the gateway's /mcp URL (call, list)")
	issuer := fs.String("issuer", "", "the provider's issuer (login)")
	resource := fs.String("resource", "", "the RFC 8707 resource to ask a token for (login)")
	scope := fs.String("scope", "", "space-separated scopes (login)")
	client := fs.String("client", "", "the host's client ID, registered with the provider")
	user := fs.String("user", "", "the person's username")
	password := fs.String("password", "", "the person's password")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	var err error
	switch args[0] {
	case "call", "list":
		err = connect(ctx, args[0], *server, *client, *user, *password, fs.Args(), stdout)
	case "login":
		err = login(ctx, *issuer, *client, *user, *password, *resource, *scope, stdout)
	default:
		fmt.Fprintln(stderr, "usage: mcphost call|list|login [flags]")
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "mcphost:", err)
		return 1
	}
	return 0
}

// connect runs call or list through the SDK's OAuth client.
func connect(ctx context.Context, verb, server, clientID, user, password string, rest []string, stdout io.Writer) error {
	logins := 0
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: clientID},
		RedirectURL:         redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, err := url.Parse(args.URL)
			if err != nil {
				return nil, err
			}
			logins++
			// The SDK's step-up joins the scopes in no fixed order; the
			// request is the same set either way, so it is printed sorted.
			scopes := strings.Fields(u.Query().Get("scope"))
			sort.Strings(scopes)
			fmt.Fprintf(stdout, "login %d: scope %s\n", logins, strings.Join(scopes, " "))
			b := &idptest.Browser{Issuer: u.Scheme + "://" + u.Host}
			r, err := b.Login(ctx, args.URL, user, password)
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: r.Code, State: r.State}, nil
		},
	})
	if err != nil {
		return err
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "mcphost", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: server, OAuthHandler: h, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	if verb == "list" {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		for _, t := range res.Tools {
			fmt.Fprintln(stdout, t.Name)
		}
		return nil
	}
	if len(rest) == 0 || len(rest) > 2 {
		return errors.New("call takes a tool name and, optionally, its arguments as a JSON object")
	}
	var arguments map[string]any
	if len(rest) == 2 {
		if err := json.Unmarshal([]byte(rest[1]), &arguments); err != nil {
			return fmt.Errorf("arguments: %w", err)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: rest[0], Arguments: arguments})
	if err != nil {
		return err
	}
	var out []byte
	if res.StructuredContent != nil {
		out, _ = json.Marshal(res.StructuredContent)
	} else {
		var text []string
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		out = []byte(strings.Join(text, "\n"))
	}
	if res.IsError {
		return fmt.Errorf("the tool answered an error: %s", out)
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return nil
}

// login runs one authorization code flow with PKCE against the provider's
// discovered endpoints and prints the access token.
func login(ctx context.Context, issuer, clientID, user, password, resource, scope string, stdout io.Writer) error {
	meta, err := auth.GetAuthServerMetadata(ctx, issuer, nil)
	if err != nil || meta == nil {
		return fmt.Errorf("the provider's metadata: %v", err)
	}
	cfg := &oauth2.Config{ClientID: clientID, RedirectURL: redirect, Scopes: strings.Fields(scope),
		Endpoint: oauth2.Endpoint{AuthURL: meta.AuthorizationEndpoint, TokenURL: meta.TokenEndpoint, AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("walkthrough", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	r, err := (&idptest.Browser{Issuer: issuer}).Login(ctx, authURL, user, password)
	if err != nil {
		return err
	}
	tok, err := cfg.Exchange(ctx, r.Code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok.AccessToken)
	return nil
}
