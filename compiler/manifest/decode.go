package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/compiler/diag"
	"go.yaml.in/yaml/v3"
)

// Diagnostic codes reported by the decoder. Every one is an error: a
// manifest with any of them is unusable.
const (
	// CodeParseError: the file is not well-formed YAML, holds more than one
	// document, or expands aliases beyond the decoder's budget.
	CodeParseError = "manifest/parse_error"
	// CodeReadError: the file could not be read (Load only).
	CodeReadError = "manifest/read_error"
	// CodeUnknownKey: a mapping holds a key its grammar does not define.
	CodeUnknownKey = "manifest/unknown_key"
	// CodeDuplicateKey: a mapping holds the same key twice.
	CodeDuplicateKey = "manifest/duplicate_key"
	// CodeType: a value has the wrong YAML type (a string where a boolean is
	// expected, a list where a mapping is expected, and so on).
	CodeType = "manifest/type"
	// CodeInvalidValue: a value has the right type but is not one of the
	// allowed values or is out of range.
	CodeInvalidValue = "manifest/invalid_value"
	// CodeMissingKey: a block of the effect grammar lacks a key it requires
	// (operation of a follow-up, by of a lookup, handle and promote of a draft).
	CodeMissingKey = "manifest/missing_key"
)

// Aliases let a small document stand for a huge one ("billion laughs", a
// merge key listing one anchor many times, a long string repeated), so the
// work they add is budgeted. Walking a node reached through an alias (the
// alias, the node it names, everything under it and every mapping entry)
// costs one unit, copying a scalar or key into a JSON value through an alias
// costs one more unit per bytesPerUnit bytes, and reporting a problem found
// through an alias costs diagnosticCost units. A document may spend
// baseExpansion + expansionPerNode × (its node count) units; honest
// manifests, whose anchors expand to a small multiple of the document, stay
// far below. Nodes not reached through an alias need no budget: the decoder
// walks each of them a bounded number of times.
//
// Expansion through aliases can also nest deeper than the parser lets a
// document nest (10000 flow levels and 10000 indentation levels); the decoder
// refuses to nest deeper than maxNesting collections.
const (
	baseExpansion    = 1 << 16
	expansionPerNode = 1
	bytesPerUnit     = 64
	diagnosticCost   = 16
	maxNesting       = 20000 + 100
)

// Load reads and decodes the manifest at path. Positions use path as given.
// A file that cannot be read yields a manifest/read_error diagnostic and an
// empty manifest.
func Load(path string) (*Manifest, diag.List) {
	data, err := os.ReadFile(path)
	if err != nil {
		var l diag.List
		reason := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			reason = pe.Err.Error()
		}
		l.Errorf(diag.Pos{File: path}, CodeReadError, "cannot read manifest: %s", reason)
		return &Manifest{File: path}, l
	}
	return Decode(path, data)
}

// Decode decodes the anvil.yaml document data, naming it file in positions.
//
// It always returns a non-nil manifest holding whatever could be decoded,
// and the diagnostics sorted by position. If any diagnostic is an error the
// manifest must be treated as unusable. An empty document (no content, only
// comments, or a null) is an empty manifest and no error.
//
// Positions: a block's Pos is the position of the key that introduces it
// (for an operation, the same as KeyPos; for a workflow or capability, its
// id); the other *Pos fields point at the value they describe.
//
// Values are kept as written: operation references are not resolved, paths
// are not parsed, and auth type "oauth2" (legacy) is kept as "oauth2".
//
// Decoding takes time about linear in the size of data. Aliases and merge
// keys may make the document expand only by a bounded amount (a fixed
// allowance plus one node for each node written); a document that expands
// more, or nests deeper through aliases than YAML lets it nest, is refused
// with a manifest/parse_error at the node where the walk stopped.
func Decode(file string, data []byte) (*Manifest, diag.List) {
	d := &decoder{file: file}
	return d.decode(data)
}

// decode is Decode with the decoder's counters left for the tests.
func (d *decoder) decode(data []byte) (m *Manifest, diags diag.List) {
	file := d.file
	m = &Manifest{File: file}
	defer func() {
		// The YAML library reports some failures by panicking internally;
		// never let one escape to the caller.
		if r := recover(); r != nil {
			m = &Manifest{File: file}
			diags = diag.List{{Pos: diag.Pos{File: file, Line: 1}, Level: diag.Error, Code: CodeParseError,
				Message: "the YAML document cannot be decoded"}}
		}
	}()
	root, ok := d.parse(data)
	if ok && root != nil {
		d.manifest(root, m)
	}
	d.diags.Sort()
	return m, dedupe(d.diags)
}

// dedupe drops repeated identical diagnostics from a sorted list (an anchor
// reached through several aliases can report the same problem twice),
// reusing its storage.
func dedupe(l diag.List) diag.List {
	out := l[:0]
	for _, x := range l {
		if len(out) > 0 && x == out[len(out)-1] {
			continue
		}
		out = append(out, x)
	}
	return out
}

// decoder walks a YAML node tree, collecting diagnostics.
type decoder struct {
	file  string
	diags diag.List
	// nodes is the document's node count; steps counts the nodes and
	// mapping entries walked, through aliases or not (work the tests check
	// stays linear).
	nodes, steps int
	// expansion counts the units spent through aliases, at most
	// maxExpansion (see baseExpansion).
	expansion, maxExpansion int
	aliased                 int                 // aliases being expanded around the current node
	nesting                 int                 // collections being walked around the current node
	aborted                 bool                // a budget ran out or an alias contains itself; stop walking
	inAlias                 map[*yaml.Node]bool // anchors being expanded, to catch cycles
	redact                  bool                // inside auth: do not repeat values in messages
	// protected: '?' was replaced by standIn before parsing (see protect).
	protected bool
}

// standIn replaces '?' inside plain scalars while parsing. It is one
// character (a private-use code point), so line and column numbers do not
// move.
const standIn = "\uE03F"

// protect works around the YAML parser's YAML 1.1 rule that ends a plain
// scalar at '?' inside a flow collection, which would reject the documented
// style `{ name: request.name? }` (YAML 1.2 allows it). Every '?' that
// follows a character that can continue a plain scalar is replaced by
// standIn; restore puts them back in every scalar, anchor and alias. Input
// that already holds standIn is left alone.
func protect(data []byte) ([]byte, bool) {
	if bytes.IndexByte(data, '?') < 0 || bytes.Contains(data, []byte(standIn)) {
		return data, false
	}
	var out bytes.Buffer
	out.Grow(len(data) + 16)
	changed := false
	for i, c := range data {
		if c == '?' && i > 0 && !strings.ContainsRune(" \t\r\n,[]{}", rune(data[i-1])) {
			out.WriteString(standIn)
			changed = true
			continue
		}
		out.WriteByte(c)
	}
	if !changed {
		return data, false
	}
	return out.Bytes(), true
}

// walk counts the nodes of the parsed tree (not following aliases) and,
// with restore set, undoes protect in every scalar, anchor and alias.
func walk(n *yaml.Node, restore bool) int {
	count := 0
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		count++
		if restore {
			n.Value = strings.ReplaceAll(n.Value, standIn, "?")
			n.Anchor = strings.ReplaceAll(n.Anchor, standIn, "?")
		}
		stack = append(stack, n.Content...)
	}
	return count
}

var lineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// parse returns the document's root node, nil for an empty document, and
// false after a parse error.
func (d *decoder) parse(data []byte) (*yaml.Node, bool) {
	src := data
	data, d.protected = protect(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, true
		}
		d.parseError(err, src)
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errorf(d.pos(&extra), CodeParseError, "a manifest is a single YAML document; found another document here")
		return nil, false
	} else if !errors.Is(err, io.EOF) {
		d.parseError(err, src)
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, true
	}
	d.nodes = walk(&doc, d.protected)
	d.maxExpansion = baseExpansion + expansionPerNode*d.nodes
	return doc.Content[0], true
}

// parserProblems are the YAML library's parser (not scanner) errors. It
// reports their line 0-based, and the scanner's 1-based.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

var anchorRE = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// parseError records a YAML syntax error at the line the parser names, or
// where the problem can be found in data, or else line 1.
func (d *decoder) parseError(err error, data []byte) {
	msg := err.Error()
	if d.protected {
		msg = strings.ReplaceAll(msg, standIn, "?")
	}
	pos := diag.Pos{File: d.file, Line: 1}
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		msg = msg[len(m[0]):]
		if n, e := strconv.Atoi(m[1]); e == nil && n > 0 {
			pos.Line = n
			if parserProblems[msg] {
				pos.Line++
			}
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
		if parserProblems[msg] {
			// Both marks were on the first line.
		} else if off := problemOffset(msg, data); off >= 0 {
			pos.Line, pos.Col = lineCol(data, off)
		}
	}
	if m := anchorRE.FindStringSubmatch(msg); m != nil {
		msg = "unknown anchor '" + clip(m[1]) + "' referenced"
	}
	d.errorf(pos, CodeParseError, "%s", msg)
}

// problemOffset finds the byte offset of a problem the YAML library reports
// without a position: an invalid UTF-8 byte, a control character or an
// unknown anchor. It returns -1 when it cannot tell.
func problemOffset(msg string, data []byte) int {
	switch {
	case strings.Contains(msg, "UTF-8"):
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return i
			}
			i += size
		}
	case strings.Contains(msg, "control characters"):
		for i, r := range string(data) {
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r <= 0x9f && r != 0x85 || r == 0xfffe || r == 0xffff {
				return i
			}
		}
	default:
		if m := anchorRE.FindStringSubmatch(msg); m != nil {
			return bytes.Index(data, []byte("*"+m[1]))
		}
	}
	return -1
}

// lineCol converts a byte offset to a 1-based line and column (in characters).
func lineCol(data []byte, off int) (int, int) {
	line, start := 1, 0
	for i := 0; i < off && i < len(data); i++ {
		if data[i] == '\n' {
			line++
			start = i + 1
		}
	}
	if off > len(data) {
		off = len(data)
	}
	return line, utf8.RuneCount(data[start:off]) + 1
}

// pos is the position of n.
func (d *decoder) pos(n *yaml.Node) diag.Pos {
	if n == nil {
		return diag.Pos{File: d.file, Line: 1}
	}
	line := n.Line
	if line < 1 {
		line = 1
	}
	return diag.Pos{File: d.file, Line: line, Col: n.Column}
}

// spend charges units of alias expansion to the walk at node at, and
// reports whether walking may go on. The first charge past the budget is
// reported and stops the walk.
func (d *decoder) spend(at *yaml.Node, units int) bool {
	if d.aborted {
		return false
	}
	d.expansion += units
	if d.expansion > d.maxExpansion {
		d.abort(at, "the document expands too many aliases")
		return false
	}
	return true
}

// abort stops the walk with a parse error at n.
func (d *decoder) abort(n *yaml.Node, msg string) {
	d.aborted = true
	d.diags.Errorf(d.pos(n), CodeParseError, "%s", msg)
}

// errorf reports an error at pos, unless the walk has stopped: what it
// would report then is noise, such as a mapping left empty by the stop. A
// report made through an alias (which can repeat it once for every path to
// the anchor) spends diagnosticCost units of the budget.
func (d *decoder) errorf(pos diag.Pos, code, format string, args ...any) {
	if d.aborted {
		return
	}
	if d.aliased > 0 {
		d.expansion += diagnosticCost
		if d.expansion > d.maxExpansion {
			d.aborted = true
			d.diags.Errorf(pos, CodeParseError, "the document expands too many aliases")
			return
		}
	}
	d.diags.Errorf(pos, code, format, args...)
}

// step counts walking one node (or mapping entry) n; through an alias it
// spends one unit of the budget. It reports whether walking may go on.
func (d *decoder) step(n *yaml.Node, throughAlias bool) bool {
	if d.aborted {
		return false
	}
	d.steps++
	if throughAlias || d.aliased > 0 {
		return d.spend(n, 1)
	}
	return true
}

// copied charges the copy of n bytes of text at at into a JSON value, when
// at is reached through an alias. It reports whether walking may go on.
func (d *decoder) copied(at *yaml.Node, n int) bool {
	if at.Kind == yaml.AliasNode || d.aliased > 0 {
		return d.spend(at, n/bytesPerUnit)
	}
	return !d.aborted
}

// resolve follows aliases to the node they name, counting the walk. It
// returns nil once the walk stopped (reported once). Callers that recurse
// into a collection guard it with enter and leave.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	if n == nil || !d.step(n, false) {
		return nil
	}
	for n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			d.errorf(d.pos(n), CodeParseError, "alias *%s names no anchor", clip(n.Value))
			return nil
		}
		n = n.Alias
		if !d.step(n, true) {
			return nil
		}
	}
	return n
}

// enter starts walking the collection n (resolved from at): it counts the
// nesting, notes whether the walk goes through an alias, and marks an
// anchored n as being expanded, reporting a cycle (an alias inside its own
// anchor) at at. It returns false, and the caller must not walk n or call
// leave, if walking must stop.
func (d *decoder) enter(n, at *yaml.Node) bool {
	if d.aborted {
		return false
	}
	if d.nesting >= maxNesting {
		d.abort(at, fmt.Sprintf("the document nests more than %d levels deep through aliases", maxNesting))
		return false
	}
	if n.Anchor != "" {
		if d.inAlias == nil {
			d.inAlias = map[*yaml.Node]bool{}
		}
		if d.inAlias[n] {
			d.abort(at, fmt.Sprintf("alias *%s contains itself", clip(n.Anchor)))
			return false
		}
		d.inAlias[n] = true
	}
	d.nesting++
	if at.Kind == yaml.AliasNode {
		d.aliased++
	}
	return true
}

// leave undoes enter(n, at).
func (d *decoder) leave(n, at *yaml.Node) {
	if n.Anchor != "" {
		delete(d.inAlias, n)
	}
	d.nesting--
	if at.Kind == yaml.AliasNode {
		d.aliased--
	}
}

// pair is one key and value of a mapping, after aliases and merge keys.
type pair struct {
	key   string
	k, v  *yaml.Node // v is unresolved: it may be an alias
	label string     // the path of this entry, for messages
}

// isMerge reports whether k is the YAML merge key "<<".
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Style == 0 &&
		(k.Tag == "" || k.Tag == "!" || k.Tag == "!!merge" || k.Tag == "tag:yaml.org,2002:merge")
}

// pairs lists the entries of the mapping n (already resolved) in the order
// written. Merge keys are expanded in place: the merged entries take the
// position of "<<", skipping keys the mapping sets itself, and earlier merged
// mappings win over later ones. Duplicate keys are reported.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	explicit := make(map[string]*yaml.Node, len(n.Content)/2)
	merges := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !d.step(k, false) {
			return nil
		}
		if isMerge(k) {
			merges = true
			continue
		}
		key, ok := d.key(k, path, true)
		if !ok {
			continue
		}
		if first, dup := explicit[key]; dup {
			d.errorf(d.pos(k), CodeDuplicateKey, "duplicate key %s %s; first defined at line %d",
				quote(key), where(path), first.Line)
			continue
		}
		explicit[key] = k
	}
	out := make([]pair, 0, len(explicit))
	// An explicit key is listed once, where first written; merged keys
	// (which explicit ones hide) need their own record.
	var merged map[string]bool
	if merges {
		merged = map[string]bool{}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			for _, p := range d.merged(v, path) {
				if explicit[p.key] != nil || merged[p.key] {
					continue
				}
				merged[p.key] = true
				out = append(out, p)
			}
			continue
		}
		key, ok := d.key(k, path, false)
		if !ok || explicit[key] != k {
			continue
		}
		out = append(out, pair{key: key, k: k, v: v, label: join(path, key)})
	}
	return out
}

// merged returns the entries a merge key's value contributes: a mapping, or
// a list of mappings where earlier ones win.
func (d *decoder) merged(v *yaml.Node, path string) []pair {
	r := d.resolve(v)
	if r == nil {
		return nil
	}
	switch r.Kind {
	case yaml.MappingNode:
		if !d.enter(r, v) {
			return nil
		}
		defer d.leave(r, v)
		return d.pairs(r, path)
	case yaml.SequenceNode:
		var out []pair
		seen := map[string]bool{}
		for _, item := range r.Content {
			ri := d.resolve(item)
			if ri == nil {
				return out
			}
			if ri.Kind != yaml.MappingNode {
				d.errorf(d.pos(item), CodeType, "%s: a merge key (<<) takes a mapping or a list of mappings, got %s", subject(path), describe(ri))
				continue
			}
			if !d.enter(ri, item) {
				return out
			}
			for _, p := range d.pairs(ri, path) {
				if !seen[p.key] {
					seen[p.key] = true
					out = append(out, p)
				}
			}
			d.leave(ri, item)
		}
		return out
	}
	d.errorf(d.pos(v), CodeType, "%s: a merge key (<<) takes a mapping or a list of mappings, got %s", subject(path), describe(r))
	return nil
}

// key returns the text of a mapping key. A key must be a scalar; report
// says whether to report one that is not (path names the mapping).
func (d *decoder) key(k *yaml.Node, path string, report bool) (string, bool) {
	r := k
	for i := 0; r != nil && r.Kind == yaml.AliasNode && i < 64; i++ {
		r = r.Alias
	}
	if r == nil || r.Kind != yaml.ScalarNode {
		if report {
			d.errorf(d.pos(k), CodeType, "%s: keys must be strings, got %s", subject(path), describeKind(r))
		}
		return "", false
	}
	return r.Value, true
}

// object walks the mapping v (the value of key at label), calling fn for each
// entry whose key is in keys and reporting the others. It returns false if v
// is null (not set) or not a mapping (reported).
func (d *decoder) object(v *yaml.Node, label string, keys []string, fn func(p pair)) bool {
	r := d.resolve(v)
	if r == nil || isNull(r) {
		return false
	}
	if r.Kind != yaml.MappingNode {
		d.typeError(v, r, label, "a mapping")
		return false
	}
	if !d.enter(r, v) {
		return false
	}
	defer d.leave(r, v)
	for _, p := range d.pairs(r, label) {
		if d.aborted {
			return true
		}
		if !slices.Contains(keys, p.key) {
			d.unknownKey(p, label, keys)
			continue
		}
		fn(p)
	}
	return true
}

// unknownKey reports p's key as not part of the grammar at label.
func (d *decoder) unknownKey(p pair, label string, keys []string) {
	if s, ok := Suggest(p.key, keys); ok {
		d.errorf(d.pos(p.k), CodeUnknownKey, "unknown key %s %s; did you mean %q?", quote(p.key), where(label), s)
		return
	}
	d.errorf(d.pos(p.k), CodeUnknownKey, "unknown key %s %s; valid keys: %s", quote(p.key), where(label), strings.Join(keys, ", "))
}

// typeError reports that the value v (resolved r) at label is not want.
func (d *decoder) typeError(v, r *yaml.Node, label, want string) {
	label = subject(label)
	got := describe(r)
	if d.redact {
		got = describeType(r)
	}
	d.errorf(d.pos(v), CodeType, "%s: expected %s, got %s", label, want, got)
}

// str decodes a string scalar. Null means not set. A timestamp-looking
// plain scalar is kept as the text written.
func (d *decoder) str(v *yaml.Node, label string) (string, bool) {
	r := d.resolve(v)
	if r == nil || isNull(r) {
		return "", false
	}
	if r.Kind == yaml.ScalarNode {
		switch r.ShortTag() {
		case "!!str", "!!timestamp":
			return r.Value, true
		}
	}
	d.typeError(v, r, label, "a string")
	return "", false
}

// version decodes a scalar written as a string or a number.
func (d *decoder) version(v *yaml.Node, label string) string {
	r := d.resolve(v)
	if r == nil || isNull(r) {
		return ""
	}
	if r.Kind == yaml.ScalarNode {
		switch r.ShortTag() {
		case "!!str", "!!int", "!!float", "!!timestamp":
			return r.Value
		}
	}
	d.typeError(v, r, label, "a string or a number")
	return ""
}

// boolean decodes a boolean scalar. Null means not set.
func (d *decoder) boolean(v *yaml.Node, label string) *bool {
	r := d.resolve(v)
	if r == nil || isNull(r) {
		return nil
	}
	if r.Kind == yaml.ScalarNode && r.ShortTag() == "!!bool" {
		var b bool
		if err := r.Decode(&b); err == nil {
			return &b
		}
	}
	d.typeError(v, r, label, "a boolean")
	return nil
}

// integer decodes an integer scalar within [lo, hi]. Null means not set.
func (d *decoder) integer(v *yaml.Node, label string, lo, hi int64) (int64, bool) {
	r := d.resolve(v)
	if r == nil || isNull(r) {
		return 0, false
	}
	if r.Kind != yaml.ScalarNode || r.ShortTag() != "!!int" {
		d.typeError(v, r, label, "an integer")
		return 0, false
	}
	var n int64
	if err := r.Decode(&n); err != nil || n < lo || n > hi {
		if hi == maxInt {
			d.errorf(d.pos(v), CodeInvalidValue, "%s: %s is out of range (at least %d)", label, clip(r.Value), lo)
		} else {
			d.errorf(d.pos(v), CodeInvalidValue, "%s: %s is out of range %d..%d", label, clip(r.Value), lo, hi)
		}
		return 0, false
	}
	return n, true
}

// enum decodes a string that must be one of allowed.
func (d *decoder) enum(v *yaml.Node, label string, allowed []string) (string, bool) {
	s, ok := d.str(v, label)
	if !ok {
		return "", false
	}
	if slices.Contains(allowed, s) {
		return s, true
	}
	d.invalidValue(v, label, s, allowed)
	return "", false
}

// enumOf is d.enum over a typed vocabulary (an AIR one).
func enumOf[T ~string](d *decoder, v *yaml.Node, label string, allowed []T) (T, bool) {
	s, ok := d.enum(v, label, words(allowed))
	return T(s), ok
}

// words is a typed vocabulary as plain strings.
func words[T ~string](l []T) []string {
	out := make([]string, len(l))
	for i, w := range l {
		out[i] = string(w)
	}
	return out
}

// strOf is d.str for a typed word the manifest may write freely (an AIR
// vocabulary a manifest can extend, such as an OAuth grant).
func strOf[T ~string](d *decoder, v *yaml.Node, label string) (T, bool) {
	s, ok := d.str(v, label)
	return T(s), ok
}

// invalidValue reports s at label as not one of allowed.
func (d *decoder) invalidValue(v *yaml.Node, label, s string, allowed []string) {
	msg := fmt.Sprintf("%s: %s is not one of %s", label, quote(s), strings.Join(allowed, ", "))
	if sug, ok := Suggest(s, allowed); ok {
		msg += fmt.Sprintf("; did you mean %q?", sug)
	}
	d.errorf(d.pos(v), CodeInvalidValue, "%s", msg)
}

// list walks the sequence v, calling fn with each item and its label. It
// returns false if v is null or not a list (reported).
func (d *decoder) list(v *yaml.Node, label string, fn func(item *yaml.Node, label string)) bool {
	r := d.resolve(v)
	if r == nil || isNull(r) {
		return false
	}
	if r.Kind != yaml.SequenceNode {
		d.typeError(v, r, label, "a list")
		return false
	}
	if !d.enter(r, v) {
		return false
	}
	defer d.leave(r, v)
	for i, item := range r.Content {
		if d.aborted {
			break
		}
		fn(item, index(label, i))
	}
	return true
}

// strings decodes a list of strings, keeping each item's position.
func (d *decoder) strList(v *yaml.Node, label string) ([]string, []diag.Pos) {
	var out []string
	var pos []diag.Pos
	ok := d.list(v, label, func(item *yaml.Node, label string) {
		r := d.resolve(item)
		if r != nil && isNull(r) {
			d.typeError(item, r, label, "a string")
			return
		}
		if s, ok := d.str(item, label); ok {
			out = append(out, s)
			pos = append(pos, d.pos(item))
		}
	})
	if ok && out == nil {
		out = []string{}
	}
	return out, pos
}

// required reports a missing key of the block at label (introduced by key).
func (d *decoder) required(key *yaml.Node, label, missing string) {
	d.errorf(d.pos(key), CodeMissingKey, "%s: missing required key %q", label, missing)
}

// isNull reports whether r is a null scalar.
func isNull(r *yaml.Node) bool {
	return r.Kind == yaml.ScalarNode && r.ShortTag() == "!!null"
}

// describe names what r is, for "got ..." in messages.
func describe(r *yaml.Node) string {
	if r == nil || r.Kind != yaml.ScalarNode {
		return describeKind(r)
	}
	switch r.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		return "boolean " + clip(r.Value)
	case "!!int":
		return "integer " + clip(r.Value)
	case "!!float":
		return "number " + clip(r.Value)
	case "!!str":
		return "string " + quote(r.Value)
	case "!!timestamp":
		return "timestamp " + clip(r.Value)
	}
	return "value " + quote(r.Value) + " tagged " + clip(r.Tag)
}

// describeType names what r is without its value.
func describeType(r *yaml.Node) string {
	if r == nil || r.Kind != yaml.ScalarNode {
		return describeKind(r)
	}
	switch r.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		return "a boolean"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!str":
		return "a string"
	case "!!timestamp":
		return "a timestamp"
	}
	return "a tagged value"
}

// describeKind names a node's kind.
func describeKind(r *yaml.Node) string {
	if r == nil {
		return "nothing"
	}
	switch r.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar"
	}
	return "an alias"
}

// maxShown bounds how much of a user value a message repeats.
const maxShown = 64

// clip shortens s for a message, keeping valid UTF-8.
func clip(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// quote renders s as a Go-quoted string, shortened for messages.
func quote(s string) string { return strconv.Quote(clip(s)) }

// where names the mapping at path for "unknown key ... <where>".
func where(path string) string {
	if path == "" {
		return "at the top level"
	}
	return "in " + path
}

// subject names the value at path for "<subject>: expected ...".
func subject(path string) string {
	if path == "" {
		return "manifest"
	}
	return path
}

// maxLabel bounds the length of a path in messages. A longer path is cut
// and ends with "…" (so it is at least maxLabel bytes long, at most 3 more),
// and the paths under it stay as they are: building them costs no more than
// the document, however deep or long-keyed, and messages stay short.
const maxLabel = 256

// join appends key to path with a dot.
func join(path, key string) string {
	if path == "" {
		return extend("", key)
	}
	return extend(path, "."+key)
}

// index appends a list index to path.
func index(path string, i int) string {
	return extend(path, "["+strconv.Itoa(i)+"]")
}

// extend appends step to path, cutting the result at maxLabel.
func extend(path, step string) string {
	if len(path) >= maxLabel {
		return path
	}
	s := path + step
	if len(s) < maxLabel {
		return s
	}
	cut := maxLabel - len("…")
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return s[:cut] + "…"
}

const maxInt = int64(^uint64(0) >> 1)
