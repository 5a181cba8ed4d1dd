// Package index renders INDEX.md, the entry point a harness reads first: one
// short entry per connector the branch is granted, saying what it is for,
// when to use it, what is granted and where its SKILL.md is.
//
// The caller parses the grant file and matches connector ids; Render takes
// the already-matched view.
package index

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/templates"
)

// Grant is one grant entry naming a connector.
type Grant struct {
	// Mode is "read" or "write".
	Mode string
	// Operations are the entry's globs over operation ids.
	Operations []string
	// Account is the entry's account, or "" when it names none.
	Account string
}

// Connector is one granted connector's entry.
type Connector struct {
	// ID is the connector id (the folded bundle path).
	ID string
	// Title is the service's display name.
	Title string
	// For says what the connector is for (one line).
	For string
	// UseWhen says when to use it (one line).
	UseWhen string
	// Grants are the grant entries naming the connector, in grant order.
	Grants []Grant
}

// Options configures Render.
type Options struct {
	// SkillsRoot is the directory holding the packages (<SkillsRoot>/<id>/SKILL.md).
	// Empty: the directory of Out.
	SkillsRoot string
	// Out is where INDEX.md is written; paths in it are relative to its directory.
	Out string
	// Composite adds the "Spanning connectors" entry for <SkillsRoot>/_compose/SKILL.md.
	Composite bool
}

// CompositeDir is the composite's directory under the skills root.
const CompositeDir = "_compose"

type entryView struct {
	ID, Title, For, UseWhen, Granted, Skill, CLI string
}

type indexView struct {
	Entries        []entryView
	Composite      bool
	CompositeSkill string
	Spans          string
}

var indexTemplate = template.Must(template.New("index").Option("missingkey=error").ParseFS(templates.FS, "index/INDEX.md.tmpl"))

// Render renders INDEX.md for the granted connectors, in the order given.
func Render(entries []Connector, opts Options) []byte {
	v := indexView{Composite: opts.Composite}
	var ids []string
	for _, c := range entries {
		id := oneLine(c.ID)
		title := oneLine(c.Title)
		if title == "" {
			title = id
		}
		v.Entries = append(v.Entries, entryView{
			ID:      id,
			Title:   title,
			For:     orText(oneLine(c.For), "Operations of "+title+"."),
			UseWhen: orText(oneLine(c.UseWhen), "a task needs "+title+"."),
			Granted: granted(c.Grants),
			Skill:   rel(opts, id, "SKILL.md"),
			CLI:     rel(opts, id, "bin", id),
		})
		ids = append(ids, "`"+id+"`")
	}
	if opts.Composite {
		v.CompositeSkill = rel(opts, CompositeDir, "SKILL.md")
		v.Spans = joinAnd(ids)
		if v.Spans == "" {
			v.Spans = "several connectors"
		}
	}
	var buf bytes.Buffer
	if err := indexTemplate.ExecuteTemplate(&buf, "INDEX.md.tmpl", v); err != nil {
		// The view is fully built above; a failure here is a template bug.
		return []byte(fmt.Sprintf("# Connectors\n\n_INDEX.md could not be rendered: %v_\n", err))
	}
	return buf.Bytes()
}

// granted is "<mode>[ (<globs>)][, account <a>]" per entry, joined by "; ".
func granted(gs []Grant) string {
	var parts []string
	for _, g := range gs {
		s := oneLine(g.Mode)
		if !(len(g.Operations) == 1 && g.Operations[0] == "*") && len(g.Operations) > 0 {
			s += " (" + strings.Join(g.Operations, ", ") + ")"
		}
		if g.Account != "" {
			s += ", account " + g.Account
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}

// rel is the slash path of <SkillsRoot>/<parts...> relative to the directory of Out.
func rel(opts Options, parts ...string) string {
	inside := path.Join(parts...)
	base := filepath.Dir(opts.Out)
	if opts.Out == "" {
		base = opts.SkillsRoot
	}
	root := opts.SkillsRoot
	if root == "" {
		root = base
	}
	if root == "" || base == "" {
		return inside
	}
	r, err := filepath.Rel(base, filepath.Join(root, filepath.FromSlash(inside)))
	if err != nil || filepath.IsAbs(r) {
		return inside
	}
	return filepath.ToSlash(r)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func joinAnd(l []string) string {
	switch len(l) {
	case 0:
		return ""
	case 1:
		return l[0]
	}
	return strings.Join(l[:len(l)-1], ", ") + " and " + l[len(l)-1]
}

// Describe fills Title, For and UseWhen of a connector entry from its AIR
// document, counting only served operations. ID and Grants are left to the
// caller.
func Describe(doc *air.Document) Connector {
	title := oneLine(doc.Service.DisplayName)
	if title == "" {
		title = doc.Service.ID
	}
	reads, writes := 0, 0
	var resources []string
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if !air.IsServed(op) {
			continue
		}
		if op.Effect.Kind == air.KindRead {
			reads++
		} else {
			writes++
		}
		if f := strings.Fields(op.CLI.Command); len(f) > 1 && !contains(resources, f[1]) {
			resources = append(resources, f[1])
		}
	}
	over := joinAnd(resources)
	if over == "" {
		over = "its API"
	}
	c := Connector{Title: title}
	c.For = oneLine(doc.Service.Description)
	if c.For == "" {
		c.For = fmt.Sprintf("%s: %d read and %d write operation(s) over %s.", title, reads, writes, over)
	}
	verb := "read or change"
	switch {
	case writes == 0:
		verb = "read"
	case reads == 0:
		verb = "change"
	}
	c.UseWhen = fmt.Sprintf("a task needs to %s %s in %s.", verb, over, title)
	return c
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
