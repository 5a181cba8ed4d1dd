// Package naming is the one home of the compiler's word and identifier
// rules: how names are split into words (the snakeCase rule of the naming
// contract, which lowering uses to derive AIR ids, canonical names, tool
// names and CLI words) and how input keys and operation names become
// Python, TypeScript, Go, CLI and environment names in the emitters. The
// harness SDKs define their methods with these rules and the composite
// calls those methods, so every producer must use this one package.
//
// It imports only the standard library, so every compiler stage (lower and
// each emitter) may import it.
package naming

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words splits s into lower-case words at camelCase boundaries (a
// lower-case letter or digit followed by an upper-case letter, and the last
// capital of an acronym followed by a lower-case letter) and at every run
// of characters that are not letters or digits (the snakeCase rule of the
// naming contract).
func Words(s string) []string {
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

// Snake is snake_case, Words joined by "_":
//
//	listIssues           → list_issues
//	issues/list-for-repo → issues_list_for_repo
//	HTTPServer           → http_server
func Snake(s string) string { return strings.Join(Words(s), "_") }

// Kebab is kebab-case: issue_number → issue-number.
func Kebab(s string) string { return strings.Join(Words(s), "-") }

// Pascal is PascalCase: github → Github, list_issue → ListIssue.
func Pascal(s string) string {
	var b strings.Builder
	for _, w := range Words(s) {
		rs := []rune(w)
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

// Camel is camelCase: create_comment → createComment.
func Camel(s string) string {
	p := Pascal(s)
	if p == "" {
		return ""
	}
	rs := []rune(p)
	rs[0] = unicode.ToLower(rs[0])
	return string(rs)
}

// pythonKeywords are the names a Python parameter cannot take: the reserved
// words (keyword.kwlist; soft keywords such as match, case and type are legal
// names) and self, the generated methods' own first parameter.
var pythonKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
	"self": true,
}

// PyIdent turns an input key into a Python identifier: snake_case, never a
// keyword, never starting with a digit.
func PyIdent(key string) string {
	s := Snake(key)
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

func jsIdentStart(r rune) bool { return r == '_' || r == '$' || unicode.IsLetter(r) }

// IsJSIdent reports whether s can be written as an unquoted JavaScript
// identifier or property name.
func IsJSIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if i == 0 && !jsIdentStart(r) {
			return false
		}
		if i > 0 && !jsIdentStart(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// Unique returns name, or name with a numeric suffix joined by sep, so that
// it is not in taken; it records the result in taken.
func Unique(name string, taken map[string]bool, sep string) string {
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

// EnvName is a connector id as it appears in an environment variable name:
// upper case, every character outside [A-Z0-9] an underscore.
func EnvName(id string) string {
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

// GoExported turns a JSON key into an exported Go identifier: each run of
// letters and digits starts a capitalised part (the rest of its case kept),
// a non-ASCII letter or digit becomes X, an empty result is "Field" and a
// leading digit gets an "F" before it.
func GoExported(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if r >= utf8.RuneSelf {
			r = 'X'
		}
		if up {
			b.WriteRune(unicode.ToUpper(r))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	out := b.String()
	if out == "" {
		out = "Field"
	}
	if out[0] >= '0' && out[0] <= '9' {
		out = "F" + out
	}
	return out
}

// GoUnexported turns an id into an unexported Go identifier: GoExported
// with its first letter lower-cased.
func GoUnexported(s string) string {
	e := GoExported(s)
	r, n := utf8.DecodeRuneInString(e)
	return string(unicode.ToLower(r)) + e[n:]
}

// SDKControls are the names of the safety and transport controls an SDK
// method or CLI command takes beside an operation's own inputs (Python
// keyword arguments; the CLI's flags are their kebab forms): confirm,
// dry_run, idempotency_key and stage do what SKILL.md says, headers and
// timeout shape the call. An input whose snake_case key is one of them would
// shadow the control (dry_run=True sending the field instead of asking for a
// plan), so lowering gives that input another SDK name (SDKInputName) and
// every SDK and the CLI use it.
var SDKControls = []string{"confirm", "dry_run", "idempotency_key", "stage", "headers", "timeout"}

// IsSDKControl reports whether snake is the snake_case name of an SDK control.
func IsSDKControl(snake string) bool {
	for _, c := range SDKControls {
		if c == snake {
			return true
		}
	}
	return false
}

// SDKInputName is the SDK name of an input whose key shadows a control:
// its snake_case key followed by "_field" (dry_run → dry_run_field, and
// --dry-run-field on the CLI), with a numeric suffix when another input of
// the operation already has that name. taken holds the snake_case names of
// the operation's inputs; the result is recorded in it.
func SDKInputName(key string, taken map[string]bool) string {
	return Unique(Snake(key)+"_field", taken, "_")
}
