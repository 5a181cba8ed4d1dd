package serve

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
)

// roundRobin sends each request to the next of bases in turn (replicas
// behind a load balancer), counting what each answered.
type roundRobin struct {
	bases []*url.URL
	next  atomic.Int64
	mu    sync.Mutex
	hits  map[string]int
	base  http.RoundTripper
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	u := rr.bases[int(rr.next.Add(1)-1)%len(rr.bases)]
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
	rr.mu.Lock()
	rr.hits[u.Host]++
	rr.mu.Unlock()
	return rr.base.RoundTrip(r)
}

// sdkClient is the official Go SDK's client, answering elicitations with
// action (and counting them).
func sdkClient(action string, asked *atomic.Int64) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "gateway-test-sdk", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			if !strings.Contains(req.Params.Message, "github__github_create_issue") {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: action, Content: map[string]any{"confirm": action == "accept"}}, nil
		},
	})
}

// TestGoSDKClientBothRevisions drives the gateway with the official Go
// SDK's client on each revision: it agrees 2026-07-28 by default (no
// session) and 2025-11-25 when pinned to it (a session); on both the
// person is asked before a write that needs confirmation and the call runs
// once after the yes.
func TestGoSDKClientBothRevisions(t *testing.T) {
	f := newFleetFixture(t, nil)
	tok := f.turn(fxWriteGrant)
	args := map[string]any{"owner": "octo", "repo": "hello", "title": "From the SDK"}
	for _, c := range []struct{ pin, want string }{{"", "2026-07-28"}, {"2025-11-25", "2025-11-25"}} {
		t.Run("agrees "+c.want, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var asked atomic.Int64
			tr := &mcp.StreamableClientTransport{Endpoint: f.aud, MaxRetries: -1,
				HTTPClient: &http.Client{Transport: &bearerTransport{token: tok, base: f.client.Transport}}}
			cs, err := sdkClient("accept", &asked).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: c.pin})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != c.want {
				t.Fatalf("agreed %s, want %s", v, c.want)
			}
			if (cs.ID() == "") != (c.want == "2026-07-28") {
				t.Errorf("session id %q on %s", cs.ID(), c.want)
			}
			before := f.upstreamCount()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_create_issue", Arguments: args})
			if err != nil || res.IsError {
				t.Fatalf("confirmed call: %v %s", err, textOf(t, res))
			}
			if asked.Load() != 1 || f.upstreamCount() != before+1 {
				t.Errorf("asked %d times, %d upstream requests; want 1 and 1", asked.Load(), f.upstreamCount()-before)
			}
		})
	}
	t.Run("a refusal sends nothing", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var asked atomic.Int64
		tr := &mcp.StreamableClientTransport{Endpoint: f.aud, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: &bearerTransport{token: tok, base: f.client.Transport}}}
		cs, err := sdkClient("decline", &asked).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		before := f.upstreamCount()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_create_issue", Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "confirmation/declined") {
			t.Fatalf("declined call: %v %v", err, res)
		}
		if f.upstreamCount() != before {
			t.Errorf("a declined call reached the upstream")
		}
	})
}

// TestStatelessAcrossReplicas: two gateways that share only keys (the
// yard's JWKS and the request state key; each has its own vault, store and
// memory) answer one 2026-07-28 client's consecutive requests in turn,
// including a confirmation asked by one and answered on the other.
func TestStatelessAcrossReplicas(t *testing.T) {
	stateKey := filepath.Join(t.TempDir(), "state.key")
	if err := os.WriteFile(stateKey, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newFleetFixture(t, &fleetOptions{edit: func(c *Config) { c.RequestStateKeyFile = stateKey }})
	b := newFleetFixture(t, &fleetOptions{noConnect: true, edit: func(c *Config) {
		c.RequestStateKeyFile = stateKey
		c.Auth = auth.Config{Mode: auth.ModeBranchyard, Issuer: fxIssuer, Audience: a.aud, JWKSURI: "file://" + a.jwks, Leeway: auth.DefaultLeeway}
	}})
	tok := a.turn(fxWriteGrant)
	if r := b.do("POST", "/connect/api-key", a.connectToken(), "application/json", `{"connector":"github","api_key":"`+fxUpstream+`"}`, nil); r.status != 200 {
		t.Fatalf("connecting on b: %d %s", r.status, r.body)
	}
	ua, _ := url.Parse(a.base)
	ub, _ := url.Parse(b.base)
	rr := &roundRobin{bases: []*url.URL{ua, ub}, hits: map[string]int{}, base: a.client.Transport}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var asked atomic.Int64
	tr := &mcp.StreamableClientTransport{Endpoint: a.aud, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &bearerTransport{token: tok, base: rr}}}
	cs, err := sdkClient("accept", &asked).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("agreed %s", v)
	}
	for i := 0; i < 3; i++ {
		if lr, err := cs.ListTools(ctx, nil); err != nil || len(lr.Tools) == 0 {
			t.Fatalf("tools/list %d: %v", i, err)
		}
	}
	before := a.upstreamCount() + b.upstreamCount()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_create_issue", Arguments: map[string]any{"owner": "octo", "repo": "hello", "title": "Across"}})
	if err != nil || res.IsError {
		t.Fatalf("confirmed across replicas: %v %v", err, res)
	}
	if n := a.upstreamCount() + b.upstreamCount() - before; asked.Load() != 1 || n != 1 {
		t.Errorf("asked %d, %d upstream requests", asked.Load(), n)
	}
	if rr.hits[ua.Host] < 2 || rr.hits[ub.Host] < 2 {
		t.Errorf("requests per replica: %v", rr.hits)
	}
	if a.g.mcp.SessionCount()+b.g.mcp.SessionCount() != 0 {
		t.Errorf("a stateless client holds sessions")
	}
}

// TestListingsCacheableAndAnnounced: tools/list is private to the caller,
// cacheable for at most ToolsTTL and never past the token's expiry, and a
// reload announces the change to clients of both revisions (2026-07-28
// through subscriptions/listen, 2025-11-25 on the session's stream).
func TestListingsCacheableAndAnnounced(t *testing.T) {
	f := newFleetFixture(t, nil)
	claims := f.claims(fxReadGrant)
	claims["exp"] = time.Now().Unix() + 90 // shorter than mcpdoor.ToolsTTL
	tok := authtest.Mint(f.key, claims)
	a, msg := f.rev2026(tok, 1, "tools/list", nil, nil)
	l := resultOf(t, a, msg)
	ttl, _ := l["ttlMs"].(float64)
	if l["cacheScope"] != "private" || ttl <= 0 || ttl > 90000 {
		t.Errorf("tools/list of a token expiring in 90 s: cacheScope %v ttlMs %v", l["cacheScope"], l["ttlMs"])
	}
	long := f.turn(fxReadGrant)
	a, msg = f.rev2026(long, 2, "tools/list", nil, nil)
	if ttl, _ := resultOf(t, a, msg)["ttlMs"].(float64); ttl != float64(mcpdoor.ToolsTTL/time.Millisecond) {
		t.Errorf("tools/list ttlMs %v, want ToolsTTL", ttl)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	changed := map[string]chan struct{}{"2026-07-28": make(chan struct{}, 4), "2025-11-25": make(chan struct{}, 4)}
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		ch := changed[v]
		client := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { ch <- struct{}{} },
		})
		tr := &mcp.StreamableClientTransport{Endpoint: f.aud, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: &bearerTransport{token: long, base: f.client.Transport}}}
		cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: v})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		defer cs.Close()
		if got := cs.InitializeResult().ProtocolVersion; got != v {
			t.Fatalf("agreed %s, want %s", got, v)
		}
	}
	// The 2025-11-25 client opens its session's stream in the background:
	// reload until each client heard of one (every reload announces).
	heard := map[string]bool{}
	for try := 0; try < 10 && len(heard) < len(changed); try++ {
		if err := f.g.Reload(f.g.Fleet()); err != nil {
			t.Fatal(err)
		}
		for v, ch := range changed {
			select {
			case <-ch:
				heard[v] = true
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	for v := range changed {
		if !heard[v] {
			t.Errorf("%s: no notifications/tools/list_changed after a reload", v)
		}
	}
}
