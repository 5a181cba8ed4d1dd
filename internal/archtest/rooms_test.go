package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// builders are the functions that build the gateway's state and inbound
// identity: the vault and its key, the audit log and its chain key, the
// state store, the token verifier and the OAuth service. runtime/serve, the composition
// root, calls them once and hands what they built to the rooms after it;
// no other room of the call path calls them (a door that opened a vault
// of its own would bypass the one every call reads).
var builders = map[string][]string{
	module + "/runtime/vault":         {"Open", "LoadKey"},
	module + "/runtime/audit":         {"Open", "OpenWith", "ChainKey"},
	module + "/runtime/store/backend": {"Open", "FromEnv"},
	module + "/runtime/auth":          {"NewVerifier"},
	module + "/runtime/connect":       {"New"},
	module + "/runtime/tokenexchange": {"New"},
}

// builderPackages are what only the composition root imports: the state
// store's constructors and backends (and the ledger's spool, which
// backend wraps around them), the token verifier and the implementations
// of the inbound identity.
var builderPackages = []string{
	module + "/runtime/store/backend",
	module + "/runtime/store/spool",
	module + "/runtime/store/embedded",
	module + "/runtime/store/pgstore",
	module + "/runtime/auth",
	module + "/runtime/identity/branchyard",
	module + "/runtime/identity/oidc",
	module + "/runtime/policy",
}

// TestOnlyServeBuildsState fails when a call-path package other than
// runtime/serve imports a builder package or calls a builder.
func TestOnlyServeBuildsState(t *testing.T) {
	checked := 0
	for _, p := range listPackages(t) {
		at := callLevel(p.ImportPath)
		if at <= 0 { // not on the call path, or serve itself
			continue
		}
		for _, imp := range p.Imports {
			if slices.Contains(builderPackages, imp) {
				t.Errorf("%s imports %s: only runtime/serve builds state and identity", p.ImportPath, imp)
			}
		}
		for _, name := range p.GoFiles {
			checked++
			for _, call := range callsOf(t, filepath.Join(p.Dir, name), builders) {
				t.Errorf("%s: %s calls %s: only runtime/serve builds state and identity", p.ImportPath, name, call)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no call-path source file was checked")
	}
}

// callsOf lists the calls in file of the functions table names, by import
// path, as "<import path>.<name>", whatever local name the import has.
func callsOf(t *testing.T, file string, table map[string][]string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // local name → import path, for the table's packages
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := table[path]; !ok {
			continue
		}
		local := filepath.Base(path)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		names[local] = path
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if path, ok := names[id.Name]; ok && slices.Contains(table[path], sel.Sel.Name) {
			out = append(out, path+"."+sel.Sel.Name)
		}
		return true
	})
	return out
}
