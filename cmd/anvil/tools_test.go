package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/discover"
)

// fxToolsWS is the committed github-mini workspace the gateway tests serve.
const fxToolsWS = "../../runtime/serve/testdata/workspace"

func TestToolsCommand(t *testing.T) {
	code, out, errOut := runCLI(t, "", "tools", fxToolsWS)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 13 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("want a header and 12 tools, got:\n%s", out)
	}
	if !strings.Contains(out, "github__github_create_issue") || !strings.Contains(lines[2], "yes") {
		t.Errorf("listing:\n%s", out)
	}

	code, out, errOut = runCLI(t, "", "tools", fxToolsWS, "--search", "comment on an issue", "--limit", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res discover.SearchResponse
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(res.Tools) != 2 || res.Tools[0].Name != "github__github_create_comment" || res.Tools[0].OperationID != "github.comments.create" {
		t.Errorf("search: %s", out)
	}

	for _, args := range [][]string{{"tools"}, {"tools", fxToolsWS, "--search", "x", "--limit", "51"}, {"tools", t.TempDir()}} {
		if code, _, errOut := runCLI(t, "", args...); code == 0 || !strings.HasPrefix(errOut, "anvil: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
