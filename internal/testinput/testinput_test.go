package testinput

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test runs itself as a child (TESTINPUT_CHILD set) in which an input is
// absent, once as under CI and once not.
func TestMissingFailsUnderCIAndSkipsElsewhere(t *testing.T) {
	if os.Getenv("TESTINPUT_CHILD") != "" {
		File(t, filepath.Join(t.TempDir(), "absent.json"), "fetch it")
		t.Log("reached after a missing input")
		return
	}
	for _, c := range []struct {
		ci       string
		wantFail bool
		wantText string
	}{{"1", true, "missing input under CI"}, {"", false, "SKIPPING"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTINPUT_CHILD=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.wantFail || !strings.Contains(string(out), c.wantText) || strings.Contains(string(out), "reached after") {
			t.Errorf("CI=%q: err %v, output:\n%s", c.ci, err, out)
		}
	}
}
