package harness

import (
	"encoding/json"

	"fmt"
	"github.com/anvil-dev/anvil/runtime/canon"
	"strings"
	"unicode/utf8"
)

// pyString writes a Python string literal (double-quoted, ASCII only).
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x80:
			b.WriteRune(r)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// jsString writes a JavaScript string literal (double-quoted, ASCII only).
func jsString(s string) string { return string(canon.ASCII(canon.AppendStringHTML(nil, s))) }

// asciiJSON escapes every character of JSON text from U+007F up as \uXXXX
// (canon.ASCII), so the text is also a valid JavaScript (and Python)
// source fragment.
func asciiJSON(s string) string { return string(canon.ASCII([]byte(s))) }

// pyDoc makes text safe inside a triple-quoted (not raw) Python docstring:
// backslashes and quotes that could end it are escaped, and so is every
// character Python source cannot hold as it is (NUL, the other C0 controls
// but tab and newline, DEL, and bytes that are not UTF-8).
func pyDoc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		default:
			b.WriteRune(r)
		}
	}
	s = strings.ReplaceAll(b.String(), `"""`, `\"\"\"`)
	if strings.HasSuffix(s, `"`) {
		s += " "
	}
	return s
}

// tomlString writes a TOML basic string: quotes, backslashes and every
// control character (which TOML does not allow raw) escaped, and text that
// is not UTF-8 replaced.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// mdCell makes text safe inside a Markdown table cell, on one line.
func mdCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// oneLine collapses whitespace and replaces bytes that are not UTF-8 (every
// generated file is UTF-8 text).
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
}

// firstSentence returns the first sentence of s (up to the first ". ").
func firstSentence(s string) string {
	s = oneLine(s)
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// yamlScalar writes s as a YAML scalar: plain when that reads back as the
// same string, else double-quoted.
func yamlScalar(s string) string {
	plain := s != "" && s == strings.TrimSpace(s) && !strings.Contains(s, ": ") && !strings.Contains(s, " #") &&
		!strings.ContainsAny(s[:1], "!&*-?:,[]{}#|>@`\"'%") && !strings.HasSuffix(s, ":") && !strings.ContainsAny(s, "\n\t")
	if plain {
		return s
	}
	b, _ := json.Marshal(s)
	return string(b)
}
