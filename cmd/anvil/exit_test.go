package main

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestExitCodes: one exit-error type carries both the printed failure and
// the silent exit, wrapped or not; any other error exits 1 with its text.
func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{silentExit(0), 0, ""},
		{silentExit(3), 3, ""},
		{fail(2, "bad %s", "flag"), 2, "anvil: bad flag\n"},
		{fmt.Errorf("wrapped: %w", silentExit(4)), 4, ""},
		{errors.New("plain"), 1, "anvil: plain\n"},
	} {
		var stderr bytes.Buffer
		if got := exitCode(&env{stderr: &stderr}, c.err); got != c.code || stderr.String() != c.stderr {
			t.Errorf("%v: exit %d with %q, want %d with %q", c.err, got, stderr.String(), c.code, c.stderr)
		}
	}
}
