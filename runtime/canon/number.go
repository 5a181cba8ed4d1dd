package canon

import (
	"math"
	"strconv"
)

// AppendNumber appends f as JavaScript's Number.prototype.toString and
// JSON.stringify write a number: the shortest digits that read back as the
// same value (of bitSize 32 or 64: a float32 keeps its own shortest form),
// in exponent form only below 1e-6 or from 1e21 (1e-7, 1e+21, with no
// leading zero in the exponent), -0 as 0, and null for NaN and the
// infinities.
func AppendNumber(b []byte, f float64, bitSize int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0')
	}
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, bitSize)
	if format == 'e' {
		// Go writes e-07; JavaScript e-7 (an exponent from +21 up has
		// two digits either way).
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
