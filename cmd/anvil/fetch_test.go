package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
)

// specServer serves github-mini's description on loopback at /openapi.yaml,
// plus the misbehaving answers the fetch must refuse.
func specServer(t *testing.T, other string) *httptest.Server {
	t.Helper()
	spec, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/openapi.yaml", func(w http.ResponseWriter, r *http.Request) { w.Write(spec) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/openapi.yaml", http.StatusFound) })
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other+"/openapi.yaml", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("# padding\n", 1000)))
	})
	// /slow never finishes its answer: only the client's fetch timeout
	// ends the request (the server's cleanup releases it otherwise).
	release := make(chan struct{})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("openapi: 3.0.3\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close, which waits for the handler
	return srv
}

// TestCompileURL: a description given by URL is fetched, snapshotted like
// a file (--source compiles it again) and compiled; a same-host redirect
// is followed.
func TestCompileURL(t *testing.T) {
	srv := specServer(t, "")
	root := t.TempDir()
	for _, p := range []string{"/openapi.yaml", "/moved"} {
		out := filepath.Join(t.TempDir(), "gh")
		code, stdout, stderr := runCLI(t, "", "compile", srv.URL+p, "--manifest", exampleManifest, "--out", out, "--root", root)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", p, code, stdout, stderr)
		}
		if !strings.Contains(stdout, "Compiled 12 operations from "+srv.URL+p) {
			t.Errorf("summary: %s", stdout)
		}
		doc, err := air.Load(out)
		if err != nil || doc.Service.ID != "github" {
			t.Fatalf("bundle: %v", err)
		}
		i := strings.Index(stdout, "compile it again with --source ")
		if i < 0 {
			t.Fatalf("no snapshot id: %s", stdout)
		}
		id := strings.TrimSuffix(strings.Fields(stdout[i+len("compile it again with --source "):])[0], ")")
		srv.Close() // the snapshot needs no network
		code, _, stderr = runCLI(t, "", "compile", "--source", id, "--manifest", exampleManifest, "--out", filepath.Join(t.TempDir(), "again"), "--root", root)
		if code != 0 {
			t.Fatalf("--source %s: %s", id, stderr)
		}
		srv = specServer(t, "")
	}
}

func TestCompileURLRefusals(t *testing.T) {
	other := specServer(t, "")
	srv := specServer(t, other.URL)
	savedLimit, savedTimeout := fetchLimit, fetchTimeout
	t.Cleanup(func() { fetchLimit, fetchTimeout = savedLimit, savedTimeout })
	fetchLimit, fetchTimeout = 5000, 300*time.Millisecond
	for _, c := range []struct{ url, want string }{
		{srv.URL + "/elsewhere", "another host"},
		{srv.URL + "/big", "over the 5000-byte limit"},
		{srv.URL + "/slow", "no complete answer within 300ms"},
		{srv.URL + "/missing", "404"},
		{"http://user:secret@" + strings.TrimPrefix(srv.URL, "http://") + "/openapi.yaml", "credentials"},
	} {
		root := t.TempDir()
		code, _, stderr := runCLI(t, "", "compile", c.url, "--out", filepath.Join(t.TempDir(), "b"), "--root", root)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", c.url, code, stderr, c.want)
		}
		if strings.Contains(stderr, "secret") {
			t.Errorf("%s: the message repeats the password", c.url)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 0 {
			t.Errorf("%s: a refused fetch wrote %d entries under the root", c.url, len(entries))
		}
	}
}

// TestInitURL: anvil init reads a description by URL too.
func TestInitURL(t *testing.T) {
	srv := specServer(t, "")
	out := filepath.Join(t.TempDir(), "anvil.yaml")
	if code, _, stderr := runCLI(t, "", "init", srv.URL+"/openapi.yaml", "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), "listIssues:") || !strings.Contains(string(b), "from openapi.yaml") {
		t.Errorf("%s", b)
	}
}

// TestURLDiagnosticsNameTheURL: diagnostics of a description given by URL
// name the URL (without its query), not the temporary file it was fetched
// to, in text and JSON, for compile and init.
func TestURLDiagnosticsNameTheURL(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/bad.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("openapi: 3.0.3\ninfo: {title: T, version: \"1\"}\npaths:\n  /x:\n    get:\n      responses: {\"200\": {description: ok}}\n      parameters: [{name: q, in: nowhere}]\n"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	raw := srv.URL + "/bad.yaml?sig=secret-signature"
	shown := srv.URL + "/bad.yaml?…"
	for _, args := range [][]string{
		{"compile", raw, "--out", filepath.Join(t.TempDir(), "b"), "--root", t.TempDir()},
		{"compile", raw, "--out", filepath.Join(t.TempDir(), "b"), "--root", t.TempDir(), "--format", "json"},
		{"init", raw, "--out", filepath.Join(t.TempDir(), "anvil.yaml")},
	} {
		_, stdout, stderr := runCLI(t, "", args...)
		out := stdout + stderr
		if !(strings.Contains(out, shown+":") || strings.Contains(out, `"`+shown+`"`)) || strings.Contains(out, os.TempDir()+string(filepath.Separator)+"anvil-fetch") ||
			strings.Contains(out, "secret-signature") {
			t.Errorf("%v: the diagnostics do not name the URL:\n%s", args, out)
		}
	}
}
