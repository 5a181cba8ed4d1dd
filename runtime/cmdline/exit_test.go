package cmdline

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestCode: one exit-error type carries both the printed failure and the
// silent exit, wrapped or not; any other error exits 1 with its text.
func TestCode(t *testing.T) {
	for _, c := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{Silent(0), 0, ""},
		{Silent(3), 3, ""},
		{Fail(2, "bad %s", "flag"), 2, "anvil: bad flag\n"},
		{fmt.Errorf("wrapped: %w", Silent(4)), 4, ""},
		{fmt.Errorf("wrapped: %w", Fail(5, "inner")), 5, "anvil: inner\n"},
		{errors.New("plain"), 1, "anvil: plain\n"},
	} {
		var stderr bytes.Buffer
		if got := Code(&stderr, c.err); got != c.code || stderr.String() != c.stderr {
			t.Errorf("%v: exit %d with %q, want %d with %q", c.err, got, stderr.String(), c.code, c.stderr)
		}
	}
	if got := Silent(3).Error(); got != "exit 3" {
		t.Errorf("a silent exit's text: %q", got)
	}
}
