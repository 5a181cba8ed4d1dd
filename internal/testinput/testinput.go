// Package testinput decides what a test does when an input it needs is
// absent: a fetched real-world description, a PostgreSQL server, a Debian
// package. Under CI (the CI environment variable set, as .ci/run does) the
// test fails, because CI installs every input and a skip there would hide a
// test that never ran. Elsewhere the test is skipped, with one loud line on
// stderr so that the skip is never quiet, even without -v.
package testinput

import (
	"fmt"
	"os"
	"testing"
)

// UnderCI reports whether the tests run under CI.
func UnderCI() bool { return os.Getenv("CI") != "" }

// Missing fails the test under CI and skips it loudly elsewhere; the
// message says what is missing and how to get it.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if UnderCI() {
		tb.Fatal("missing input under CI: " + msg)
	}
	fmt.Fprintln(os.Stderr, "!!! SKIPPING "+tb.Name()+": "+msg)
	tb.Skip("SKIPPING: " + msg)
}

// File returns path when it exists, and otherwise reports it Missing with
// the hint (for example "run scripts/fetch-specs.sh").
func File(tb testing.TB, path, hint string) string {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(tb, "%s is missing: %s", path, hint)
	}
	return path
}
