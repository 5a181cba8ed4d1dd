package compose

import (
	"strconv"
	"strings"
	"unicode"
)

// The naming rules below are the harness SDKs' (compiler/emit/harness): the
// composite calls the methods those SDKs define, so it must name them the
// same way. The integration tests load real harness packages and fail on
// any drift.

// words splits s into lower-case words at camelCase boundaries and at every
// run of characters that are not letters or digits.
func words(s string) []string {
	var out []string
	rs := []rune(s)
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// snake is snake_case: listIssues → list_issues.
func snake(s string) string { return strings.Join(words(s), "_") }

// pascal is PascalCase: github → Github, list_issue → ListIssue.
func pascal(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		rs := []rune(w)
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

// camel is camelCase: create_comment → createComment.
func camel(s string) string {
	p := pascal(s)
	if p == "" {
		return ""
	}
	rs := []rune(p)
	rs[0] = unicode.ToLower(rs[0])
	return string(rs)
}

// pythonKeywords are the names a generated Python identifier must not take.
var pythonKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
	"self": true, "match": true, "case": true, "type": true, "print": true,
}

// pyIdent turns a name into a Python identifier: snake_case, never a
// keyword, never starting with a digit.
func pyIdent(key string) string {
	s := snake(key)
	if s == "" {
		s = "value"
	}
	if s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	if pythonKeywords[s] {
		s += "_"
	}
	return s
}

// isJSIdent reports whether s can be written as an unquoted identifier.
func isJSIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		start := r == '_' || r == '$' || unicode.IsLetter(r)
		if i == 0 && !start {
			return false
		}
		if i > 0 && !start && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// uniqueName returns name, or name with a numeric suffix, so that it is not
// in taken; it records the result.
func uniqueName(name string, taken map[string]bool, sep string) string {
	if !taken[name] {
		taken[name] = true
		return name
	}
	for i := 2; ; i++ {
		c := name + sep + strconv.Itoa(i)
		if !taken[c] {
			taken[c] = true
			return c
		}
	}
}

// envName is a connector id as it appears in an environment variable name:
// upper case, every character outside [A-Z0-9] an underscore.
func envName(id string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(id) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
