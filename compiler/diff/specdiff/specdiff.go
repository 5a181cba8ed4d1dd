// Package specdiff is the spec-level half of `anvil diff`: it runs
// libopenapi's what-changed model over two OpenAPI descriptions and turns
// what it finds into diff.Change values of kind spec_changed, one per
// operation (or per path, or per document area such as servers and
// security schemes), with libopenapi's breaking verdict and line numbers.
//
// It sees what AIR does not carry (error responses, response headers,
// servers, security scheme details, parameter serialization), and it is
// independent of Anvil's own loader. diff.WithSpecChanges keeps only the
// spec-level changes that no AIR-level change already accounts for.
//
// Only this package (and compiler/openapi's benchmark) links libopenapi;
// internal/archtest enforces it.
package specdiff

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel"
	"github.com/pb33f/libopenapi/what-changed/model"

	"github.com/anvil-dev/anvil/compiler/diff"
)

// Side is one description: its name as shown in locations, its directory
// for relative file references ("" for none), and its bytes.
type Side struct {
	Name  string
	Dir   string
	Bytes []byte
}

// Compare runs libopenapi's comparison. Remote references are never
// fetched; file references resolve against each side's Dir, so callers
// check that they stay inside it first (anvil diff loads both specs with
// Anvil's loader, which confines them, before calling Compare).
func Compare(oldSide, newSide Side) (changes []diff.Change, err error) {
	defer func() {
		// libopenapi is third-party code fed untrusted input: a panic in it
		// becomes an error, and the AIR-level report still stands.
		if r := recover(); r != nil {
			changes, err = nil, fmt.Errorf("libopenapi failed: %v", r)
		}
	}()
	od, err := newDocument(oldSide)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", oldSide.Name, err)
	}
	nd, err := newDocument(newSide)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", newSide.Name, err)
	}
	dc, err := libopenapi.CompareDocuments(od, nd)
	if dc == nil {
		if err == nil {
			return nil, nil // no change at all
		}
		return nil, fmt.Errorf("libopenapi could not compare the descriptions: %v", err)
	}
	c := collector{old: oldSide.Name, new: newSide.Name}
	if dc.PathsChanges != nil {
		for path, pc := range dc.PathsChanges.PathItemsChanges {
			c.pathItem(path, pc)
		}
	}
	c.area("servers", serverChanges(dc.ServerChanges))
	c.area("security", securityChanges(dc.SecurityRequirementChanges))
	if dc.ComponentsChanges != nil {
		var all []*model.Change
		for _, s := range dc.ComponentsChanges.SecuritySchemeChanges {
			all = append(all, s.GetAllChanges()...)
		}
		c.area("securitySchemes", all)
	}
	return c.out, nil
}

func newDocument(s Side) (libopenapi.Document, error) {
	cfg := &datamodel.DocumentConfiguration{
		Logger:                slog.New(slog.NewTextHandler(io.Discard, nil)),
		AllowRemoteReferences: false,
	}
	if s.Dir != "" {
		cfg.BasePath = s.Dir
		cfg.AllowFileReferences = true
		cfg.SpecFilePath = filepath.Base(s.Name)
	}
	return libopenapi.NewDocumentWithConfiguration(s.Bytes, cfg)
}

type collector struct {
	old, new string
	out      []diff.Change
}

// methods pairs HTTP methods with a path item's operation changes.
func methods(pc *model.PathItemChanges) map[string]*model.OperationChanges {
	m := map[string]*model.OperationChanges{
		"GET": pc.GetChanges, "PUT": pc.PutChanges, "POST": pc.PostChanges, "DELETE": pc.DeleteChanges,
		"OPTIONS": pc.OptionsChanges, "HEAD": pc.HeadChanges, "PATCH": pc.PatchChanges, "TRACE": pc.TraceChanges,
		"QUERY": pc.QueryChanges,
	}
	for k, v := range pc.AdditionalOperationChanges {
		m[strings.ToUpper(k)] = v
	}
	return m
}

func (c *collector) pathItem(path string, pc *model.PathItemChanges) {
	for method, oc := range methods(pc) {
		if oc != nil {
			c.add(method, path, oc.GetAllChanges())
		}
	}
	// Changes of the path item itself (shared parameters, servers); an
	// operation added or removed under it is AIR's operation_added/removed.
	var own []*model.Change
	for _, ch := range pc.Changes {
		if _, isMethod := methods(pc)[strings.ToUpper(ch.Property)]; !isMethod {
			own = append(own, ch)
		}
	}
	for _, p := range pc.ParameterChanges {
		own = append(own, p.GetAllChanges()...)
	}
	for _, s := range pc.ServerChanges {
		own = append(own, s.GetAllChanges()...)
	}
	c.add("", path, own)
}

func (c *collector) area(name string, changes []*model.Change) {
	if len(changes) > 0 {
		c.add("", "", changes, name)
	}
}

func serverChanges(l []*model.ServerChanges) []*model.Change {
	var out []*model.Change
	for _, s := range l {
		out = append(out, s.GetAllChanges()...)
	}
	return out
}

func securityChanges(l []*model.SecurityRequirementChanges) []*model.Change {
	var out []*model.Change
	for _, s := range l {
		out = append(out, s.GetAllChanges()...)
	}
	return out
}

// add folds libopenapi's changes of one place into a single Change: the
// first lines on each side, whether any is breaking, and the changed
// properties (at most eight named).
func (c *collector) add(method, path string, changes []*model.Change, area ...string) {
	if len(changes) == 0 {
		return
	}
	breaking := 0
	var oldLine, newLine int
	var props []string
	for _, ch := range changes {
		if ch.Breaking {
			breaking++
		}
		if ctx := ch.Context; ctx != nil {
			if ctx.OriginalLine != nil && (oldLine == 0 || *ctx.OriginalLine < oldLine) {
				oldLine = *ctx.OriginalLine
			}
			if ctx.NewLine != nil && (newLine == 0 || *ctx.NewLine < newLine) {
				newLine = *ctx.NewLine
			}
		}
		props = append(props, ch.Property+" "+changeWord(ch.ChangeType))
	}
	slices.Sort(props)
	props = slices.Compact(props)
	shown := props
	if len(shown) > 8 {
		shown = append(slices.Clone(shown[:8]), fmt.Sprintf("and %d more", len(props)-8))
	}
	where := "spec"
	if len(area) > 0 {
		where = area[0]
	}
	c.out = append(c.out, diff.Change{
		Method: method, Path: path, Kind: diff.SpecChanged, Breaking: breaking > 0,
		Detail:      fmt.Sprintf("%s: %d change(s), %d breaking: %s", where, len(changes), breaking, strings.Join(shown, "; ")),
		OldLocation: loc(c.old, oldLine), NewLocation: loc(c.new, newLine),
	})
}

func loc(name string, line int) string {
	if line == 0 {
		return ""
	}
	return name + ":" + strconv.Itoa(line)
}

func changeWord(t int) string {
	switch t {
	case model.Modified:
		return "modified"
	case model.PropertyAdded, model.ObjectAdded:
		return "added"
	case model.PropertyRemoved, model.ObjectRemoved:
		return "removed"
	}
	return "changed"
}
