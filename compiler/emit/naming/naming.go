// Package naming is the former home of the emitters' naming rules, now in
// compiler/naming (shared with lowering); its functions forward there so
// that emitters not yet moved keep compiling. New code imports
// compiler/naming.
package naming

import "github.com/anvil-dev/anvil/compiler/naming"

// Words is naming.Words.
func Words(s string) []string { return naming.Words(s) }

// Snake is naming.Snake.
func Snake(s string) string { return naming.Snake(s) }

// Kebab is naming.Kebab.
func Kebab(s string) string { return naming.Kebab(s) }

// Pascal is naming.Pascal.
func Pascal(s string) string { return naming.Pascal(s) }

// Camel is naming.Camel.
func Camel(s string) string { return naming.Camel(s) }

// PyIdent is naming.PyIdent.
func PyIdent(key string) string { return naming.PyIdent(key) }

// IsJSIdent is naming.IsJSIdent.
func IsJSIdent(s string) bool { return naming.IsJSIdent(s) }

// Unique is naming.Unique.
func Unique(name string, taken map[string]bool, sep string) string {
	return naming.Unique(name, taken, sep)
}

// EnvName is naming.EnvName.
func EnvName(id string) string { return naming.EnvName(id) }
