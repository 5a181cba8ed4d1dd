package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// errNoGenerated is the detail prefix when the generated gateway cannot be
// built.
var errNoGenerated = errors.New("generated gateway binary not available")

// gatewayArgv is the command line serving workspace on port in mode. Both
// front doors take the same arguments and environment (both run
// serve.Command; docs/ARCHITECTURE.md, "The runtime"); only the program differs.
func gatewayArgv(mode, anvilBin, generatedBin, workspace string, port int) []string {
	prog := anvilBin
	if mode == GatewayGenerated {
		prog = generatedBin
	}
	return []string{prog, "serve", "mcp", workspace, "--fleet", "--http", strconv.Itoa(port)}
}

// buildGenerated builds the per-yard gateway committed under <repo>/gen
// (go build ./gen/...) into outDir and returns its path. Every failure
// wraps errNoGenerated.
func buildGenerated(ctx context.Context, goBin, repo, outDir string, timeout time.Duration) (string, error) {
	gen := filepath.Join(repo, "gen")
	if st, err := os.Stat(gen); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%w: there is no %s tree yet (anvil compile writes gen/<yard>/)", errNoGenerated, gen)
	}
	list := runCmd(ctx, cmdSpec{
		argv:    []string{goBin, "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "./gen/..."},
		dir:     repo,
		timeout: timeout,
	})
	if list.err != nil || list.code != 0 {
		return "", fmt.Errorf("%w: %v", errNoGenerated, list.failure("go list ./gen/..."))
	}
	var mains []string
	for _, l := range strings.Split(list.stdout, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			mains = append(mains, l)
		}
	}
	if len(mains) == 0 {
		return "", fmt.Errorf("%w: ./gen/... has no main package", errNoGenerated)
	}
	sort.Strings(mains)
	dir := filepath.Join(outDir, "gen")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%w: %v", errNoGenerated, err)
	}
	build := runCmd(ctx, cmdSpec{
		argv:    append([]string{goBin, "build", "-o", dir + string(filepath.Separator)}, mains...),
		dir:     repo,
		timeout: timeout,
	})
	if build.err != nil || build.code != 0 {
		return "", fmt.Errorf("%w: %v", errNoGenerated, build.failure("go build ./gen/..."))
	}
	bin := filepath.Join(dir, filepath.Base(mains[0]))
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%w: go build wrote no %s", errNoGenerated, bin)
	}
	return bin, nil
}
