package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestBuildsAreNotOnTheRunsClock: the module download and the builds run
// before the run's Timeout starts, so a run whose Timeout is far shorter
// than any build still builds everything, and only the steps after the
// builds find the time limit reached (issue 31: one 3-minute budget
// covered a cold download and build).
func TestBuildsAreNotOnTheRunsClock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the mock upstream")
	}
	// Any executable stands in for anvil: the run stops before using it,
	// and TestEndToEnd builds the real one.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	res := Run(context.Background(), Options{Timeout: time.Nanosecond, Anvil: self, Progress: &progress})
	status := map[string]Check{}
	for _, c := range res.Checks {
		status[c.Name] = c
	}
	for _, name := range []string{chkToolchain, chkModules, chkAnvil, chkExamples} {
		if c, ok := status[name]; !ok || !c.OK {
			t.Errorf("%s: %+v\n%s", name, c, progress.String())
		}
	}
	if c := status[chkMock]; c.OK || !strings.Contains(c.Detail, "the run's time limit was reached") {
		t.Errorf("the first step after the builds: %+v", c)
	}
	if res.OK {
		t.Error("the run passed with a 1ns timeout")
	}
}

func TestLineTee(t *testing.T) {
	var got []string
	var buf cappedBuffer
	w := &lineTee{w: &buf, line: func(l string) { got = append(got, l) }}
	for _, p := range []string{"go: downloading a v1\ngo: down", "loading b v2\n", "partial"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatal(n, err)
		}
	}
	if strings.Join(got, "|") != "go: downloading a v1|go: downloading b v2" || buf.String() != "go: downloading a v1\ngo: downloading b v2\npartial" {
		t.Errorf("lines %q, buffer %q", got, buf.String())
	}
}
