package openapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Diagnostic codes. Errors are fatal: Load returns a *diag.Failure holding
// every error found (sorted, with positions where one exists). Warnings land
// in Spec.Diagnostics.
//
// Errors:
//   - spec/unreadable: the entry file (or a file a $ref names) cannot be
//     read: missing, not a regular file, or larger than Options.MaxFileSize.
//   - spec/empty: the entry file holds nothing (or only whitespace and comments).
//   - spec/invalid_yaml: a YAML syntax error (including a truncated file),
//     nesting deeper than 1000 levels, or aliases that expand too far.
//   - spec/invalid_json: a JSON syntax error (a file whose first character is
//     '{' or '[' is read as JSON).
//   - spec/not_an_object: the document's top level is not an object.
//   - spec/missing_version: neither "openapi" nor "swagger" is set.
//   - spec/unsupported_version: a version other than OpenAPI 3.0.x, 3.1.x
//     or Swagger 2.0.
//   - spec/no_paths: the document has no "paths".
//   - spec/no_operations: "paths" is empty or declares no operation.
//   - spec/invalid_structure: an object, list or scalar where the
//     description needs another shape (for example "parameters" that is not a
//     list, or a "responses" that is not an object).
//   - spec/invalid_parameter: a parameter without a name or with an unknown
//     "in".
//   - spec/invalid_ref: a "$ref" that is not a string, uses an unsupported URI
//     scheme, or whose fragment is not a JSON pointer.
//   - spec/remote_ref: a "$ref" to an http(s) URL; only local files are read.
//   - spec/ref_outside_base: a "$ref" to a file outside the base directory
//     (Options.Base, by default the entry document's directory), lexically
//     or through a symbolic link; nothing outside is read. Also an entry
//     document outside an explicit base.
//   - spec/dangling_ref: a "$ref" whose file or JSON pointer does not exist.
//   - spec/ref_cycle: "$ref"s among parameters, request bodies, responses,
//     path items (or other non-schema objects) that form a cycle. (Schemas may
//     be recursive: they refer to each other by name.)
//   - spec/duplicate_operation_id: two operations share an operationId; the
//     message names both positions.
//   - spec/too_complex: resolving the description would take more than a
//     bounded amount of work (for example YAML aliases multiplied by $refs).
//
// Warnings:
//   - spec/undeclared_path_param: a {name} in a path template with no path
//     parameter of that name.
//   - spec/unused_path_param: a path parameter that the template lacks.
//   - spec/path_param_not_required: a path parameter not marked required (it
//     is loaded as required).
//   - spec/duplicate_parameter: the same name and "in" twice in one list (the
//     first is kept).
//   - spec/invalid_path: a key under "paths" that does not start with "/"
//     (skipped).
//   - spec/invalid_schema: a schema keyword with a value of the wrong shape
//     (the keyword is ignored).
//   - spec/unknown_security_scheme: a security requirement names a scheme
//     that is not declared.
//   - spec/invalid_security_scheme: a security scheme with a missing or
//     unknown type (skipped).
//   - spec/empty_request_body: a request body that declares no media type
//     (the operation is loaded without a body).
//   - spec/empty_parameter_name: a parameter whose "name" is the empty
//     string (skipped; a Swagger body parameter, whose name is never sent,
//     is kept as "body" without a warning).
//   - spec/unsupported_pattern: schema patterns that Go's RE2 engine (which
//     the gateway validates arguments with) cannot run as written; they are
//     loosened (lookarounds removed, repeat counts capped at 1000) or
//     dropped (backreferences, class intersection). One warning per
//     description counts them and names the first; exact rewrites (\uXXXX
//     escapes, Java's \p{Alpha} classes) are silent.
const (
	CodeUnreadable            = "spec/unreadable"
	CodeEmpty                 = "spec/empty"
	CodeInvalidYAML           = "spec/invalid_yaml"
	CodeInvalidJSON           = "spec/invalid_json"
	CodeNotAnObject           = "spec/not_an_object"
	CodeMissingVersion        = "spec/missing_version"
	CodeUnsupportedVersion    = "spec/unsupported_version"
	CodeNoPaths               = "spec/no_paths"
	CodeNoOperations          = "spec/no_operations"
	CodeInvalidStructure      = "spec/invalid_structure"
	CodeInvalidParameter      = "spec/invalid_parameter"
	CodeInvalidRef            = "spec/invalid_ref"
	CodeRemoteRef             = "spec/remote_ref"
	CodeDanglingRef           = "spec/dangling_ref"
	CodeRefCycle              = "spec/ref_cycle"
	CodeDuplicateOperationID  = "spec/duplicate_operation_id"
	CodeTooComplex            = "spec/too_complex"
	CodeUndeclaredPathParam   = "spec/undeclared_path_param"
	CodeUnusedPathParam       = "spec/unused_path_param"
	CodePathParamNotRequired  = "spec/path_param_not_required"
	CodeDuplicateParameter    = "spec/duplicate_parameter"
	CodeInvalidPath           = "spec/invalid_path"
	CodeInvalidSchema         = "spec/invalid_schema"
	CodeUnknownSecurityScheme = "spec/unknown_security_scheme"
	CodeInvalidSecurityScheme = "spec/invalid_security_scheme"
	CodeEmptyRequestBody      = "spec/empty_request_body"
	CodeUnsupportedPattern    = "spec/unsupported_pattern"
	CodeEmptyParameterName    = "spec/empty_parameter_name"
)

const (
	defaultMaxFileSize        = 256 << 20
	maxErrors                 = 200
	maxRefHops                = 64
	schemaDefsPrefix          = "#/$defs/"
	workPerNode               = 40
	minWork                   = 4 << 20
	errNoFileSystem           = "no file system to read it from (the description was given as bytes)"
	msgUnsupportedVersionHint = "supported: OpenAPI 3.0.x, 3.1.x and Swagger 2.0"
)

// Options configures Load and LoadBytes. The zero value (or nil) reads files
// from the operating system.
type Options struct {
	// FS, when set, is the file system that the entry file and every file a
	// $ref names are read from; paths are then slash-separated and relative
	// to its root (see io/fs.ValidPath). When nil, Load reads the operating
	// system's files and LoadBytes resolves same-document references only.
	FS fs.FS
	// MaxFileSize caps the size of any one file read; zero means 256 MiB.
	MaxFileSize int64
	// OnRead, when set, is called with every file read (its name as used in
	// positions, and the exact bytes the loader then parses), once per file.
	// The source snapshot is built from it.
	OnRead func(name string, data []byte)
	// Base is the directory that every file a $ref names must lie in
	// (symbolic links resolved); a $ref leaving it is refused with
	// spec/ref_outside_base before anything is read. Empty means the entry
	// document's directory when reading the operating system's files, and
	// the root of FS when FS is set. An OS path, or a slash path in FS; it
	// must hold the entry document.
	Base string
	// AllMediaTypes also loads the media types a request body or response
	// declares besides the one chosen for it (RequestBody.Others,
	// Response.Others): `anvil diff` compares them all, a compile needs
	// only the chosen one.
	AllMediaTypes bool
}

// Load reads the description at path (YAML or JSON, told apart by content),
// resolves its local references (same document and other files, relative to
// the referring file) and returns the loaded Spec. Positions in diagnostics
// name files as path does (other files joined to its directory).
//
// A fatal problem is returned as a *diag.Failure whose diagnostics carry a
// spec/* code (see the Code constants); non-fatal findings are in
// Spec.Diagnostics.
//
// How the model is filled:
//   - Schemas: a $ref to a schema becomes {"$ref": "#/$defs/<name>"} and the
//     target is converted once into Spec.Schemas[<name>]. The entry document's
//     components/schemas (definitions for Swagger 2.0) keep their names
//     (characters outside [A-Za-z0-9._-] become "_"); other targets are named
//     after the last pointer token when it sits under schemas, definitions or
//     $defs, after the joined pointer tokens otherwise, or after the file's
//     stem for a whole-file $ref; a collision adds the file stem ("common_Error"),
//     then "_2", "_3"... Only referenced schemas are in Spec.Schemas.
//     nullable (3.0) and x-nullable (2.0) add "null" to the type list (and to
//     an enum); a typeless nullable oneOf/anyOf gets a {"type":"null"} branch
//     and a nullable allOf is wrapped as anyOf [{allOf...}, {"type":"null"}].
//     Boolean exclusiveMinimum/Maximum become the 2020-12 numeric forms,
//     "example" joins "examples", Swagger's type "file" is a binary string,
//     $defs are dropped (their members are reachable by $ref), and unknown
//     keywords are dropped. In 3.1, keywords beside a $ref are kept. A
//     "pattern" that Go's RE2 cannot compile is rewritten for it (see
//     spec/unsupported_pattern).
//   - Parameters, request bodies, responses, path items, security schemes
//     and examples referenced with $ref are inlined.
//   - Params: path-level first, an operation parameter with the same name
//     and "in" replaces it in place. Path parameters are always Required.
//     Example is "example", else the value of the first of "examples".
//     A parameter declared with "content" takes that media type's schema.
//   - RequestBody is nil when the operation has none or it declares no
//     media type. ContentType (as written) is chosen: application/json, then
//     any +json, then application/x-www-form-urlencoded, then
//     multipart/form-data, then the first declared. Schema may be nil.
//   - Responses keep their written order; ContentType is chosen the same way
//     and is "" (with a nil Schema) for a response without content.
//   - Servers substitute server variables with their defaults (a variable
//     without one, with its enum's first value).
//   - Extensions hold the operation's x-* members as compact JSON.
func Load(path string, opts *Options) (*Spec, error) {
	l := newLoader(opts, true)
	name := filepath.ToSlash(path)
	data, err := l.read(name, false)
	if err != nil {
		return nil, diag.Fail(diag.Pos{File: name}, CodeUnreadable, "cannot read %s: %s", name, err)
	}
	if f := l.confine(name); f != nil {
		return nil, f
	}
	defer l.jail.close()
	return l.run(name, data)
}

// LoadBytes loads a description held in memory, named name in positions. It
// resolves references within the same document, and references to other
// files only when opts.FS is set (relative to name within it).
func LoadBytes(name string, data []byte, opts *Options) (*Spec, error) {
	l := newLoader(opts, false)
	name = filepath.ToSlash(name)
	if f := l.confine(name); f != nil {
		return nil, f
	}
	defer l.jail.close()
	return l.run(name, data)
}

// document is one parsed file.
type document struct {
	name string // as used in positions
	root *node
	bad  bool // could not be read or parsed (already reported)
}

// named is a schema that is (or may become) a "#/$defs/<name>" entry.
type named struct {
	name   string
	doc    *document
	node   *node
	queued bool
}

type diagKey struct {
	pos  diag.Pos
	code string
	msg  string
}

// loader holds the state of one Load call.
type loader struct {
	opts    Options
	osFiles bool // read other files from the OS when opts.FS is nil
	kind    string
	entry   *document
	docs    map[string]*document
	errs    diag.List
	warns   diag.List
	seen    map[diagKey]bool
	work    int // remaining work units
	tooMuch bool
	nodes   int // parsed nodes, for the work budget

	names     map[*node]*named
	taken     map[string]bool
	suffix    map[string]int // next numeric suffix to try per base name
	queue     []*named
	schemas   map[string]*air.Schema
	jsonBuf   []byte
	index     map[*node]map[string]int // keys of large objects
	following int                      // nesting of follow calls
	patterns  patternStats             // patterns RE2 cannot run as written
	jail      *confinement             // where referenced files may be read from
}

func newLoader(opts *Options, osFiles bool) *loader {
	l := &loader{
		osFiles: osFiles,
		docs:    map[string]*document{},
		seen:    map[diagKey]bool{},
		names:   map[*node]*named{},
		taken:   map[string]bool{},
		schemas: map[string]*air.Schema{},
	}
	if opts != nil {
		l.opts = *opts
	}
	if l.opts.MaxFileSize <= 0 {
		l.opts.MaxFileSize = defaultMaxFileSize
	}
	return l
}

// run parses the entry document and loads it.
func (l *loader) run(name string, data []byte) (*Spec, error) {
	sum := sha256.Sum256(data)
	root, f := l.parse(name, data, true)
	if f != nil {
		return nil, f
	}
	l.entry = &document{name: name, root: root}
	l.docs[path.Clean(name)] = l.entry
	l.work = l.nodes*workPerNode + minWork

	spec := &Spec{File: name, SourceHash: "sha256:" + hex.EncodeToString(sum[:])}
	if f := l.version(spec); f != nil {
		return nil, f
	}
	if spec.Kind == KindSwagger20 {
		l.loadV2(spec)
	} else {
		l.loadV3(spec)
	}
	l.drainSchemas()
	l.reportPatterns()
	if len(l.errs) > 0 {
		l.errs.Sort()
		return nil, &diag.Failure{Diagnostics: l.errs}
	}
	spec.Schemas = l.schemas
	l.warns.Sort()
	spec.Diagnostics = l.warns
	return spec, nil
}

// confine sets up the base directory for the entry document name.
func (l *loader) confine(name string) *diag.Failure {
	c, err := newConfinement(&l.opts, l.osFiles, name)
	if err != nil {
		return diag.Fail(diag.Pos{File: name}, CodeRefOutsideBase, "%s", err)
	}
	l.jail = c
	return nil
}

// version reads "openapi" or "swagger" and sets spec.Kind.
func (l *loader) version(spec *Spec) *diag.Failure {
	root := l.entry.root
	if m := root.member("openapi"); m != nil {
		v := m.val.text()
		switch {
		case m.val.kind != kString && m.val.kind != kNumber:
			return diag.Fail(l.pos(l.entry, m.val), CodeUnsupportedVersion, "\"openapi\" must be a version string such as \"3.0.3\", not %s", m.val.kind)
		case v == "3.0" || strings.HasPrefix(v, "3.0."):
			spec.Kind = KindOpenAPI30
		case v == "3.1" || strings.HasPrefix(v, "3.1."):
			spec.Kind = KindOpenAPI31
		default:
			return diag.Fail(l.pos(l.entry, m.val), CodeUnsupportedVersion, "unsupported OpenAPI version %s (%s)", quote(v), msgUnsupportedVersionHint)
		}
	} else if m := root.member("swagger"); m != nil {
		v := m.val.text()
		if v != "2.0" {
			return diag.Fail(l.pos(l.entry, m.val), CodeUnsupportedVersion, "unsupported Swagger version %s (%s)", quote(v), msgUnsupportedVersionHint)
		}
		spec.Kind = KindSwagger20
	} else {
		return diag.Fail(diag.Pos{File: l.entry.name, Line: int(root.line), Col: int(root.col)}, CodeMissingVersion, "the document sets neither \"openapi\" nor \"swagger\" (%s)", msgUnsupportedVersionHint)
	}
	l.kind = spec.Kind
	return nil
}

// read reads one file, refusing non-regular and oversized files. A file a
// $ref names (ref set) is read through the confinement's base.
func (l *loader) read(name string, ref bool) ([]byte, error) {
	var (
		fi  fs.FileInfo
		f   io.ReadCloser
		err error
	)
	if l.opts.FS != nil {
		name = path.Clean(name)
		if !fs.ValidPath(name) {
			return nil, fmt.Errorf("%s is not a valid path in the file system", quote(name))
		}
		fi, err = fs.Stat(l.opts.FS, name)
		if err == nil && fi.Mode().IsRegular() {
			f, err = l.opts.FS.Open(name)
		}
	} else if l.osFiles && ref && l.jail != nil {
		var of *os.File
		fi, of, err = l.jail.open(name)
		if of != nil {
			f = of
		}
	} else if l.osFiles {
		osName := filepath.FromSlash(name)
		fi, err = os.Stat(osName)
		if err == nil && fi.Mode().IsRegular() {
			f, err = os.Open(osName)
		}
	} else {
		return nil, errors.New(errNoFileSystem)
	}
	if err != nil {
		return nil, describeFSError(err)
	}
	if !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, errors.New("it is a directory")
		}
		return nil, errors.New("it is not a regular file")
	}
	defer f.Close()
	if fi.Size() > l.opts.MaxFileSize {
		return nil, fmt.Errorf("it is larger than %d bytes", l.opts.MaxFileSize)
	}
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, l.opts.MaxFileSize+1)); err != nil {
		return nil, describeFSError(err)
	}
	data := buf.Bytes()
	if int64(len(data)) > l.opts.MaxFileSize {
		return nil, fmt.Errorf("it is larger than %d bytes", l.opts.MaxFileSize)
	}
	if l.opts.OnRead != nil {
		l.opts.OnRead(name, data)
	}
	return data, nil
}

func describeFSError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parse parses data (YAML or JSON). For the entry document (entry set) an
// empty file and a top level that is not an object are fatal too.
func (l *loader) parse(name string, data []byte, entry bool) (*node, *diag.Failure) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, diag.Fail(diag.Pos{File: name}, CodeEmpty, "%s is empty", name)
	}
	ext := strings.ToLower(path.Ext(name))
	var root *node
	if (trimmed[0] == '{' || trimmed[0] == '[') && ext != ".yaml" && ext != ".yml" {
		p := &jsonParser{s: string(data), line: 1}
		p.ws()
		n := p.value()
		if p.err == nil {
			p.ws()
			if p.i < len(p.s) {
				p.fail("unexpected %s after the top-level value", p.describe())
			}
		}
		if p.err != nil {
			e := p.err
			return nil, diag.Fail(diag.Pos{File: name, Line: e.line, Col: e.col}, CodeInvalidJSON, "invalid JSON: %s", e.msg)
		}
		l.nodes += p.alloc.count
		root = n
	} else {
		n, count, e := parseYAML(data)
		if e != nil {
			return nil, diag.Fail(diag.Pos{File: name, Line: e.line, Col: e.col}, CodeInvalidYAML, "invalid YAML: %s", e.msg)
		}
		if n == nil {
			return nil, diag.Fail(diag.Pos{File: name}, CodeEmpty, "%s holds no YAML document (only comments or directives)", name)
		}
		l.nodes += count
		root = n
	}
	if entry && root.kind != kObject {
		return nil, diag.Fail(diag.Pos{File: name, Line: int(root.line), Col: int(root.col)}, CodeNotAnObject, "the top level of %s must be an object, not %s", name, root.kind)
	}
	return root, nil
}

// pos is the position of n in doc.
func (l *loader) pos(doc *document, n *node) diag.Pos {
	if n == nil {
		return diag.Pos{File: doc.name}
	}
	return diag.Pos{File: doc.name, Line: int(n.line), Col: int(n.col)}
}

// keyPos is the position of an object member's key in doc.
func (l *loader) keyPos(doc *document, m *member) diag.Pos {
	if !m.written {
		return l.pos(doc, m.val)
	}
	return diag.Pos{File: doc.name, Line: int(m.line), Col: int(m.col)}
}

// errorf records a fatal diagnostic (once).
func (l *loader) errorf(pos diag.Pos, code, format string, args ...any) {
	if len(l.errs) >= maxErrors {
		return
	}
	msg := fmt.Sprintf(format, args...)
	k := diagKey{pos, code, msg}
	if l.seen[k] {
		return
	}
	l.seen[k] = true
	l.errs = append(l.errs, diag.Diagnostic{Pos: pos, Level: diag.Error, Code: code, Message: msg})
}

// warnf records a warning (once).
func (l *loader) warnf(pos diag.Pos, code, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	k := diagKey{pos, code, msg}
	if l.seen[k] {
		return
	}
	l.seen[k] = true
	l.warns = append(l.warns, diag.Diagnostic{Pos: pos, Level: diag.Warning, Code: code, Message: msg})
}

// spend uses n units of the work budget; false once it is exhausted.
func (l *loader) spend(doc *document, at *node, n int) bool {
	l.work -= n
	if l.work >= 0 {
		return true
	}
	if !l.tooMuch {
		l.tooMuch = true
		l.errorf(l.pos(doc, at), CodeTooComplex, "resolving the description takes too much work (YAML aliases or $refs multiply it); giving up")
	}
	return false
}

// ---- references ----

// refString returns the $ref string of an object node, or ok=false.
func refOf(n *node) (*node, bool) {
	if n == nil || n.kind != kObject {
		return nil, false
	}
	r := n.get("$ref")
	return r, r != nil
}

// follow resolves the reference r (the value of a "$ref" written in doc).
// On failure it records an error and returns ok=false.
func (l *loader) follow(doc *document, r *node) (*document, *node, bool) {
	// A pointer may pass through other $refs (see below), which may lead
	// back into the same pointer: bound the nesting.
	l.following++
	defer func() { l.following-- }()
	if l.following > maxRefHops {
		l.errorf(l.pos(doc, r), CodeRefCycle, "$ref %s: JSON pointers pass through more than %d nested $refs (a cycle?)", quote(r.text()), maxRefHops)
		return nil, nil, false
	}
	if r.kind != kString {
		l.errorf(l.pos(doc, r), CodeInvalidRef, "$ref must be a string, not %s", r.kind)
		return nil, nil, false
	}
	ref := r.str
	lower := strings.ToLower(ref)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "//") {
		l.errorf(l.pos(doc, r), CodeRemoteRef, "remote $ref %s is refused: only local files can be referenced", quote(ref))
		return nil, nil, false
	}
	filePart, frag, hasFrag := strings.Cut(ref, "#")
	if i := strings.IndexAny(filePart, ":/"); i > 0 && filePart[i] == ':' {
		l.errorf(l.pos(doc, r), CodeInvalidRef, "$ref %s uses an unsupported URI scheme: only relative file paths and #/json/pointers are supported", quote(ref))
		return nil, nil, false
	}
	target := doc
	if filePart != "" {
		fp, err := url.PathUnescape(filePart)
		if err != nil {
			fp = filePart
		}
		if strings.HasPrefix(fp, "/") {
			l.errorf(l.pos(doc, r), CodeInvalidRef, "$ref %s is an absolute path: use a path relative to %s", quote(ref), doc.name)
			return nil, nil, false
		}
		joined := path.Join(path.Dir(doc.name), fp)
		if why := l.jail.check(l.opts.FS, joined); why != "" {
			l.errorf(l.pos(doc, r), CodeRefOutsideBase, "$ref %s is refused: %s", quote(ref), why)
			return nil, nil, false
		}
		var reason string
		target, reason = l.document(joined)
		if target == nil {
			l.errorf(l.pos(doc, r), CodeDanglingRef, "$ref %s does not resolve: %s", quote(ref), reason)
			return nil, nil, false
		}
	}
	if !hasFrag || frag == "" {
		return target, target.root, true
	}
	if !strings.HasPrefix(frag, "/") {
		l.errorf(l.pos(doc, r), CodeInvalidRef, "$ref %s: the fragment must be a JSON pointer starting with \"/\"", quote(ref))
		return nil, nil, false
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	cur := target.root
	curDoc := target
	walked := ""
	hops := 0
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		next := l.child(cur, tok)
		for next == nil && hops < maxRefHops {
			// A pointer may pass through a $ref'd object.
			rr, ok := refOf(cur)
			if !ok {
				break
			}
			hops++
			d2, n2, ok := l.follow(curDoc, rr)
			if !ok {
				return nil, nil, false
			}
			curDoc, cur = d2, n2
			next = l.child(cur, tok)
		}
		if next == nil {
			where := walked
			if where == "" {
				where = "the top level"
			} else {
				where = quote(where)
			}
			l.errorf(l.pos(doc, r), CodeDanglingRef, "$ref %s does not resolve: %s has no %s under %s", quote(ref), target.name, quote(tok), where)
			return nil, nil, false
		}
		walked += "/" + tok
		cur = next
	}
	return curDoc, cur, true
}

// child returns the member tok of an object or the element tok of a list.
// Large objects get an index, so that many pointers into one stay cheap.
func (l *loader) child(n *node, tok string) *node {
	switch n.kind {
	case kObject:
		if len(n.kids) <= 16 {
			return n.get(tok)
		}
		idx := l.index[n]
		if idx == nil {
			idx = make(map[string]int, len(n.kids))
			for i := len(n.kids) - 1; i >= 0; i-- {
				idx[n.kids[i].key] = i
			}
			if l.index == nil {
				l.index = map[*node]map[string]int{}
			}
			l.index[n] = idx
		}
		if i, ok := idx[tok]; ok {
			return n.kids[i].val
		}
		return nil
	case kArray:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(n.kids) || (len(tok) > 1 && tok[0] == '0') {
			return nil
		}
		return n.kids[i].val
	}
	return nil
}

// document returns the parsed document at name (loading it on first use),
// or nil and a reason.
func (l *loader) document(name string) (*document, string) {
	key := path.Clean(name)
	if d, ok := l.docs[key]; ok {
		if d.bad {
			return nil, fmt.Sprintf("%s could not be loaded", d.name)
		}
		return d, ""
	}
	d := &document{name: key}
	l.docs[key] = d
	data, err := l.read(key, true)
	if err != nil {
		d.bad = true
		return nil, fmt.Sprintf("cannot read %s: %s", key, err)
	}
	before := l.nodes
	root, f := l.parse(key, data, false)
	if f != nil {
		d.bad = true
		for _, e := range f.Diagnostics {
			l.errorf(e.Pos, e.Code, "%s", e.Message)
		}
		return nil, fmt.Sprintf("%s could not be parsed", key)
	}
	d.root = root
	l.work += (l.nodes - before) * workPerNode
	return d, ""
}

// responses reads an operation's responses object (either version): each
// status that is not an x- extension and whose value (after $ref) is an
// object becomes a Response with its status and description, which body
// fills in with the version's way of giving the schema.
func (l *loader) responses(doc *document, n *node, body func(rdoc *document, r *node, out *Response)) []*Response {
	resp := l.object(doc, n.member("responses"))
	if resp == nil {
		return nil
	}
	var out []*Response
	for i := range resp.kids {
		rm := &resp.kids[i]
		if strings.HasPrefix(rm.key, "x-") {
			continue
		}
		rdoc, r, ok := l.deref(doc, rm.val)
		if !ok {
			continue
		}
		if r.kind != kObject {
			l.errorf(l.pos(rdoc, r), CodeInvalidStructure, "response %s must be an object, not %s", quote(rm.key), r.kind)
			continue
		}
		res := &Response{Status: rm.key, Description: l.text(rdoc, r.member("description"))}
		body(rdoc, r, res)
		out = append(out, res)
	}
	return out
}

// deref follows the $ref chain of a non-schema object. A cycle is reported
// as spec/ref_cycle. On failure it returns ok=false (already reported).
func (l *loader) deref(doc *document, n *node) (*document, *node, bool) {
	var chain []*node
	var refs []string
	for {
		r, ok := refOf(n)
		if !ok {
			return doc, n, true
		}
		for i, c := range chain {
			if c == n {
				cyc := append(refs[i:], r.text())
				parts := make([]string, len(cyc))
				for j, s := range cyc {
					parts[j] = quote(s)
				}
				l.errorf(l.pos(doc, r), CodeRefCycle, "$ref cycle: %s", strings.Join(parts, " -> "))
				return nil, nil, false
			}
		}
		if len(chain) > maxRefHops {
			l.errorf(l.pos(doc, r), CodeRefCycle, "$ref chain longer than %d hops", maxRefHops)
			return nil, nil, false
		}
		chain = append(chain, n)
		refs = append(refs, r.text())
		d2, n2, ok := l.follow(doc, r)
		if !ok {
			return nil, nil, false
		}
		doc, n = d2, n2
	}
}

// rawJSON returns n as compact JSON.
func (l *loader) rawJSON(doc *document, n *node) []byte {
	budget := l.work
	if budget <= 0 {
		l.spend(doc, n, 1)
		return nil
	}
	b, ok := appendJSON(l.jsonBuf[:0], n, &budget)
	l.work = budget
	if !ok {
		l.spend(doc, n, 1)
		return nil
	}
	l.jsonBuf = b
	out := make([]byte, len(b))
	copy(out, b)
	return out
}
