package openapi

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/runtime/air"
)

// methods in the order operations are listed.
var methods = [...]string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// loadV3 fills spec from an OpenAPI 3.0/3.1 document.
func (l *loader) loadV3(spec *Spec) {
	root := l.entry.root
	l.info(spec)
	if comps := l.object(l.entry, root.member("components")); comps != nil {
		l.reserveSchemas(l.object(l.entry, comps.member("schemas")))
		l.securitySchemesV3(spec, l.object(l.entry, comps.member("securitySchemes")))
	}
	if servers := l.list(l.entry, root.member("servers")); servers != nil {
		for _, e := range servers.kids {
			if e.val.kind != kObject {
				l.errorf(l.pos(l.entry, e.val), CodeInvalidStructure, "a server must be an object, not %s", e.val.kind)
				continue
			}
			u := e.val.get("url").text()
			if vars := e.val.get("variables"); vars != nil && vars.kind == kObject {
				for _, v := range vars.kids {
					def := v.val.get("default")
					if enum := v.val.get("enum"); def == nil && enum != nil && enum.kind == kArray && len(enum.kids) > 0 {
						def = enum.kids[0].val // "default" is required; its enum's first value is the likeliest
					}
					if def != nil {
						u = strings.ReplaceAll(u, "{"+v.key+"}", def.text())
					}
				}
			}
			spec.Servers = append(spec.Servers, air.Server{URL: u, Description: e.val.get("description").text()})
		}
	}
	if m := root.member("security"); m != nil {
		spec.Security = l.securityReqs(l.entry, m, spec)
	}
	l.paths(spec, func(p *pathCtx) {
		l.operationV3(spec, p)
	})
}

// info copies title, version and description.
func (l *loader) info(spec *Spec) {
	info := l.object(l.entry, l.entry.root.member("info"))
	if info == nil {
		return
	}
	spec.Title = info.get("title").text()
	spec.Version = info.get("version").text()
	spec.Description = info.get("description").text()
}

// object returns m's value when it is an object; null and absence give nil,
// another shape is an error.
func (l *loader) object(doc *document, m *member) *node {
	if m == nil || m.val.kind == kNull {
		return nil
	}
	if m.val.kind != kObject {
		l.errorf(l.pos(doc, m.val), CodeInvalidStructure, "%s must be an object, not %s", quote(m.key), m.val.kind)
		return nil
	}
	return m.val
}

// list returns m's value when it is a list; null and absence give nil,
// another shape is an error.
func (l *loader) list(doc *document, m *member) *node {
	if m == nil || m.val.kind == kNull {
		return nil
	}
	if m.val.kind != kArray {
		l.errorf(l.pos(doc, m.val), CodeInvalidStructure, "%s must be a list, not %s", quote(m.key), m.val.kind)
		return nil
	}
	return m.val
}

// text returns m's scalar text; a list or object there is an error.
func (l *loader) text(doc *document, m *member) string {
	if m == nil {
		return ""
	}
	if m.val.kind == kArray || m.val.kind == kObject {
		l.errorf(l.pos(doc, m.val), CodeInvalidStructure, "%s must be a string, not %s", quote(m.key), m.val.kind)
		return ""
	}
	return m.val.text()
}

// pathCtx is one operation being loaded.
type pathCtx struct {
	path     string
	method   string
	doc      *document // where the operation is written
	item     *node     // the path item
	op       *node     // the operation object
	key      *member   // the method key
	pathDoc  *document // where the path item is written
	template []string  // {names} in the path
}

// paths walks "paths" in order, calling fn for each operation.
func (l *loader) paths(spec *Spec, fn func(*pathCtx)) {
	pm := l.entry.root.member("paths")
	if pm == nil {
		l.errorf(diag.Pos{File: l.entry.name, Line: int(l.entry.root.line), Col: int(l.entry.root.col)}, CodeNoPaths, "the document has no \"paths\": there is nothing to compile")
		return
	}
	paths := l.object(l.entry, pm)
	if paths == nil && pm.val.kind != kNull {
		return
	}
	ids := map[string]opSeen{}
	before := len(spec.Operations)
	if paths != nil {
		for i := range paths.kids {
			pk := &paths.kids[i]
			if strings.HasPrefix(pk.key, "x-") {
				continue
			}
			if !strings.HasPrefix(pk.key, "/") {
				l.warnf(l.keyPos(l.entry, pk), CodeInvalidPath, "path %s does not start with \"/\"; skipped", quote(pk.key))
				continue
			}
			doc, item, ok := l.deref(l.entry, pk.val)
			if !ok {
				continue
			}
			if item.kind == kNull {
				continue
			}
			if item.kind != kObject {
				l.errorf(l.pos(doc, item), CodeInvalidStructure, "path item %s must be an object, not %s", quote(pk.key), item.kind)
				continue
			}
			tmpl := templateNames(pk.key)
			for _, meth := range methods {
				mk := item.member(meth)
				if mk == nil {
					continue
				}
				if mk.val.kind != kObject {
					l.errorf(l.pos(doc, mk.val), CodeInvalidStructure, "operation %s %s must be an object, not %s", strings.ToUpper(meth), pk.key, mk.val.kind)
					continue
				}
				p := &pathCtx{path: pk.key, method: meth, doc: doc, item: item, op: mk.val, key: mk, pathDoc: doc, template: tmpl}
				n := len(spec.Operations)
				fn(p)
				if len(spec.Operations) > n {
					l.checkOperation(spec.Operations[n], p, ids)
				}
			}
		}
	}
	if len(spec.Operations) == before && len(l.errs) == 0 {
		l.errorf(l.pos(l.entry, pm.val), CodeNoOperations, "\"paths\" declares no operation: there is nothing to compile")
	}
}

type opSeen struct {
	pos  diag.Pos
	what string
}

// checkOperation checks operationId uniqueness and the path template.
func (l *loader) checkOperation(op *Operation, p *pathCtx, ids map[string]opSeen) {
	if op.OperationID != "" {
		m := p.op.member("operationId")
		here := l.pos(p.doc, m.val)
		what := op.Method + " " + op.Path
		if prev, dup := ids[op.OperationID]; dup {
			l.errorf(here, CodeDuplicateOperationID, "operationId %s is used twice: by %s at %s and by %s at %s", quote(op.OperationID), prev.what, prev.pos, what, here)
		} else {
			ids[op.OperationID] = opSeen{pos: here, what: what}
		}
	}
	declared := map[string]bool{}
	for _, prm := range op.Params {
		if prm.In == "path" {
			declared[prm.Name] = true
		}
	}
	inTemplate := map[string]bool{}
	for _, name := range p.template {
		inTemplate[name] = true
		if !declared[name] {
			l.warnf(op.Pos, CodeUndeclaredPathParam, "%s %s: path parameter %s is used in the path but not declared", op.Method, op.Path, quote(name))
		}
	}
	for _, prm := range op.Params {
		if prm.In == "path" && !inTemplate[prm.Name] {
			l.warnf(op.Pos, CodeUnusedPathParam, "%s %s: path parameter %s is declared but not used in the path", op.Method, op.Path, quote(prm.Name))
		}
	}
}

// templateNames returns the {names} of a path template, in order.
func templateNames(p string) []string {
	var out []string
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, p[i+1:i+j])
		p = p[i+j+1:]
	}
}

// newOperation fills the fields common to OpenAPI 3 and Swagger 2.
func (l *loader) newOperation(spec *Spec, p *pathCtx) *Operation {
	doc, n := p.doc, p.op
	op := &Operation{
		Path:   p.path,
		Method: strings.ToUpper(p.method),
		Pos:    l.keyPos(doc, p.key),
	}
	op.OperationID = l.text(doc, n.member("operationId"))
	op.Summary = l.text(doc, n.member("summary"))
	op.Description = l.text(doc, n.member("description"))
	if tags := l.list(doc, n.member("tags")); tags != nil {
		for _, t := range tags.kids {
			if t.val.kind == kArray || t.val.kind == kObject {
				l.errorf(l.pos(doc, t.val), CodeInvalidStructure, "a tag must be a string, not %s", t.val.kind)
				continue
			}
			op.Tags = append(op.Tags, t.val.text())
		}
	}
	op.Deprecated = n.get("deprecated").isTrue()
	if m := n.member("security"); m != nil {
		op.HasSecurity = true
		op.Security = l.securityReqs(doc, m, spec)
		if op.Security == nil {
			op.Security = []SecurityRequirement{}
		}
	}
	for i := range n.kids {
		m := &n.kids[i]
		if strings.HasPrefix(m.key, "x-") {
			if op.Extensions == nil {
				op.Extensions = map[string]json.RawMessage{}
			}
			op.Extensions[m.key] = l.rawJSON(doc, m.val)
		}
	}
	return op
}

// operationV3 loads one OpenAPI 3 operation.
func (l *loader) operationV3(spec *Spec, p *pathCtx) {
	doc, n := p.doc, p.op
	op := l.newOperation(spec, p)
	var pathParams, opParams []*Param
	if lst := l.list(p.pathDoc, p.item.member("parameters")); lst != nil {
		pathParams = l.paramsV3(p.pathDoc, lst)
	}
	if lst := l.list(doc, n.member("parameters")); lst != nil {
		opParams = l.paramsV3(doc, lst)
	}
	op.Params = mergeParams(pathParams, opParams)
	if m := n.member("requestBody"); m != nil {
		op.RequestBody = l.requestBodyV3(doc, m)
	}
	op.Responses = l.responses(doc, n, func(rdoc *document, r *node, out *Response) {
		if content := l.object(rdoc, r.member("content")); content != nil {
			if ct, media := chooseMedia(content); media != nil {
				out.ContentType = ct
				out.Schema = l.mediaSchema(rdoc, ct, media)
				out.Others = l.otherMedia(rdoc, content, ct)
			}
		}
		out.Links = l.linksV3(rdoc, r.member("links"))
	})
	spec.Operations = append(spec.Operations, op)
}

// maxLinks bounds the links read from one response.
const maxLinks = 64

// linksV3 loads a response's links (each may be a $ref). A link names its
// operation by operationId, or by a local operationRef
// ("#/paths/~1users~1{id}/get"), resolved later against the paths; a
// link naming neither is skipped with a warning.
func (l *loader) linksV3(doc *document, m *member) []*Link {
	obj := l.object(doc, m)
	if obj == nil {
		return nil
	}
	var out []*Link
	for i := range obj.kids {
		if len(out) == maxLinks {
			break
		}
		km := &obj.kids[i]
		if strings.HasPrefix(km.key, "x-") {
			continue
		}
		ldoc, ln, ok := l.deref(doc, km.val)
		if !ok || ln.kind != kObject {
			continue
		}
		lk := &Link{Name: km.key, OperationID: l.text(ldoc, ln.member("operationId"))}
		if lk.OperationID == "" {
			lk.OperationID = operationRefKey(l.text(ldoc, ln.member("operationRef")))
		}
		if lk.OperationID == "" {
			l.warnf(l.pos(ldoc, ln), CodeInvalidStructure, "link %s names no operationId or local operationRef; it is ignored", quote(km.key))
			continue
		}
		if ps := l.object(ldoc, ln.member("parameters")); ps != nil {
			for j := range ps.kids {
				lk.Parameters = append(lk.Parameters, LinkParam{Name: ps.kids[j].key, Expression: ps.kids[j].val.text()})
			}
			sort.SliceStable(lk.Parameters, func(a, b int) bool { return lk.Parameters[a].Name < lk.Parameters[b].Name })
		}
		out = append(out, lk)
	}
	return out
}

// operationRefKey turns a local operationRef ("#/paths/~1users~1{id}/get")
// into the key lowering resolves, "METHOD path" ("GET /users/{id}"); any
// other reference gives "".
func operationRefKey(ref string) string {
	rest, ok := strings.CutPrefix(ref, "#/paths/")
	if !ok {
		return ""
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return ""
	}
	path := strings.NewReplacer("~1", "/", "~0", "~").Replace(rest[:i])
	return strings.ToUpper(rest[i+1:]) + " " + path
}

// mediaSchema returns the schema of a media type object (nil if none).
func (l *loader) mediaSchema(doc *document, ct string, media *node) *air.Schema {
	if media.kind == kNull {
		return nil
	}
	if media.kind != kObject {
		l.errorf(l.pos(doc, media), CodeInvalidStructure, "media type %s must be an object, not %s", quote(ct), media.kind)
		return nil
	}
	sm := media.member("schema")
	if sm == nil || sm.val.kind == kNull {
		return nil
	}
	if sm.val.kind != kObject && sm.val.kind != kBool {
		l.errorf(l.pos(doc, sm.val), CodeInvalidStructure, "\"schema\" must be an object, not %s", sm.val.kind)
		return nil
	}
	return l.schema(doc, sm.val, 0)
}

// requestBodyV3 loads a request body (which may be a $ref).
func (l *loader) requestBodyV3(doc *document, m *member) *RequestBody {
	bdoc, b, ok := l.deref(doc, m.val)
	if !ok || b.kind == kNull {
		return nil
	}
	if b.kind != kObject {
		l.errorf(l.pos(bdoc, b), CodeInvalidStructure, "\"requestBody\" must be an object, not %s", b.kind)
		return nil
	}
	content := l.object(bdoc, b.member("content"))
	var ct string
	var media *node
	if content != nil {
		ct, media = chooseMedia(content)
	}
	if media == nil {
		l.warnf(l.pos(bdoc, b), CodeEmptyRequestBody, "the request body declares no media type; the operation is loaded without a body")
		return nil
	}
	return &RequestBody{
		Required:    b.get("required").isTrue(),
		ContentType: ct,
		Schema:      l.mediaSchema(bdoc, ct, media),
		Description: l.text(bdoc, b.member("description")),
		Others:      l.otherMedia(bdoc, content, ct),
	}
}

// otherMedia loads the media types of content besides chosen, in the order
// written, when Options.AllMediaTypes asks for them.
func (l *loader) otherMedia(doc *document, content *node, chosen string) []Media {
	if !l.opts.AllMediaTypes {
		return nil
	}
	var out []Media
	for i := range content.kids {
		if ct := content.kids[i].key; ct != chosen {
			out = append(out, Media{ContentType: ct, Schema: l.mediaSchema(doc, ct, content.kids[i].val)})
		}
	}
	return out
}

// otherTypes pairs each Swagger 2.0 media type besides chosen with the one
// schema they all share, when Options.AllMediaTypes asks for them.
func (l *loader) otherTypes(types []string, chosen string, schema *air.Schema) []Media {
	if !l.opts.AllMediaTypes {
		return nil
	}
	var out []Media
	for _, ct := range types {
		if ct != chosen {
			out = append(out, Media{ContentType: ct, Schema: schema})
		}
	}
	return out
}

// mediaRank orders media types: JSON, +json, form, multipart, others.
func mediaRank(ct string) int {
	base := ct
	if i := strings.IndexByte(base, ';'); i >= 0 {
		base = base[:i]
	}
	base = strings.ToLower(strings.TrimSpace(base))
	switch {
	case base == "application/json":
		return 0
	case strings.HasSuffix(base, "+json"):
		return 1
	case base == "application/x-www-form-urlencoded":
		return 2
	case base == "multipart/form-data":
		return 3
	}
	return 4
}

// chooseMedia picks the preferred media type of a content map (its key as
// written, and its value).
func chooseMedia(content *node) (string, *node) {
	best := -1
	rank := 5
	for i := range content.kids {
		if r := mediaRank(content.kids[i].key); r < rank {
			best, rank = i, r
		}
	}
	if best < 0 {
		return "", nil
	}
	return content.kids[best].key, content.kids[best].val
}

// chooseType picks the preferred media type from a list of names.
func chooseType(types []string) string {
	best, rank := "", 5
	for _, t := range types {
		if r := mediaRank(t); r < rank {
			best, rank = t, r
		}
	}
	return best
}

// paramKey identifies a parameter within one list.
type paramKey struct{ name, in string }

// mergeParams merges path-level and operation-level parameters: the
// operation's replaces a path-level one with the same name and "in", in
// place; the others follow in order.
func mergeParams(pathParams, opParams []*Param) []*Param {
	if len(pathParams) == 0 {
		return opParams
	}
	out := make([]*Param, 0, len(pathParams)+len(opParams))
	out = append(out, pathParams...)
	at := make(map[paramKey]int, len(pathParams))
	for i, p := range pathParams {
		at[paramKey{p.Name, p.In}] = i
	}
	for _, p := range opParams {
		if i, ok := at[paramKey{p.Name, p.In}]; ok {
			out[i] = p
			continue
		}
		out = append(out, p)
	}
	return out
}

// paramsV3 loads a parameter list.
func (l *loader) paramsV3(doc *document, lst *node) []*Param {
	out := make([]*Param, 0, len(lst.kids))
	seen := make(map[paramKey]bool, len(lst.kids))
	for _, e := range lst.kids {
		pdoc, pn, ok := l.deref(doc, e.val)
		if !ok {
			continue
		}
		p := l.paramV3(pdoc, pn)
		if p == nil {
			continue
		}
		k := paramKey{p.Name, p.In}
		if seen[k] {
			l.warnf(l.pos(pdoc, pn), CodeDuplicateParameter, "parameter %s in %s is declared twice; the first is kept", quote(p.Name), p.In)
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return out
}

// paramHead checks a parameter object and reads its name, in, required,
// deprecated and description; nil when it is unusable (reported).
func (l *loader) paramHead(doc *document, n *node, ins ...string) *Param {
	if n.kind != kObject {
		l.errorf(l.pos(doc, n), CodeInvalidStructure, "a parameter must be an object, not %s", n.kind)
		return nil
	}
	name := n.get("name")
	if name != nil && name.kind == kString && name.str == "" {
		if n.get("in").text() == "body" {
			// A Swagger body parameter's name is never sent.
			name = &node{kind: kString, str: "body", line: name.line, col: name.col}
		} else {
			// An artifact of generated descriptions (Postman exports): it
			// names nothing that could be sent.
			l.warnf(l.pos(doc, n), CodeEmptyParameterName, "a parameter has an empty \"name\"; it is skipped")
			return nil
		}
	}
	if name == nil || name.kind != kString {
		l.errorf(l.pos(doc, n), CodeInvalidParameter, "a parameter needs a \"name\"")
		return nil
	}
	in := n.get("in").text()
	known := false
	for _, k := range ins {
		known = known || in == k
	}
	if !known {
		at := n
		if v := n.get("in"); v != nil {
			at = v
		}
		l.errorf(l.pos(doc, at), CodeInvalidParameter, "parameter %s: \"in\" must be one of %s, not %s", quote(name.str), strings.Join(ins, ", "), quote(in))
		return nil
	}
	p := &Param{
		Name:        name.str,
		In:          in,
		Required:    n.get("required").isTrue(),
		Deprecated:  n.get("deprecated").isTrue(),
		Description: l.text(doc, n.member("description")),
	}
	if in == "path" && !p.Required {
		l.warnf(l.pos(doc, n), CodePathParamNotRequired, "path parameter %s is not marked required; it is loaded as required", quote(p.Name))
		p.Required = true
	}
	return p
}

// paramV3 loads one (dereferenced) OpenAPI 3 parameter.
func (l *loader) paramV3(doc *document, n *node) *Param {
	p := l.paramHead(doc, n, "path", "query", "header", "cookie")
	if p == nil {
		return nil
	}
	if sm := n.member("schema"); sm != nil && sm.val.kind != kNull {
		if sm.val.kind != kObject && sm.val.kind != kBool {
			l.errorf(l.pos(doc, sm.val), CodeInvalidStructure, "\"schema\" must be an object, not %s", sm.val.kind)
		} else {
			p.Schema = l.schema(doc, sm.val, 0)
		}
	} else if content := l.object(doc, n.member("content")); content != nil {
		if ct, media := chooseMedia(content); media != nil {
			p.Schema = l.mediaSchema(doc, ct, media)
		}
	}
	if ex := n.get("example"); ex != nil {
		p.Example = l.rawJSON(doc, ex)
	} else if exs := n.get("examples"); exs != nil && exs.kind == kObject && len(exs.kids) > 0 {
		if edoc, e, ok := l.deref(doc, exs.kids[0].val); ok && e.kind == kObject {
			if v := e.get("value"); v != nil {
				p.Example = l.rawJSON(edoc, v)
			}
		}
	}
	p.Style = l.text(doc, n.member("style"))
	if ex := n.get("explode"); ex != nil && ex.kind == kBool {
		v := ex.str == "true"
		p.Explode = &v
	}
	return p
}

// securitySchemesV3 loads components/securitySchemes.
func (l *loader) securitySchemesV3(spec *Spec, schemes *node) {
	if schemes == nil {
		return
	}
	for i := range schemes.kids {
		m := &schemes.kids[i]
		sdoc, n, ok := l.deref(l.entry, m.val)
		if !ok {
			continue
		}
		if n.kind != kObject {
			l.errorf(l.pos(sdoc, n), CodeInvalidStructure, "security scheme %s must be an object, not %s", quote(m.key), n.kind)
			continue
		}
		s := &SecurityScheme{
			Name:             m.key,
			Type:             n.get("type").text(),
			Scheme:           strings.ToLower(n.get("scheme").text()),
			BearerFormat:     n.get("bearerFormat").text(),
			In:               n.get("in").text(),
			ParamName:        n.get("name").text(),
			Description:      n.get("description").text(),
			OpenIDConnectURL: n.get("openIdConnectUrl").text(),
		}
		switch s.Type {
		case "apiKey", "http", "openIdConnect", "mutualTLS":
		case "oauth2":
			if flows := l.object(sdoc, n.member("flows")); flows != nil {
				s.Implicit = l.flow(sdoc, flows.member("implicit"))
				s.Password = l.flow(sdoc, flows.member("password"))
				s.ClientCredentials = l.flow(sdoc, flows.member("clientCredentials"))
				s.AuthorizationCode = l.flow(sdoc, flows.member("authorizationCode"))
			}
		default:
			l.warnf(l.pos(sdoc, n), CodeInvalidSecurityScheme, "security scheme %s has unknown type %s; skipped", quote(m.key), quote(s.Type))
			continue
		}
		if spec.SecuritySchemes == nil {
			spec.SecuritySchemes = map[string]*SecurityScheme{}
		}
		spec.SecuritySchemes[m.key] = s
	}
}

// flow loads an OAuth2 flow object.
func (l *loader) flow(doc *document, m *member) *OAuthFlow {
	n := l.object(doc, m)
	if n == nil {
		return nil
	}
	f := &OAuthFlow{
		AuthorizationURL: n.get("authorizationUrl").text(),
		TokenURL:         n.get("tokenUrl").text(),
		RefreshURL:       n.get("refreshUrl").text(),
	}
	f.Scopes = scopeNames(n.get("scopes"))
	return f
}

// scopeNames returns the sorted keys of a scopes object.
func scopeNames(n *node) []string {
	if n == nil || n.kind != kObject {
		return nil
	}
	out := make([]string, 0, len(n.kids))
	for _, k := range n.kids {
		out = append(out, k.key)
	}
	sort.Strings(out)
	return out
}

// securityReqs loads a security requirement list (document or operation).
func (l *loader) securityReqs(doc *document, m *member, spec *Spec) []SecurityRequirement {
	lst := l.list(doc, m)
	if lst == nil {
		return nil
	}
	out := make([]SecurityRequirement, 0, len(lst.kids))
	for _, e := range lst.kids {
		if e.val.kind != kObject {
			l.errorf(l.pos(doc, e.val), CodeInvalidStructure, "a security requirement must be an object, not %s", e.val.kind)
			continue
		}
		req := SecurityRequirement{}
		for j := range e.val.kids {
			u := &e.val.kids[j]
			use := SchemeUse{Scheme: u.key}
			switch u.val.kind {
			case kNull:
			case kArray:
				for _, sc := range u.val.kids {
					if sc.val.kind != kString {
						l.errorf(l.pos(doc, sc.val), CodeInvalidStructure, "a scope must be a string, not %s", sc.val.kind)
						continue
					}
					use.Scopes = append(use.Scopes, sc.val.str)
				}
			default:
				l.errorf(l.pos(doc, u.val), CodeInvalidStructure, "the scopes of %s must be a list, not %s", quote(u.key), u.val.kind)
				continue
			}
			if spec.SecuritySchemes[u.key] == nil {
				l.warnf(l.keyPos(doc, u), CodeUnknownSecurityScheme, "security requirement names scheme %s, which is not declared", quote(u.key))
			}
			req = append(req, use)
		}
		out = append(out, req)
	}
	return out
}
