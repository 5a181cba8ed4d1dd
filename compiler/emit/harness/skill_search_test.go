package harness

import (
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/discover"
	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
)

// skillSearchMaxBytes is the size a large connector's SKILL.md stays under
// (docs/templates.md), whatever the number of operations and resources.
const skillSearchMaxBytes = 6000

// TestSkillSearchThresholdIsTheGateways keeps the compiler's copy of the
// threshold equal to the gateway's (the compiler may not import it).
func TestSkillSearchThresholdIsTheGateways(t *testing.T) {
	if skillSearchThreshold != mcpdoor.AutoDiscoverThreshold {
		t.Errorf("skillSearchThreshold = %d, the gateway's AutoDiscoverThreshold = %d", skillSearchThreshold, mcpdoor.AutoDiscoverThreshold)
	}
	if skillSearchThreshold != discover.MaxLimit {
		t.Errorf("skillSearchThreshold = %d, discover.MaxLimit = %d", skillSearchThreshold, discover.MaxLimit)
	}
}

func skillOf(t *testing.T, doc *air.Document) string {
	t.Helper()
	tree, err := Render(emit.Connector{ID: "github", Doc: doc})
	if err != nil {
		t.Fatal(err)
	}
	return string(tree["SKILL.md"].Data)
}

// TestSkillPointsAtSearchAboveTheThreshold: up to skillSearchThreshold
// served operations SKILL.md lists them; above it, it lists none, shows the
// search command and the SDKs' search, keeps every safety rule, and stays
// under skillSearchMaxBytes however many operations and resources there are.
func TestSkillPointsAtSearchAboveTheThreshold(t *testing.T) {
	at := copiedDocument(t, 5)
	served := 0
	for i := range at.Operations {
		if air.IsServed(&at.Operations[i]) {
			served++
			if served == skillSearchThreshold+1 {
				at.Operations = at.Operations[:i]
				break
			}
		}
	}
	small := skillOf(t, at)
	if !strings.Contains(small, "\n## Operations\n") || strings.Contains(small, "## Find an operation") {
		t.Errorf("with %d operations SKILL.md should list them:\n%s", skillSearchThreshold, small)
	}

	mini := skillOf(t, githubMini(t))
	for _, copies := range []int{5, 60} {
		md := skillOf(t, copiedDocument(t, copies))
		if len(md) > skillSearchMaxBytes {
			t.Errorf("%d copies: SKILL.md is %d bytes, over %d", copies, len(md), skillSearchMaxBytes)
		}
		for _, want := range []string{"\n## Find an operation\n", "`bin/github search \"list issues\"`",
			"`GithubClient().search(\"list issues\")`", "`reference/operations.md`", "Find the one a task needs with `bin/github search`."} {
			if !strings.Contains(md, want) {
				t.Errorf("%d copies: SKILL.md lacks %q:\n%s", copies, want, md)
			}
		}
		if strings.Contains(md, "## Operations") || strings.Contains(md, "| `issues list`") {
			t.Errorf("%d copies: SKILL.md lists operations:\n%s", copies, md)
		}
		// Everything from "## Safety" on is the small connector's, word for word.
		if got, want := md[strings.Index(md, "\n## Safety\n"):], mini[strings.Index(mini, "\n## Safety\n"):]; got != want {
			t.Errorf("%d copies: the safety sections differ from github-mini's:\n%s\nwant:\n%s", copies, got, want)
		}
	}
}

// TestSearchCommandYieldsToAnOperation: a connector whose own command starts
// with "search" keeps it, and the CLI's search is anvil-search.
func TestSearchCommandYieldsToAnOperation(t *testing.T) {
	if got := searchCommand([]string{"issues", "search"}); got != "anvil-search" {
		t.Errorf("searchCommand = %q", got)
	}
	if got := searchCommand([]string{"issues", "searches"}); got != "search" {
		t.Errorf("searchCommand = %q", got)
	}
}
