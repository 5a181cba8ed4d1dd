package jsonscan

import "testing"

func TestKind(t *testing.T) {
	for in, want := range map[string]byte{
		`{"a":1}`: '{', ` [1]`: '[', "\t\r\n\"s\"": '"', `true`: 't', `false`: 'f',
		`null`: 'n', `-1`: '0', `0.5`: '0', `9e3`: '0',
		``: 0, `   `: 0, `x`: 0, `+1`: 0, `.5`: 0, "\v{}": 0,
	} {
		if got := Kind([]byte(in)); got != want {
			t.Errorf("Kind(%q) = %q, want %q", in, got, want)
		}
	}
}
