package replicatest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// authServer is a minimal OAuth authorization server: /authorize sends the
// browser back with a code, /token exchanges it (an access token that
// expires within the gateway's refresh skew, so the next calls refresh it)
// and refreshes (an hour-long token), counting refreshes. Its API accepts
// only the newest access token.
type authServer struct {
	URL       string
	APIURL    string
	refreshes atomic.Int32
	mu        sync.Mutex
	current   string
	n         int
}

func newAuthServer(t *testing.T) *authServer {
	a := &authServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("state") == "" {
			http.Error(w, "bad request", 400)
			return
		}
		u := q.Get("redirect_uri") + "?" + url.Values{"code": {"the-code"}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, u, http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		a.mu.Lock()
		defer a.mu.Unlock()
		expires := 30 // inside the refresh skew: the next call refreshes
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			if r.PostForm.Get("code") != "the-code" || r.PostForm.Get("code_verifier") == "" {
				http.Error(w, `{"error":"invalid_grant"}`, 400)
				return
			}
		case "refresh_token":
			if r.PostForm.Get("refresh_token") != "rt" {
				http.Error(w, `{"error":"invalid_grant"}`, 400)
				return
			}
			a.refreshes.Add(1)
			expires = 3600
		default:
			http.Error(w, `{"error":"unsupported_grant_type"}`, 400)
			return
		}
		a.n++
		a.current = fmt.Sprintf("at-%d", a.n)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":%d,"refresh_token":"rt"}`, a.current, expires)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		ok := r.Header.Get("Authorization") == "Bearer "+a.current && a.current != ""
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(401)
			_, _ = io.WriteString(w, `{"message":"bad token"}`)
			return
		}
		_, _ = io.WriteString(w, `[]`)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	a.URL, a.APIURL = ts.URL, ts.URL
	return a
}

// trackerBundle turns the github bundle into "tracker", connected with
// OAuth against as.
func trackerBundle(doc *air.Document, as *authServer) {
	doc.Service.ID = "tracker"
	doc.Service.Servers = []air.Server{{URL: as.APIURL}}
	doc.Service.Auth = air.Auth{Type: air.AuthOAuth2AuthorizationCode, Scheme: "oauth", Scopes: []string{"issues"},
		Provider: &air.Provider{AuthorizationEndpoint: as.URL + "/authorize", TokenEndpoint: as.URL + "/token"}}
	for i := range doc.Operations {
		doc.Operations[i].Auth = nil
	}
}

func oauthSuite(t *testing.T, n int, dsn string) {
	t.Run("OAuth started on one replica completes on another; an expiring token is refreshed once for 50 calls", func(t *testing.T) {
		as := newAuthServer(t)
		c := newClusterWith(t, n, dsn, func(doc *air.Document) { trackerBundle(doc, as) }, map[string]string{
			"ANVIL_CONNECT_TRACKER_CLIENT_ID":     "client",
			"ANVIL_CONNECT_TRACKER_CLIENT_SECRET": "secret",
		})
		a := c.do(c.backends[0], "POST", "/connect/start", c.connectToken(), `{"connector":"tracker"}`, nil)
		if a.status != 200 {
			t.Fatalf("/connect/start on A: %d %s", a.status, a.body)
		}
		var started struct{ URL string }
		if err := json.Unmarshal([]byte(a.body), &started); err != nil {
			t.Fatal(err)
		}
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.Get(started.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if !strings.HasPrefix(loc, c.base+"/connect/callback?") {
			t.Fatalf("redirected to %q", loc)
		}
		b := c.do(c.backends[len(c.backends)-1], "GET", strings.TrimPrefix(loc, c.base), "", "", nil)
		if b.status != 200 || !strings.HasPrefix(b.body, "Connected tracker") {
			t.Fatalf("callback on B: %d %s", b.status, b.body)
		}
		// The state is single use on every replica.
		if again := c.do(c.backends[0], "GET", strings.TrimPrefix(loc, c.base), "", "", nil); again.status != 400 {
			t.Errorf("a reused state: %d %s", again.status, again.body)
		}

		tok := c.token(map[string]any{"by_branch": "main", "by_turn": "1",
			"by_grants": []any{map[string]any{"connector": "tracker", "operations": []any{"*"}, "mode": "read"}}})
		const calls = 50
		statuses := make([]int, calls)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = c.do(c.base, "POST", "/call/tracker__github_list_issue", tok, `{"arguments":{"owner":"o","repo":"r"}}`, nil).status
			}()
		}
		wg.Wait()
		if got := as.refreshes.Load(); got != 1 {
			t.Errorf("the token endpoint saw %d refreshes, want exactly 1", got)
		}
		for i, s := range statuses {
			if s != 200 {
				t.Fatalf("call %d answered %d", i, s)
			}
		}
	})
}
