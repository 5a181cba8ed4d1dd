package templates

import "strings"

// Indent prefixes every line of s after the first with n spaces (empty
// lines stay empty): a multi-line value placed at an indented position in
// a template.
func Indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if i > 0 && l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}
