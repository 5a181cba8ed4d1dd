// Package index renders INDEX.md, the entry point a harness reads first: one
// short entry per connector the branch is granted, saying what it is for,
// when to use it, what is granted and where its SKILL.md is.
//
// Render has the shape of every file emitter (package emit): connectors in,
// an in-memory files.Tree (the one file INDEX.md) out. The caller parses the
// grant file; Render matches its entries to the connectors by id.
package index

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/templates"
)

// ErrTemplate: INDEX.md's template failed to execute (a bug in Anvil).
var ErrTemplate = errors.New("index: template failed")

// FileName is the name of the file Render writes when Options.Out is empty.
const FileName = "INDEX.md"

// Grant is one grant entry.
type Grant struct {
	// Connector is the connector id the entry names.
	Connector string
	// Mode is "read" or "write".
	Mode string
	// Operations are the entry's globs over operation ids.
	Operations []string
	// Account is the entry's account, or "" when it names none.
	Account string
}

// Description is what INDEX.md says about one connector.
type Description struct {
	// Title is the service's display name.
	Title string
	// For says what the connector is for (one line).
	For string
	// UseWhen says when to use it (one line).
	UseWhen string
}

// Options configures Render.
type Options struct {
	// Grants are the turn's grant entries, in grant order. A connector no
	// entry names is left out of INDEX.md.
	Grants []Grant
	// SkillsRoot is the directory holding the packages (<SkillsRoot>/<id>/SKILL.md).
	// Empty: the directory of Out.
	SkillsRoot string
	// Out is where INDEX.md will be written; paths in it are relative to its
	// directory, and the tree names the file by Out's base name (FileName
	// when Out is empty).
	Out string
	// Composite adds the "Spanning connectors" entry for
	// <SkillsRoot>/_compose/SKILL.md (the caller sets it when the composite
	// exists and more than one connector is granted).
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

// Granted lists the connectors that some grant entry names, in the order
// given, each id once (a later connector with an id already listed is left
// out).
func Granted(conns []emit.Connector, grants []Grant) []emit.Connector {
	var out []emit.Connector
	seen := map[string]bool{}
	for _, c := range conns {
		if seen[c.ID] || len(grantsOf(c.ID, grants)) == 0 {
			continue
		}
		seen[c.ID] = true
		out = append(out, c)
	}
	return out
}

func grantsOf(id string, grants []Grant) []Grant {
	var out []Grant
	for _, g := range grants {
		if g.Connector == id {
			out = append(out, g)
		}
	}
	return out
}

// Render renders INDEX.md for the granted connectors (Granted), in the order
// given. A connector without an AIR document is described by its id alone.
func Render(conns []emit.Connector, opts Options) (files.Tree, error) {
	v := indexView{Composite: opts.Composite}
	var ids []string
	for _, c := range Granted(conns, opts.Grants) {
		var e Description
		if c.Doc != nil {
			e = Describe(c.Doc)
		}
		id := oneLine(c.ID)
		title := oneLine(e.Title)
		if title == "" {
			title = id
		}
		v.Entries = append(v.Entries, entryView{
			ID:      id,
			Title:   title,
			For:     orText(oneLine(e.For), "Operations of "+title+"."),
			UseWhen: orText(oneLine(e.UseWhen), "a task needs "+title+"."),
			Granted: granted(grantsOf(c.ID, opts.Grants)),
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
		return nil, fmt.Errorf("%w: %v", ErrTemplate, err)
	}
	name := FileName
	if opts.Out != "" {
		name = filepath.Base(opts.Out)
	}
	tree := files.Tree{}
	tree.Add(name, buf.Bytes())
	return tree, nil
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

// Describe is what INDEX.md says about a connector (Title, For, UseWhen),
// from its AIR document, counting only served operations.
func Describe(doc *air.Document) Description {
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
		if f := strings.Fields(op.CLI.Command); len(f) > 1 && !slices.Contains(resources, f[1]) {
			resources = append(resources, f[1])
		}
	}
	// A large API's line stays one readable line: the first resources,
	// then a count, as in SKILL.md.
	over := joinAnd(emit.ShortList(resources))
	if over == "" {
		over = "its API"
	}
	c := Description{Title: title}
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
