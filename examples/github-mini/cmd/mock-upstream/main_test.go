package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// build compiles this command into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "mock-upstream")
	out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func get(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestBinary(t *testing.T) {
	bin := build(t)
	cmd := exec.Command(bin, "--port", "0", "--token", "e2e-upstream-pat")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	lineCh := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lineCh <- line
	}()
	var line string
	select {
	case line = <-lineCh:
	case <-time.After(20 * time.Second):
		t.Fatal("no URL line")
	}
	var got struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil || !strings.HasPrefix(got.URL, "http://127.0.0.1:") {
		t.Fatalf("line %q: %v", line, err)
	}
	if want := `{"url":"` + got.URL + `"}` + "\n"; line != want {
		t.Fatalf("line %q, want %q", line, want)
	}
	if code, body := get(t, got.URL+"/repos/octo/hello/pulls", "Bearer e2e-upstream-pat"); code != 200 || !strings.Contains(body, "Fix the first issue") {
		t.Fatalf("pulls = %d %s", code, body)
	}
	if code, _ := get(t, got.URL+"/repos/octo/hello/pulls", ""); code != 401 {
		t.Fatalf("no token = %d", code)
	}
	if code, body := get(t, got.URL+"/__requests", ""); code != 200 || strings.Count(body, `"method"`) != 2 {
		t.Fatalf("/__requests = %d %s", code, body)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running after SIGTERM")
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--port", "x"},
		{"--port", "70000"},
		{"--bogus"},
		{"extra"},
		{"--token"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 || !strings.Contains(errb.String(), "usage: mock-upstream") || out.Len() != 0 {
			t.Errorf("%q: code %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
	}
}

func TestRunInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"--host", "127.0.0.1"}, pw, io.Discard) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ URL string }
	json.Unmarshal([]byte(line), &got)
	if code, _ := get(t, got.URL+"/repos/o/r/issues/2", ""); code != 200 {
		t.Fatalf("no-token server refused: %d", code)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
}
