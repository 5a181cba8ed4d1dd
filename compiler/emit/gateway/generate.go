package gateway

import (
	"bytes"
	"fmt"
	"path"

	"github.com/dave/jennifer/jen"

	"github.com/anvil-dev/anvil/runtime/air"
)

// opsPerPackage bounds the operations printed into one package, so that a
// large workspace (GitHub's 1,000-odd operations) splits into packages go
// build compiles in parallel, in bounded memory, and caches one by one.
const opsPerPackage = 40

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
	return newFile(g.workspaceImport(), pkgName)
}

// newFile starts a generated file of package name at import path.
func newFile(path, name string) *jen.File {
	f := jen.NewFilePathName(path, name)
	f.HeaderComment(Header)
	f.ImportNames(packageNames)
	return f
}

// render prints a generated file (name, relative to the tree) and formats
// it as gofmt does, its imports grouped (the standard library first) by
// formatGrouped. Source that does not format is a generator
// bug: the *FormatError carries it, so the caller can show it.
func render(name string, f *jen.File) ([]byte, error) {
	f.NoFormat = true
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, name, err)
	}
	return formatSource(name, buf.Bytes())
}

// formatSource is render's formatting step.
func formatSource(name string, src []byte) ([]byte, error) {
	out, err := formatGrouped(src)
	if err != nil {
		return nil, &FormatError{Name: name, Source: src, Err: err}
	}
	return out, nil
}

func (g *generator) run() (map[string][]byte, error) {
	out := map[string][]byte{}
	used := map[string]bool{"Workspace": true}
	seen := map[string]bool{}
	wire := map[string]string{} // tool name -> operation id
	if c := Collisions(connectorIDs(g.ws)); len(c) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, c[0])
	}
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
			if err := checkSensitive(t.Op); err != nil {
				return nil, err
			}
			base := lowerName(t.Op.ID)
			if used[base] || used[base+"Input"] {
				base = lowerName(c.ID + "_" + t.Op.ID)
			}
			base = uniqueName(base, used)
			n := newOpNames(base)
			for _, x := range []string{n.input, n.decode, n.build, n.effect, n.draft} {
				used[x] = true
			}
			info := &opInfo{tool: t, names: n, base: base, in: analyseInput(n.input, t.Op)}
			g.ops[c.ID] = append(g.ops[c.ID], info)
		}
	}

	// main_gen.go
	mf := newFile(path.Join(g.ws.ImportPath, g.ws.Yard), "main")
	mf.ImportName(g.workspaceImport(), pkgName)
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
	b, err := render("main_gen.go", mf)
	if err != nil {
		return nil, err
	}
	out["main_gen.go"] = b

	// workspace/workspace_gen.go
	wf := g.newFile()
	wf.PackageComment("Package workspace is the compiled workspace of the " + g.ws.Yard + " gateway: one")
	wf.PackageComment("Connector per served bundle, with typed handlers for every operation.")
	wf.Comment("The generated code targets this version of the runtime's handler API;")
	wf.Comment("a runtime without it does not compile this package.")
	wf.Var().Id("_").Op("=").Qual(pkgHandler, "RuntimeVersion2")
	var conns []jen.Code
	for _, c := range g.ws.Connectors {
		conns = append(conns, jen.Id(g.conns[c.ID]).Call())
	}
	wf.Comment("Workspace returns the workspace this gateway serves.")
	wf.Func().Id("Workspace").Params().Op("*").Qual(pkgHandler, "Workspace").Block(
		jen.Return(jen.Op("&").Qual(pkgHandler, "Workspace").Values(jen.Dict{
			jen.Id("Connectors"): jen.Index().Op("*").Qual(pkgHandler, "Connector").Values(conns...),
		})))
	if b, err = render(pkgName+"/workspace_gen.go", wf); err != nil {
		return nil, err
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

// chunkDir is the directory, relative to the workspace package, of one
// connector's operation package number i; chunkPkg is its package name.
func chunkDir(stem string, i int) string { return fmt.Sprintf("%s/%s", stem, chunkPkg(i)) }

func chunkPkg(i int) string { return fmt.Sprintf("ops%03d", i) }

// chunks splits a connector's operations into the groups printed as one
// package each. Every operation whose draft mapping names another served
// operation shares that operation's package (the mapping builds the draft's
// typed input, whose fields are unexported); otherwise groups hold
// opsPerPackage operations in AIR order. Small packages keep the compiler's
// peak memory per package low and let go build compile them in parallel and
// cache them one by one.
func (g *generator) chunks(c *Connector) [][]*opInfo {
	ops := g.ops[c.ID]
	byID := map[string]int{}
	for i, o := range ops {
		byID[o.tool.Op.ID] = i
	}
	// Union-find over draft edges.
	parent := make([]int, len(ops))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i, o := range ops {
		if d := o.tool.Op.Effect.Draft; d != nil {
			if j, ok := byID[d.Operation]; ok {
				a, b := find(i), find(j)
				if a > b {
					a, b = b, a
				}
				parent[b] = a
			}
		}
	}
	// Components in order of their first operation, packed greedily.
	members := map[int][]*opInfo{}
	var roots []int
	for i, o := range ops {
		r := find(i)
		if members[r] == nil {
			roots = append(roots, r)
		}
		members[r] = append(members[r], o)
	}
	var out [][]*opInfo
	var cur []*opInfo
	for _, r := range roots {
		m := members[r]
		if len(cur) > 0 && len(cur)+len(m) > opsPerPackage {
			out = append(out, cur)
			cur = nil
		}
		cur = append(cur, m...)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// connector prints one connector's table (workspace/<stem>_gen.go, with its
// AIR embedded from workspace/<stem>.air.json) and its operation packages
// (workspace/<stem>/opsNNN/ops_gen.go).
func (g *generator) connector(out map[string][]byte, c *Connector) error {
	stem := fileStem(c.ID)
	doc := c.Doc
	aj, err := servedAIR(doc)
	if err != nil {
		return fmt.Errorf("%w: connector %s: %w", ErrInvalid, c.ID, err)
	}
	chunks := g.chunks(c)
	table := g.newFile()
	var opCalls []jen.Code
	for i, ch := range chunks {
		dir := chunkDir(stem, i)
		imp := path.Join(g.workspaceImport(), dir)
		table.ImportName(imp, chunkPkg(i))
		opCalls = append(opCalls, jen.Qual(imp, "Ops").Call())
		f := newFile(imp, chunkPkg(i))
		f.PackageComment(fmt.Sprintf("Package %s holds the generated handlers of %d operations of connector %s", chunkPkg(i), len(ch), c.ID))
		f.PackageComment(fmt.Sprintf("(%s to %s).", ch[0].tool.Op.ID, ch[len(ch)-1].tool.Op.ID))
		var regs []jen.Code
		for _, o := range ch {
			regs = append(regs, g.operation(f, c, o).Op(","))
		}
		f.Comment("Ops returns this package's operations, one line each.")
		f.Func().Id("Ops").Params().Index().Op("*").Qual(pkgHandler, "Operation").Block(
			jen.Return(jen.Index().Op("*").Qual(pkgHandler, "Operation").Custom(jen.Options{Open: "{", Close: "}", Multi: true}, regs...)))
		name := pkgName + "/" + dir + "/ops_gen.go"
		b, err := render(name, f)
		if err != nil {
			return err
		}
		out[name] = b
	}

	f := table
	f.Anon("embed")
	airName := g.conns[c.ID] + "AIR"
	airFile := stem + ".air.json"
	f.Commentf("%s is the AIR of connector %s (service %s), its approved operations only:", airName, c.ID, doc.Service.ID)
	f.Comment("the runtime reads every operation's policies, schema and listing from it.")
	f.Comment("It is data, not code: the compiler only copies it into the binary.")
	f.Comment("")
	f.Comment("//go:embed " + airFile)
	f.Var().Id(airName).String()
	f.Line()
	f.Commentf("%s is connector %s with its generated handlers.", g.conns[c.ID], c.ID)
	f.Func().Id(g.conns[c.ID]).Params().Op("*").Qual(pkgHandler, "Connector").Block(
		jen.Return(jen.Op("&").Qual(pkgHandler, "Connector").Values(jen.Dict{
			jen.Id("ID"):         jen.Lit(c.ID),
			jen.Id("AIR"):        jen.Id(airName),
			jen.Id("BundleHash"): jen.Lit(c.BundleHash),
			jen.Id("Ops"):        jen.Qual("slices", "Concat").Call(opCalls...),
		})))
	b, err := render(pkgName+"/"+stem+"_gen.go", f)
	if err != nil {
		return err
	}
	out[pkgName+"/"+stem+"_gen.go"] = b
	out[pkgName+"/"+airFile] = aj
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
	return air.EncodeDocument(&d)
}

// operation prints everything of one operation and returns its line of
// the Ops table (a handler.Operation literal: a nil Effect is effect.Build's).
func (g *generator) operation(f *jen.File, c *Connector, o *opInfo) *jen.Statement {
	t, n, in := o.tool, o.names, o.in
	op := t.Op
	g.emitInput(f, t, n, in)
	g.emitBuild(f, t, n, in)
	g.emitEffect(f, c, t, n, in)
	fields := []jen.Code{jen.Id("ID").Op(":").Lit(op.ID)}
	if in.schemaCheck {
		fields = append(fields, jen.Id("SchemaCheck").Op(":").True())
	}
	fields = append(fields, jen.Id("Decode").Op(":").Id(n.decode), jen.Id("Build").Op(":").Id(n.build))
	if mapsArguments(op) {
		fields = append(fields, jen.Id("Effect").Op(":").Id(n.effect))
	}
	if op.Effect.Draft != nil {
		fields = append(fields, jen.Id("Draft").Op(":").Id(n.draft))
	}
	return jen.Values(fields...)
}
