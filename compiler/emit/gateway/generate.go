package gateway

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/anvil-dev/anvil/runtime/air"
)

// opsPerFile bounds the operations printed into one file, so that a large
// workspace (GitHub's 1,000-odd operations) splits into files of a size
// editors and gofmt handle well.
const opsPerFile = 40

// opInfo is one served operation with its Go names and analysed input.
type opInfo struct {
	tool  *Tool
	names opNames
	in    *input
	base  string
}

// generator holds the state of one Generate call.
type generator struct {
	ws    *Workspace
	ops   map[string][]*opInfo // by connector id
	conns map[string]string    // connector id -> Go function name
	stats Stats
}

func newGenerator(ws *Workspace) *generator {
	return &generator{ws: ws, ops: map[string][]*opInfo{}, conns: map[string]string{}}
}

// pkgName is the generated workspace package's name.
const pkgName = "workspace"

func (g *generator) workspaceImport() string {
	return path.Join(g.ws.ImportPath, g.ws.Yard, pkgName)
}

func (g *generator) newFile() *jen.File {
	f := jen.NewFilePathName(g.workspaceImport(), pkgName)
	f.HeaderComment(Header)
	return f
}

func render(f *jen.File) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (g *generator) run() (map[string][]byte, error) {
	out := map[string][]byte{}
	used := map[string]bool{"Workspace": true}
	seen := map[string]bool{}
	wire := map[string]string{} // tool name -> operation id
	// Name every operation first: draft mappings refer to other operations.
	for ci := range g.ws.Connectors {
		c := &g.ws.Connectors[ci]
		if c.Doc == nil || !air.ValidConnectorID.MatchString(c.ID) || seen[c.ID] {
			return nil, fmt.Errorf("%w: connector %q is missing, repeated or not a valid id", ErrInvalid, c.ID)
		}
		seen[c.ID] = true
		g.conns[c.ID] = uniqueName(lowerName(c.ID)+"Connector", used)
		for ti := range c.Tools {
			t := &c.Tools[ti]
			if t.Op == nil {
				return nil, fmt.Errorf("%w: tool %s has no operation", ErrInvalid, t.Name)
			}
			if other, dup := wire[t.Name]; dup {
				return nil, fmt.Errorf("%w: tool-name collision: %s is served by both %s and %s", ErrInvalid, t.Name, other, t.Op.ID)
			}
			wire[t.Name] = t.Op.ID
			base := lowerName(t.Op.ID)
			if used[base] || used[base+"Input"] {
				base = lowerName(c.ID + "_" + t.Op.ID)
			}
			base = uniqueName(base, used)
			n := newOpNames(base)
			for _, x := range []string{n.input, n.decode, n.fromArgs, n.build, n.effect, n.draft, n.redact, base + "Op"} {
				used[x] = true
			}
			info := &opInfo{tool: t, names: n, base: base, in: analyseInput(n.input, t.Op)}
			g.ops[c.ID] = append(g.ops[c.ID], info)
			g.stats.Operations++
			if !info.in.schemaCheck {
				g.stats.Specialised++
			}
		}
	}

	// main_gen.go
	mf := jen.NewFilePathName(path.Join(g.ws.ImportPath, g.ws.Yard), "main")
	mf.HeaderComment(Header)
	mf.PackageComment(fmt.Sprintf("Command %s is the generated gateway of the %s workspace: anvil serve mcp --fleet", g.ws.Yard, g.ws.Yard))
	mf.PackageComment("with that workspace's handlers compiled in. Run it as")
	mf.PackageComment("")
	mf.PackageComment(fmt.Sprintf("\t%s serve mcp <workspace> --fleet --http <port> [--host <host>]", g.ws.Yard))
	mf.PackageComment("")
	mf.PackageComment("with the fleet gateway's environment (ANVIL_INBOUND_*, ANVIL_VAULT_*, ANVIL_AUDIT_FILE, …).")
	mf.PackageComment("Regenerate it with anvil compile --workspace <dir> --yard " + g.ws.Yard + ".")
	mf.Func().Id("main").Params().Block(
		jen.List(jen.Id("ctx"), jen.Id("stop")).Op(":=").Qual("os/signal", "NotifyContext").Call(
			jen.Qual("context", "Background").Call(), jen.Qual("os", "Interrupt"), jen.Qual("syscall", "SIGTERM")),
		jen.Id("code").Op(":=").Qual(pkgServe, "Main").Call(jen.Id("ctx"), jen.Qual("os", "Args"),
			jen.Qual(g.workspaceImport(), "Workspace").Call(),
			jen.Qual(pkgServe, "Options").Values(jen.Dict{
				jen.Id("Stdin"):  jen.Qual("os", "Stdin"),
				jen.Id("Stdout"): jen.Qual("os", "Stdout"),
				jen.Id("Stderr"): jen.Qual("os", "Stderr"),
				jen.Id("Getenv"): jen.Qual("os", "Getenv"),
			})),
		jen.Id("stop").Call(),
		jen.Qual("os", "Exit").Call(jen.Id("code")),
	)
	b, err := render(mf)
	if err != nil {
		return nil, fmt.Errorf("%w: main: %w", ErrInvalid, err)
	}
	out["main_gen.go"] = b

	// workspace/workspace_gen.go
	wf := g.newFile()
	wf.PackageComment("Package workspace is the compiled workspace of the " + g.ws.Yard + " gateway: one")
	wf.PackageComment("Connector per served bundle, with typed handlers for every operation.")
	wf.Comment("The generated code targets this version of the runtime's handler API;")
	wf.Comment("a runtime without it does not compile this package.")
	wf.Var().Id("_").Op("=").Qual(pkgHandler, "RuntimeVersion1")
	var conns []jen.Code
	for _, c := range g.ws.Connectors {
		conns = append(conns, jen.Id(g.conns[c.ID]).Call())
	}
	wf.Comment("Workspace returns the workspace this gateway serves.")
	wf.Func().Id("Workspace").Params().Op("*").Qual(pkgHandler, "Workspace").Block(
		jen.Return(jen.Op("&").Qual(pkgHandler, "Workspace").Values(jen.Dict{
			jen.Id("Connectors"): jen.Index().Op("*").Qual(pkgHandler, "Connector").Values(conns...),
		})))
	if b, err = render(wf); err != nil {
		return nil, fmt.Errorf("%w: workspace: %w", ErrInvalid, err)
	}
	out[pkgName+"/workspace_gen.go"] = b

	for ci := range g.ws.Connectors {
		c := &g.ws.Connectors[ci]
		if err := g.connector(out, c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fileStem is the connector's file name stem.
func fileStem(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			if c >= 'A' && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			} else {
				b[i] = '_'
			}
		}
	}
	return string(b)
}

// connector prints one connector's table and operation files.
func (g *generator) connector(out map[string][]byte, c *Connector) error {
	stem := fileStem(c.ID)
	ops := g.ops[c.ID]
	f := g.newFile()
	doc := c.Doc
	aj, err := servedAIR(doc)
	if err != nil {
		return fmt.Errorf("%w: connector %s: %w", ErrInvalid, c.ID, err)
	}
	var opCalls []jen.Code
	for _, o := range ops {
		opCalls = append(opCalls, jen.Id(o.base+"Op").Call())
	}
	airName := g.conns[c.ID] + "AIR"
	f.Commentf("%s is the AIR of connector %s (service %s), its approved operations only:", airName, c.ID, doc.Service.ID)
	f.Comment("the runtime reads every operation's policies, schema and listing from it.")
	f.Const().Id(airName).Op("=").Add(stringLit(string(aj)))
	f.Line()
	f.Commentf("%s is connector %s with its generated handlers.", g.conns[c.ID], c.ID)
	f.Func().Id(g.conns[c.ID]).Params().Op("*").Qual(pkgHandler, "Connector").Block(
		jen.Return(jen.Op("&").Qual(pkgHandler, "Connector").Values(jen.Dict{
			jen.Id("ID"):         jen.Lit(c.ID),
			jen.Id("AIR"):        jen.Id(airName),
			jen.Id("BundleHash"): jen.Lit(c.BundleHash),
			jen.Id("Ops"):        jen.Index().Op("*").Qual(pkgHandler, "Operation").Values(opCalls...),
		})))
	b, err := render(f)
	if err != nil {
		return fmt.Errorf("%w: connector %s: %w", ErrInvalid, c.ID, err)
	}
	out[pkgName+"/"+stem+"_gen.go"] = b

	for start := 0; start < len(ops); start += opsPerFile {
		end := min(start+opsPerFile, len(ops))
		name := fmt.Sprintf("%s/%s_ops_gen.go", pkgName, stem)
		if len(ops) > opsPerFile {
			name = fmt.Sprintf("%s/%s_ops_%03d_gen.go", pkgName, stem, start/opsPerFile)
		}
		f := g.newFile()
		for _, o := range ops[start:end] {
			g.operation(f, c, o)
		}
		b, err := render(f)
		if err != nil {
			return fmt.Errorf("%w: connector %s operations: %w", ErrInvalid, c.ID, err)
		}
		out[name] = b
	}
	return nil
}

// servedAIR is the canonical AIR of doc with only its approved operations
// (the ones a gateway serves or reads; unapproved ones only weigh on the
// binary) and without the compiler version that wrote it (generated bytes
// carry no versions; the runtime does not read it).
func servedAIR(doc *air.Document) ([]byte, error) {
	d := *doc
	d.AnvilVersion = ""
	d.Operations = nil
	for _, op := range doc.Operations {
		if op.State == air.StateApproved {
			d.Operations = append(d.Operations, op)
		}
	}
	return air.Marshal(&d)
}

// operation prints everything of one operation.
func (g *generator) operation(f *jen.File, c *Connector, o *opInfo) {
	t, n, in := o.tool, o.names, o.in
	op := t.Op
	g.emitInput(f, t, n, in)
	g.emitBuild(f, t, n, in)
	g.emitEffect(f, c, t, n, in)

	dict := jen.Dict{
		jen.Id("ID"):       jen.Lit(op.ID),
		jen.Id("Decode"):   jen.Id(n.decode),
		jen.Id("FromArgs"): jen.Id(n.fromArgs),
		jen.Id("Build"):    jen.Id(n.build),
		jen.Id("Effect"):   jen.Id(n.effect),
	}
	if in.schemaCheck {
		dict[jen.Id("SchemaCheck")] = jen.True()
	}
	if op.Effect.Draft != nil {
		dict[jen.Id("Draft")] = jen.Id(n.draft)
	}
	f.Commentf("%s registers %s (%s).", o.base+"Op", t.Name, op.ID)
	f.Func().Id(o.base+"Op").Params().Op("*").Qual(pkgHandler, "Operation").Block(
		jen.Return(jen.Op("&").Qual(pkgHandler, "Operation").Values(dict)))
	f.Line()
}

// stringLit is a string literal: raw (backquoted) when s allows it, which
// keeps embedded JSON (the connector's AIR) readable.
func stringLit(s string) jen.Code {
	if utf8.ValidString(s) && !strings.ContainsAny(s, "`\r\x00\ufeff") {
		return jen.Op("`" + s + "`")
	}
	return jen.Lit(s)
}
