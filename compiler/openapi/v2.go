package openapi

import (
	"github.com/anvil-dev/anvil/runtime/air"
)

// Swagger 2.0 is converted to the same model as OpenAPI 3:
//   - host, basePath and schemes become servers (https when no scheme is given);
//   - a "body" parameter becomes the request body, with the content type chosen
//     from "consumes" (the operation's, else the document's; application/json
//     when neither is given);
//   - "formData" parameters become an object request body, multipart/form-data
//     when a parameter is a file or only multipart is consumed, otherwise
//     application/x-www-form-urlencoded;
//   - a response's schema gets its content type from "produces" likewise;
//   - non-body parameters get a schema from their type, format, items, enum and
//     bounds, and collectionFormat becomes style and explode;
//   - securityDefinitions become security schemes (basic is http/basic; the
//     application and accessCode flows are clientCredentials and
//     authorizationCode);
//   - "definitions" play the part of components/schemas.

// loadV2 fills spec from a Swagger 2.0 document.
func (l *loader) loadV2(spec *Spec) {
	root := l.entry.root
	l.info(spec)
	l.reserveSchemas(l.object(l.entry, root.member("definitions")))
	l.securityDefinitions(spec, l.object(l.entry, root.member("securityDefinitions")))

	host := l.text(l.entry, root.member("host"))
	basePath := l.text(l.entry, root.member("basePath"))
	if host != "" {
		var schemes []string
		if lst := l.list(l.entry, root.member("schemes")); lst != nil {
			for _, e := range lst.kids {
				if s := e.val.text(); s != "" {
					schemes = append(schemes, s)
				}
			}
		}
		if len(schemes) == 0 {
			schemes = []string{"https"}
		}
		for _, s := range schemes {
			spec.Servers = append(spec.Servers, air.Server{URL: s + "://" + host + basePath})
		}
	} else if basePath != "" {
		spec.Servers = append(spec.Servers, air.Server{URL: basePath})
	}
	if m := root.member("security"); m != nil {
		spec.Security = l.securityReqs(l.entry, m, spec)
	}
	consumes := l.strings(l.entry, root.member("consumes"))
	produces := l.strings(l.entry, root.member("produces"))
	l.paths(spec, func(p *pathCtx) {
		l.operationV2(spec, p, consumes, produces)
	})
}

// strings reads a list of strings.
func (l *loader) strings(doc *document, m *member) []string {
	lst := l.list(doc, m)
	if lst == nil {
		return nil
	}
	out := make([]string, 0, len(lst.kids))
	for _, e := range lst.kids {
		if e.val.kind != kString {
			l.errorf(l.pos(doc, e.val), CodeInvalidStructure, "%s must list strings, not %s", quote(m.key), e.val.kind)
			continue
		}
		out = append(out, e.val.str)
	}
	return out
}

// v2Param is a Swagger parameter before it is sorted into params and bodies.
type v2Param struct {
	doc  *document
	node *node
	head *Param
}

// operationV2 loads one Swagger 2.0 operation.
func (l *loader) operationV2(spec *Spec, p *pathCtx, consumes, produces []string) {
	doc, n := p.doc, p.op
	op := l.newOperation(spec, p)
	if m := n.member("consumes"); m != nil {
		consumes = l.strings(doc, m)
	}
	if m := n.member("produces"); m != nil {
		produces = l.strings(doc, m)
	}
	var pathLevel, opLevel []v2Param
	if lst := l.list(p.pathDoc, p.item.member("parameters")); lst != nil {
		pathLevel = l.paramsV2(p.pathDoc, lst)
	}
	if lst := l.list(doc, n.member("parameters")); lst != nil {
		opLevel = l.paramsV2(doc, lst)
	}
	// Merge on name+in, the operation's winning, in place.
	all := append([]v2Param(nil), pathLevel...)
	at := make(map[paramKey]int, len(pathLevel))
	for i, q := range pathLevel {
		at[paramKey{q.head.Name, q.head.In}] = i
	}
	for _, q := range opLevel {
		if i, ok := at[paramKey{q.head.Name, q.head.In}]; ok {
			all[i] = q
			continue
		}
		all = append(all, q)
	}
	var body *v2Param
	var form []v2Param
	for i := range all {
		q := all[i]
		switch q.head.In {
		case "body":
			if body != nil {
				l.errorf(l.pos(q.doc, q.node), CodeInvalidParameter, "%s %s has more than one body parameter", op.Method, op.Path)
				continue
			}
			body = &all[i]
		case "formData":
			form = append(form, q)
		default:
			prm := q.head
			prm.Schema = l.schemaBody(q.doc, paramSchemaView(q.node), 0)
			if ex := q.node.get("x-example"); ex != nil {
				prm.Example = l.rawJSON(q.doc, ex)
			}
			setCollectionFormat(prm, q.node)
			op.Params = append(op.Params, prm)
		}
	}
	switch {
	case body != nil:
		if len(form) > 0 {
			l.errorf(l.pos(body.doc, body.node), CodeInvalidParameter, "%s %s has both a body parameter and formData parameters", op.Method, op.Path)
		}
		rb := &RequestBody{
			Required:    body.head.Required,
			Description: body.head.Description,
			ContentType: chooseType(consumes),
		}
		if rb.ContentType == "" {
			rb.ContentType = "application/json"
		}
		if sm := body.node.member("schema"); sm != nil && sm.val.kind != kNull {
			if sm.val.kind != kObject && sm.val.kind != kBool {
				l.errorf(l.pos(body.doc, sm.val), CodeInvalidStructure, "\"schema\" must be an object, not %s", sm.val.kind)
			} else {
				rb.Schema = l.schema(body.doc, sm.val, 0)
			}
		}
		rb.Others = l.otherTypes(consumes, rb.ContentType, rb.Schema)
		op.RequestBody = rb
	case len(form) > 0:
		op.RequestBody = l.formBody(form, consumes)
	}
	op.Responses = l.responses(doc, n, func(rdoc *document, r *node, out *Response) {
		if sm := r.member("schema"); sm != nil && sm.val.kind != kNull {
			if sm.val.kind != kObject && sm.val.kind != kBool {
				l.errorf(l.pos(rdoc, sm.val), CodeInvalidStructure, "\"schema\" must be an object, not %s", sm.val.kind)
			} else {
				out.Schema = l.schema(rdoc, sm.val, 0)
				out.ContentType = chooseType(produces)
				if out.ContentType == "" {
					out.ContentType = "application/json"
				}
				out.Others = l.otherTypes(produces, out.ContentType, out.Schema)
			}
		}
	})
	spec.Operations = append(spec.Operations, op)
}

// paramsV2 loads a Swagger parameter list.
func (l *loader) paramsV2(doc *document, lst *node) []v2Param {
	out := make([]v2Param, 0, len(lst.kids))
	seen := make(map[paramKey]bool, len(lst.kids))
	for _, e := range lst.kids {
		pdoc, pn, ok := l.deref(doc, e.val)
		if !ok {
			continue
		}
		head := l.paramHead(pdoc, pn, "path", "query", "header", "body", "formData")
		if head == nil {
			continue
		}
		k := paramKey{head.Name, head.In}
		if seen[k] {
			l.warnf(l.pos(pdoc, pn), CodeDuplicateParameter, "parameter %s in %s is declared twice; the first is kept", quote(head.Name), head.In)
			continue
		}
		seen[k] = true
		out = append(out, v2Param{doc: pdoc, node: pn, head: head})
	}
	return out
}

// paramSchemaKeys are the keywords a Swagger non-body parameter shares with
// a schema.
var paramSchemaKeys = map[string]bool{
	"type": true, "format": true, "items": true, "default": true, "enum": true,
	"maximum": true, "exclusiveMaximum": true, "minimum": true, "exclusiveMinimum": true,
	"maxLength": true, "minLength": true, "pattern": true, "maxItems": true, "minItems": true,
	"uniqueItems": true, "multipleOf": true, "x-nullable": true,
}

// paramSchemaView returns an object holding only a parameter's schema keywords.
func paramSchemaView(n *node) *node {
	v := &node{kind: kObject, line: n.line, col: n.col}
	for _, m := range n.kids {
		if paramSchemaKeys[m.key] {
			v.kids = append(v.kids, m)
		}
	}
	return v
}

// setCollectionFormat maps Swagger's collectionFormat to style and explode.
func setCollectionFormat(p *Param, n *node) {
	cf := n.get("collectionFormat").text()
	if cf == "" {
		if n.get("type").text() != "array" {
			return
		}
		cf = "csv"
	}
	no, yes := false, true
	switch cf {
	case "csv":
		if p.In == "query" {
			p.Style = "form"
		} else {
			p.Style = "simple"
		}
		p.Explode = &no
	case "ssv":
		p.Style, p.Explode = "spaceDelimited", &no
	case "pipes":
		p.Style, p.Explode = "pipeDelimited", &no
	case "multi":
		p.Style, p.Explode = "form", &yes
	}
}

// formBody builds an object request body from formData parameters.
func (l *loader) formBody(form []v2Param, consumes []string) *RequestBody {
	s := &air.Schema{Type: air.Types{"object"}, Properties: map[string]*air.Schema{}}
	rb := &RequestBody{Schema: s}
	hasFile := false
	for _, q := range form {
		ps := l.schemaBody(q.doc, paramSchemaView(q.node), 0)
		ps.Description = q.head.Description
		if q.node.get("type").text() == "file" {
			hasFile = true
		}
		s.Properties[q.head.Name] = ps
		if q.head.Required {
			s.Required = append(s.Required, q.head.Name)
			rb.Required = true
		}
	}
	hasMultipart, hasURLEnc := false, false
	for _, c := range consumes {
		switch mediaRank(c) {
		case 2:
			hasURLEnc = true
		case 3:
			hasMultipart = true
		}
	}
	if hasFile || (hasMultipart && !hasURLEnc) {
		rb.ContentType = "multipart/form-data"
	} else {
		rb.ContentType = "application/x-www-form-urlencoded"
	}
	return rb
}

// securityDefinitions loads Swagger 2.0 security definitions.
func (l *loader) securityDefinitions(spec *Spec, defs *node) {
	if defs == nil {
		return
	}
	for i := range defs.kids {
		m := &defs.kids[i]
		if m.val.kind != kObject {
			l.errorf(l.pos(l.entry, m.val), CodeInvalidStructure, "security definition %s must be an object, not %s", quote(m.key), m.val.kind)
			continue
		}
		n := m.val
		s := &SecurityScheme{Name: m.key, Description: n.get("description").text()}
		switch t := n.get("type").text(); t {
		case "basic":
			s.Type, s.Scheme = "http", "basic"
		case "apiKey":
			s.Type = "apiKey"
			s.In = n.get("in").text()
			s.ParamName = n.get("name").text()
		case "oauth2":
			s.Type = "oauth2"
			f := &OAuthFlow{
				AuthorizationURL: n.get("authorizationUrl").text(),
				TokenURL:         n.get("tokenUrl").text(),
				Scopes:           scopeNames(n.get("scopes")),
			}
			switch n.get("flow").text() {
			case "implicit":
				s.Implicit = f
			case "password":
				s.Password = f
			case "application":
				s.ClientCredentials = f
			case "accessCode":
				s.AuthorizationCode = f
			default:
				l.warnf(l.pos(l.entry, n), CodeInvalidSecurityScheme, "security definition %s has unknown OAuth2 flow %s; skipped", quote(m.key), quote(n.get("flow").text()))
				continue
			}
		default:
			l.warnf(l.pos(l.entry, n), CodeInvalidSecurityScheme, "security definition %s has unknown type %s; skipped", quote(m.key), quote(t))
			continue
		}
		if spec.SecuritySchemes == nil {
			spec.SecuritySchemes = map[string]*SecurityScheme{}
		}
		spec.SecuritySchemes[m.key] = s
	}
}
