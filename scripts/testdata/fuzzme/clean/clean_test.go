package clean

import "testing"

// FuzzClean never fails; its branches give the fuzzer coverage to find.
func FuzzClean(f *testing.F) {
	f.Add([]byte("seed"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		for _, c := range b {
			switch {
			case c >= 'a' && c <= 'z':
				n++
			case c >= '0' && c <= '9':
				n += 2
			case c == '{':
				n += 3
			}
		}
		_ = n
	})
}
