package harness

import (
	"regexp"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/templates"
)

// The SDKs' errors and dry-run modules are copied verbatim, so the constants
// they share with the gateway are written twice; this test keeps them equal.
func TestVerbatimConstantsMatchTheGateway(t *testing.T) {
	quoted := regexp.MustCompile(`"([a-z_]+)"`)
	for _, c := range []struct{ file, start, end string }{
		{"python/__pkg__/errors.py", "ERROR_CODES = (", ")"},
		{"typescript/src/errors.ts", "ERROR_CODES = [", "]"},
	} {
		src, err := templates.Source(c.file)
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(src, c.start)
		if i < 0 {
			t.Fatalf("%s: no %q", c.file, c.start)
		}
		body := src[i+len(c.start):]
		body = body[:strings.Index(body, c.end)]
		var got []string
		for _, m := range quoted.FindAllStringSubmatch(body, -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, ",") != strings.Join(envelope.Codes, ",") {
			t.Errorf("%s ERROR_CODES = %v, want envelope.Codes %v", c.file, got, envelope.Codes)
		}
	}
	src, err := templates.Source("python/__pkg__/_dry_run.py")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(src, "\nDRY_RUN_ARG = \""+air.DryRunKey+"\"\n") {
		t.Errorf("_dry_run.py does not set DRY_RUN_ARG = %q", air.DryRunKey)
	}
}
