package harness

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/runtime/air"
)

// featureProbes says, for each row of docs/sdk.md's feature table, whether
// a rendered package of paginatedDocument has the feature, in Python,
// TypeScript and Go: what the generated code must contain for it.
var featureProbes = map[string]func(files map[string]string) [3]bool{
	"Pagination (iterate every page)": func(f map[string]string) [3]bool {
		return [3]bool{strings.Contains(f["python/anvil_github/client.py"], "def list_issue_paginated("),
			strings.Contains(strings.ToLower(f["typescript/src/client.ts"]), "paginat"),
			strings.Contains(strings.ToLower(f["go/client_gen.go"]), "paginat")}
	},
	"Retries with backoff": func(f map[string]string) [3]bool {
		return [3]bool{strings.Contains(f["python/anvil_github/client.py"], "max_retries: int = 2") && strings.Contains(f["python/anvil_github/_invoke.py"], "def retry_delay("),
			strings.Contains(f["typescript/src/gateway.ts"], "maxRetries?: number") && strings.Contains(f["typescript/src/invoke.ts"], "export function retryDelayMs("),
			strings.Contains(f["go/runtime_gen.go"], "func WithMaxRetries(") && strings.Contains(f["go/runtime_gen.go"], "func retryDelay(")}
	},
	"Timeouts, client-wide and per call": func(f map[string]string) [3]bool {
		py := f["python/anvil_github/client.py"]
		return [3]bool{strings.Count(py, "timeout: Optional[float] = None,") > 2,
			strings.Contains(f["typescript/src/gateway.ts"], "timeoutMs?: number") && strings.Contains(f["typescript/src/invoke.ts"], "timeoutMs?: number"),
			strings.Contains(f["go/runtime_gen.go"], "func WithTimeout(") && strings.Contains(f["go/runtime_gen.go"], "func WithCallTimeout(")}
	},
	"Typed errors per code": func(f map[string]string) [3]bool {
		return [3]bool{strings.Contains(f["python/anvil_github/errors.py"], "class PolicyDenied(AnvilError):"),
			strings.Contains(f["typescript/src/errors.ts"], "export class PolicyDenied extends AnvilError"),
			strings.Contains(f["go/runtime_gen.go"], "ErrPolicyDenied ")}
	},
	"Typed results": func(f map[string]string) [3]bool {
		return [3]bool{strings.Contains(f["python/anvil_github/results.pyi"], "ListIssueResult = List[Issue]") &&
			strings.Contains(f["python/anvil_github/client.py"], "-> _results.ListIssueResult: ..."),
			strings.Contains(f["typescript/src/client.ts"], "Promise<T.Issue[]>"),
			strings.Contains(f["go/client_gen.go"], "opts ...CallOption) ([]Issue, error)")}
	},
	"Streaming responses": func(f map[string]string) [3]bool {
		// A streaming method or option would name it (a word starting with
		// "stream"; "upstream" does not count).
		stream := regexp.MustCompile(`(?i)\bstream`)
		return [3]bool{stream.MatchString(f["python/anvil_github/client.py"]), stream.MatchString(f["typescript/src/client.ts"]),
			stream.MatchString(f["go/client_gen.go"])}
	},
	"Auth helpers": func(f map[string]string) [3]bool {
		return [3]bool{strings.Contains(f["python/anvil_github/_transport.py"], "def read_token("),
			strings.Contains(f["typescript/src/gateway.ts"], "tokenProvider?: TokenProvider"),
			strings.Contains(f["go/runtime_gen.go"], "func WithTokenFile(")}
	},
}

// paginatedDocument is github-mini whose issue list pages (page-numbered).
func paginatedDocument(t *testing.T) *air.Document {
	doc := githubMini(t)
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if op.ID == "github.issues.list" {
			op.Input.Params = append(op.Input.Params, air.Param{Name: "page", Key: "page", In: "query", Schema: intS()})
			op.Input.Schema.Properties["page"] = intS()
			op.Pagination = &air.Pagination{Style: "page", CursorParam: "page"}
		}
	}
	return doc
}

// TestSDKFeatureTable keeps docs/sdk.md's feature table true: each Anvil
// cell must say what the generated package has.
func TestSDKFeatureTable(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "sdk.md"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := Render(emit.Connector{ID: "github", Doc: paginatedDocument(t)})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for name, f := range tree {
		files[name] = string(f.Data)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(section(t, string(md), "Feature table"), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 7 || cells[0] == "Feature" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		probe, ok := featureProbes[cells[0]]
		if !ok {
			t.Errorf("docs/sdk.md's feature table has the row %q, which this test does not check", cells[0])
			continue
		}
		seen[cells[0]] = true
		got := probe(files)
		for i, lang := range []string{"Python", "TypeScript", "Go"} {
			if want := cells[i+1] == "yes"; got[i] != want {
				t.Errorf("docs/sdk.md says %s has %q: %s, but the generated package says %v", lang, cells[0], cells[i+1], got[i])
			}
		}
	}
	for row := range featureProbes {
		if !seen[row] {
			t.Errorf("docs/sdk.md's feature table lacks the row %q", row)
		}
	}
}
