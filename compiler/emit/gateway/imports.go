package gateway

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// formatGrouped formats src as gofmt does, with its one import block split
// into two groups, the standard library first and every other path after a
// blank line; gofmt then sorts each group. It is what goimports' format-only
// mode does for generated files, without linking golang.org/x/tools/imports
// into the CLI: that package makes ~/.cache/goimports when it loads, which
// every anvil command would then do.
//
// A path is the standard library's when its first element has no dot, the
// rule the go command applies to import paths.
func formatGrouped(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if decl := importBlock(f); decl != nil && !commented(f, decl) {
		src = regroup(src, fset, decl)
	}
	return format.Source(src)
}

// importBlock returns the file's parenthesised import declaration, or nil
// when it has none (no imports, or a single unparenthesised one that needs
// no grouping).
func importBlock(f *ast.File) *ast.GenDecl {
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT && g.Lparen.IsValid() {
			return g
		}
	}
	return nil
}

// commented reports whether a comment sits inside or on decl: such a block
// is left as gofmt leaves it, since moving specs could detach a comment from
// what it describes (the generator writes none there).
func commented(f *ast.File, decl *ast.GenDecl) bool {
	for _, c := range f.Comments {
		if c.Pos() >= decl.Pos() && c.End() <= decl.End() {
			return true
		}
	}
	return decl.Doc != nil
}

// regroup rewrites the text between decl's parentheses: each spec (name and
// path) on a line of its own, the standard library's first.
func regroup(src []byte, fset *token.FileSet, decl *ast.GenDecl) []byte {
	offset := func(p token.Pos) int { return fset.Position(p).Offset }
	var std, other []string
	for _, s := range decl.Specs {
		spec := s.(*ast.ImportSpec)
		text := string(src[offset(spec.Pos()):offset(spec.End())])
		path, _ := strconv.Unquote(spec.Path.Value)
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			other = append(other, text)
		} else {
			std = append(std, text)
		}
	}
	var b bytes.Buffer
	b.Write(src[:offset(decl.Lparen)+1])
	b.WriteByte('\n')
	for i, group := range [][]string{std, other} {
		if i > 0 && len(std) > 0 && len(other) > 0 {
			b.WriteByte('\n')
		}
		for _, line := range group {
			b.WriteString("\t" + line + "\n")
		}
	}
	b.Write(src[offset(decl.Rparen):])
	return b.Bytes()
}
