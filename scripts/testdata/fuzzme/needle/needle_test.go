package needle

import "testing"

// FuzzNeedle fails on inputs starting with "FUZZ": one input in 2^32 at
// random, found within seconds only when each matched byte's new branch
// guides the fuzzer.
func FuzzNeedle(f *testing.F) {
	f.Add([]byte("seed"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && b[0] == 'F' {
			if len(b) > 1 && b[1] == 'U' {
				if len(b) > 2 && b[2] == 'Z' {
					if len(b) > 3 && b[3] == 'Z' {
						t.Fatalf("found the needle %q", b)
					}
				}
			}
		}
	})
}
