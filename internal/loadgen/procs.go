package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// audience is the gateways' configured token audience (both gateways take
// the same tokens).
const audience = "http://127.0.0.1/mcp"

// stack is the set of servers a run measures, by base URL.
type stack struct {
	mock, proxy, gateway, generated string
	stop                            func()
}

// onStop adds f to what stop does (last added, first run).
func (st *stack) onStop(f func()) {
	prev := st.stop
	st.stop = func() {
		f()
		if prev != nil {
			prev()
		}
	}
}

// procOptions selects the process mode: the mock and the bare proxy run as
// children of this program, the generic gateway is the anvil binary (anvil
// serve mcp <ws> --fleet --http <port>) and the generated one the binary
// built from gen/github-mini, each with the environment a user would give
// it. That is how they are deployed, and it keeps each one's scheduler and
// garbage collector to itself.
type procOptions struct {
	anvil, generated string
}

// startInProcess serves the bare proxy, the generic gateway and the
// generated one (generated.go) in this process.
func startInProcess(st *stack, cfg serve.Config, ws, generatedAudit string, conns int) error {
	mockURL, _ := url.Parse(st.mock)
	base, stop, err := serveHandler(bareProxy(mockURL, conns))
	if err != nil {
		return err
	}
	st.proxy = base
	st.onStop(stop)

	f, err := fleet.Load(ws)
	if err != nil {
		return err
	}
	if st.gateway, stop, err = serveGateway(cfg, f); err != nil {
		return err
	}
	st.onStop(stop)

	gbase, gstop, err := startGenerated(cfg, st.mock, generatedAudit)
	if err != nil {
		return fmt.Errorf("the generated gateway: %w", err)
	}
	st.generated = gbase
	st.onStop(gstop)
	return nil
}

// serveGateway serves the fleet f in this process with cfg on a free
// loopback port; it returns the base URL and a stop function.
func serveGateway(cfg serve.Config, f *fleet.Fleet) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	g, err := serve.NewGateway(cfg, f, nil)
	if err != nil {
		ln.Close()
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { _ = g.Serve(ctx, ln); close(served) }()
	return "http://" + ln.Addr().String(), func() { cancel(); <-served }, nil
}

// bareProxy is the bare httputil.ReverseProxy in front of the mock (a tuned
// transport, nothing else). GET requests go through as they are. A POST —
// the very request a gateway gets, /call/<tool> or an MCP tools/call with
// the turn token and a JSON body — is mapped by the Director to the same
// upstream GET with the upstream token: the least any credential-holding
// hop does, with no token check, grant, vault or audit.
func bareProxy(target *url.URL, conns int) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = tunedTransport(conns)
	direct := rp.Director
	rp.Director = func(r *http.Request) {
		direct(r)
		if r.Method == http.MethodPost {
			r.Method, r.Body, r.ContentLength = http.MethodGet, nil, 0
			r.URL.Path, r.URL.RawPath = upstreamPath, ""
			r.Header = http.Header{"Authorization": {"Bearer " + upstreamPAT}, "Accept": {"application/json"}}
		}
	}
	return rp
}

// serveHandler serves h on a loopback port.
func serveHandler(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// startProcesses starts the bare proxy as a child and the two gateway
// binaries, each on its own port, and waits until they answer /healthz.
func startProcesses(st *stack, o *procOptions, cfg serve.Config, ws, generatedAudit string) error {
	var err error
	if st.proxy, err = startChild(st, "proxy", st.mock); err != nil {
		return fmt.Errorf("the bare proxy: %w", err)
	}
	env := gatewayEnv(cfg)
	if st.gateway, err = startGateway(st, o.anvil, ws, append(env, "ANVIL_AUDIT_FILE="+cfg.AuditFile)); err != nil {
		return fmt.Errorf("%s: %w", o.anvil, err)
	}
	genEnv := append(env, "ANVIL_AUDIT_FILE="+generatedAudit, fleet.UpstreamURLEnv("github")+"="+st.mock)
	if st.generated, err = startGateway(st, o.generated, ws, genEnv); err != nil {
		return fmt.Errorf("%s (make load builds it from gen/github-mini): %w", o.generated, err)
	}
	return nil
}

// gatewayEnv is cfg as a gateway process's environment (without the audit
// file, which each gateway has its own of).
func gatewayEnv(cfg serve.Config) []string {
	return []string{
		"ANVIL_INBOUND_AUTH_MODE=branchyard",
		"ANVIL_INBOUND_ISSUER=" + cfg.Auth.Issuer,
		"ANVIL_INBOUND_AUDIENCE=" + cfg.Auth.Audience,
		"ANVIL_INBOUND_JWKS_URI=" + cfg.Auth.JWKSURI,
		"ANVIL_VAULT_KEY_FILE=" + cfg.VaultKeyFile,
		"ANVIL_VAULT_DIR=" + cfg.VaultDir,
		"ANVIL_ALLOWED_HOSTS=" + cfg.AllowedHosts,
	}
}

// startGateway runs bin serve mcp <ws> --fleet --http <port> and waits for
// its /healthz.
func startGateway(st *stack, bin, ws string, env []string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port for --http
	if err != nil {
		return "", err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "serve", "mcp", ws, "--fleet", "--http", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	st.onStop(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, nil
			}
		}
	}
	return "", errors.New("no answer on /healthz within 20 s")
}

// Child roles: this program re-run as the mock upstream or the bare proxy.
const childFlag = "-loadgen-child"

// startChild runs this program as a child in role (mock: arg is the
// upstream token; proxy: arg is the mock's URL) and returns the URL it
// prints.
func startChild(st *stack, role, arg string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(self, childFlag, role, arg)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = childAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	st.onStop(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("the %s child printed no URL: %w", role, err)
	}
	var v struct{ URL string }
	if err := json.Unmarshal([]byte(line), &v); err != nil || !strings.HasPrefix(v.URL, "http://") {
		return "", fmt.Errorf("the %s child printed %q", role, line)
	}
	return v.URL, nil
}

// childAttr makes a child die with this process, even when it exits
// without stopping it.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// runChild serves a child role until SIGTERM: it prints {"url": …} first.
func runChild(role, arg string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var base string
	switch role {
	case "mock":
		mock, err := mockupstream.Start(mockupstream.Options{Token: arg})
		if err != nil {
			return err
		}
		defer mock.Close()
		base = mock.URL
	case "proxy":
		target, err := url.Parse(arg)
		if err != nil {
			return err
		}
		b, stopProxy, err := serveHandler(bareProxy(target, 64))
		if err != nil {
			return err
		}
		defer stopProxy()
		base = b
	default:
		return fmt.Errorf("unknown child role %q", role)
	}
	line, _ := json.Marshal(struct {
		URL string `json:"url"`
	}{base})
	fmt.Println(string(line))
	<-ctx.Done()
	return nil
}

// childArgs reports a child invocation (childFlag role arg).
func childArgs(args []string) (role, arg string, ok bool) {
	if len(args) == 3 && args[0] == childFlag {
		return args[1], args[2], true
	}
	return "", "", false
}
