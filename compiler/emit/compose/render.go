package compose

import (
	"bytes"
	"fmt"
	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/naming"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/templates"
)

// templateRoot is the composite's tree inside templates.FS.
const templateRoot = "compose"

// view is what the composite's templates receive.
type view struct {
	Connectors []connView
	// IDs lists the connector ids, comma separated.
	IDs string
	// CatalogJSON is the catalog as indented JSON (no trailing newline).
	CatalogJSON string
	// TypesJSON is each operation's input types (no trailing newline).
	TypesJSON string
	Reads     int
	Writes    int
	// Example is a flow that SKILL.md shows, when the catalog has a read.
	Example *exampleView
	// Links are the first maxSkillLinks producer links of the catalog
	// (CatalogOp.Needs), in catalog order; LinksMore counts the rest.
	Links     []linkView
	LinksMore int
}

// linkView is one operation input and the operations whose answers give
// it, as SKILL.md shows it: `op` `arg` ← `producer` (`field`), ….
type linkView struct {
	Operation, Argument string
	From                []CatalogProducer
}

// maxSkillLinks bounds the links SKILL.md lists, so it stays under 80
// lines whatever the catalog's size; compose.json has them all.
const maxSkillLinks = 8

// connView is one connector as templates see it.
type connView struct {
	ID        string
	Title     string
	Service   string
	Alias     string // the TypeScript import alias of its client class
	Client    string
	Import    string
	PyPath    string
	PyPackage string
	EnvName   string
	Reads     int
	Writes    int
	Undoable  int
	Methods   []string // TypeScript method names
}

// exampleView is a two-step flow over real operations.
type exampleView struct {
	Read      string // qualified read operation
	ReadArgs  string // Python keyword arguments
	Write     string // qualified write operation, or ""
	WriteArgs string
	Confirm   bool
}

// renderTree renders every file of the composite.
func renderTree(conns []emit.Connector, cat *Catalog) (files.Tree, error) {
	catJSON, err := air.Marshal(cat)
	if err != nil {
		return nil, fmt.Errorf("compose: catalog: %w", err)
	}
	typesJSON := inputTypesJSON(conns, cat)
	v := &view{CatalogJSON: strings.TrimRight(string(catJSON), "\n"), TypesJSON: strings.TrimRight(string(typesJSON), "\n")}
	var ids []string
	for i, c := range cat.Connectors {
		cv := connView{ID: c.ID, Title: c.Title, Service: c.Service.ID, Alias: "Client" + strconv.Itoa(i),
			Client: c.TypeScript.Client, Import: c.TypeScript.Import, PyPath: c.Python.Path,
			PyPackage: c.Python.Package, EnvName: naming.EnvName(c.ID)}
		for _, op := range c.Operations {
			if op.Effect == air.KindRead {
				cv.Reads++
			} else {
				cv.Writes++
			}
			if op.Undo != nil {
				cv.Undoable++
			}
			cv.Methods = append(cv.Methods, op.Method.TypeScript)
		}
		v.Reads += cv.Reads
		v.Writes += cv.Writes
		v.Connectors = append(v.Connectors, cv)
		ids = append(ids, c.ID)
	}
	v.IDs = strings.Join(ids, ", ")
	v.Example = example(cat)
	for _, c := range cat.Connectors {
		for _, op := range c.Operations {
			for _, n := range op.Needs {
				if len(v.Links) == maxSkillLinks {
					v.LinksMore++
					continue
				}
				l := linkView{Operation: op.ID, Argument: n.Argument, From: slices.Clone(n.From)}
				if len(cat.Connectors) > 1 {
					l.Operation = c.ID + ":" + op.ID
					for i := range l.From {
						l.From[i].Operation = c.ID + ":" + l.From[i].Operation
					}
				}
				v.Links = append(v.Links, l)
			}
		}
	}

	tree := files.Tree{}
	tree.Add("compose.json", catJSON)
	tree.Add("python/anvil_compose/catalog.json", catJSON)
	tree.Add("python/anvil_compose/input_types.json", typesJSON)
	all, err := templates.Files(templateRoot)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTemplate, err)
	}
	for _, f := range all {
		if !f.Template {
			tree.Add(f.Path, templates.Marked(f.Path, f.Data))
			continue
		}
		t, err := template.New(path.Base(f.Path)).Funcs(funcs).Option("missingkey=error").Parse(string(f.Data))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrTemplate, f.Path, err)
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, v); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrTemplate, f.Path, err)
		}
		tree.Add(strings.TrimSuffix(f.Path, ".tmpl"), buf.Bytes())
	}
	return tree, nil
}

var funcs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := air.MarshalCompact(v)
		return string(b), err
	},
	"indent": templates.Indent,
	"md":     func(s string) string { return strings.ReplaceAll(oneLine(s), "|", "\\|") },
}

// example picks a read (a list, preferably) and a write that can be undone
// (by an inverse, preferably) from the first connector with a read, for
// SKILL.md.
func example(cat *Catalog) *exampleView {
	for _, c := range cat.Connectors {
		var read, write *CatalogOp
		for i := range c.Operations {
			op := &c.Operations[i]
			switch {
			case op.Effect == air.KindRead && (read == nil || (!strings.HasSuffix(read.ID, ".list") && strings.HasSuffix(op.ID, ".list"))):
				read = op
			case op.Effect != air.KindRead && op.Undo != nil &&
				(write == nil || (write.Undo.Kind != "inverse" && op.Undo.Kind == "inverse")):
				write = op
			}
		}
		if read == nil {
			continue
		}
		ex := &exampleView{Read: read.ID, ReadArgs: pyArgs(read, nil)}
		if len(cat.Connectors) > 1 {
			ex.Read = c.ID + ":" + read.ID
		}
		if write != nil {
			ex.Write = write.ID
			if len(cat.Connectors) > 1 {
				ex.Write = c.ID + ":" + write.ID
			}
			ex.WriteArgs = pyArgs(write, read)
			ex.Confirm = write.Confirm
		}
		return ex
	}
	return nil
}

// pyArgs writes a Python dict literal of the required inputs of op; an
// identifier the read from does not take is read from each listed element
// with item(): the field op's producer link from the read names (needs:
// "[].number" → item("number")), else the identifier's last word
// (…_number, …_id).
func pyArgs(op, from *CatalogOp) string {
	var parts []string
	for _, in := range op.Inputs {
		if !in.Required {
			continue
		}
		k := strconv.Quote(in.Key)
		switch {
		case from == nil:
			parts = append(parts, k+": ...")
		case !takes(from, in.Key) && itemField(op, from.ID, in.Key) != "":
			parts = append(parts, k+": item("+strconv.Quote(itemField(op, from.ID, in.Key))+")")
		case !takes(from, in.Key) && (strings.HasSuffix(in.Key, "_number") || strings.HasSuffix(in.Key, "_id")):
			parts = append(parts, k+": item("+strconv.Quote(lastWord(in.Key))+")")
		default:
			parts = append(parts, k+": ...")
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// itemField is the field of each element of producer's list answer that
// op's input key comes from, by op's producer links ("[].number" →
// "number"); "" when no link says so.
func itemField(op *CatalogOp, producer, key string) string {
	for _, n := range op.Needs {
		if n.Argument != key {
			continue
		}
		for _, p := range n.From {
			if f, ok := strings.CutPrefix(p.Field, "[]."); ok && p.Operation == producer && !strings.Contains(f, "[]") {
				return f
			}
		}
	}
	return ""
}

func takes(op *CatalogOp, key string) bool {
	for _, in := range op.Inputs {
		if in.Key == key {
			return true
		}
	}
	return false
}

// lastWord is the last snake_case word of a key: issue_number → number.
func lastWord(key string) string {
	w := naming.Words(key)
	if len(w) == 0 {
		return key
	}
	return w[len(w)-1]
}
