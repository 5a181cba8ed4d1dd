package harness

import "testing"

func TestIsObjectLiteral(t *testing.T) {
	for expr, want := range map[string]bool{
		"{\n  a: string;\n}":            true,
		"{\n  a: string;\n} | null":     false,
		"{ a: { b: string } }":          true,
		"{ a: string } & { b: number }": false,
		"string":                        false,
		"{ \"}\": string }":             true,
		"Record<string, never>":         false,
	} {
		if got := isObjectLiteral(expr); got != want {
			t.Errorf("isObjectLiteral(%q) = %v, want %v", expr, got, want)
		}
	}
}
