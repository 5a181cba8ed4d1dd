package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes the report's documented JSON shape, indented, with a
// trailing newline.
func (r *Report) WriteJSON(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// headline is the first line of the text and Markdown forms.
func (r *Report) headline() string {
	h := fmt.Sprintf("semver: %s (%d breaking, %d non-breaking", r.Semver, r.Summary.Breaking, r.Summary.NonBreaking)
	if r.Summary.Unknown > 0 {
		h += fmt.Sprintf(", %d not compared", r.Summary.Unknown)
	}
	return h + ")"
}

// level is a change's first word in the text form.
func (c Change) level() string {
	switch {
	case c.Kind == ComparisonIncomplete:
		return "UNKNOWN "
	case c.Breaking:
		return "BREAKING"
	}
	return "change  "
}

// subject names the operation of a change: tool, method and path.
func (c Change) subject() string {
	var parts []string
	if c.Tool != "" {
		parts = append(parts, c.Tool)
	}
	if c.Method != "" || c.Path != "" {
		parts = append(parts, strings.TrimSpace(c.Method+" "+c.Path))
	}
	if len(parts) == 0 {
		return "(document)"
	}
	return strings.Join(parts, " ")
}

func (c Change) where() string {
	o, n := c.OldLocation, c.NewLocation
	if o == "" {
		o = "-"
	}
	if n == "" {
		n = "-"
	}
	return o + " → " + n
}

// WriteText writes one line per change under the verdict line:
//
//	BREAKING <kind> <tool> <METHOD> <path>: <detail> (<old location> → <new location>)
//
// with "change  " for a non-breaking change and "UNKNOWN " for a part not
// compared.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(r.headline() + "\n")
	for _, c := range r.Changes {
		fmt.Fprintf(&b, "%s %s %s: %s (%s)\n", c.level(), c.Kind, c.subject(), c.Detail, c.where())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the report as a heading line and a table; it is also
// the body of a harness package's CHANGELOG entry.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n", r.headline())
	if len(r.Changes) > 0 {
		b.WriteString("\n| | change | operation | detail | spec (old → new) |\n| --- | --- | --- | --- | --- |\n")
		for _, c := range r.Changes {
			level := ""
			switch {
			case c.Kind == ComparisonIncomplete:
				level = "**unknown**"
			case c.Breaking:
				level = "**breaking**"
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", level, c.Kind, mdCell(c.subject()), mdCell(c.Detail), mdCell(c.where()))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell keeps a value inside one table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
