package lower

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Safety control input names.
const (
	confirmKey        = "confirm"
	confirmKeyAlt     = "anvil_confirm"
	idempotencyKeyIn  = air.IdempotencyInputKey
	idempotencyKeyAlt = "anvil_idempotency_key"
	bodyKey           = air.WholeBodyKey
)

// ignoredHeaders are header parameters OpenAPI says to ignore.
var ignoredHeaders = set("accept", "content-type", "authorization")

// inputBuilder assembles an operation's inputs.
type inputBuilder struct {
	in   air.Input
	keys map[string]bool
	res  inputResult
}

// inputResult is what buildInput decides besides the AIR input.
type inputResult struct {
	carrierKey string // the input key of the idempotency carrier, or ""
	confirmKey string // "confirm", or "anvil_confirm" when a business input is named confirm
	bodyKey    string // the input key of a whole body
	// extraCarrier is a carrier input that is neither a param nor a body
	// field (a body carrier when the body is projected whole); extraWire is
	// the body property it sets.
	extraCarrier string
	extraWire    string
	notes        []string
}

func (b *inputBuilder) take(key, prefix string) string {
	k := key
	if k == air.DryRunKey || b.keys[k] {
		k = prefix + "_" + key
	}
	for n := 2; b.keys[k] || k == air.DryRunKey; n++ {
		k = prefix + "_" + key + "_" + strconv.Itoa(n)
	}
	b.keys[k] = true
	return k
}

// decideWire records how every input is written upstream: each parameter's
// style and explode (from what the description declares, air.ParamWire)
// and the body's encoding and Content-Type (from its media type,
// air.BodyWire). Back ends read these and decide nothing.
func decideWire(in *air.Input) {
	for i := range in.Params {
		p := &in.Params[i]
		style, explode := air.ParamWire(p.In, string(p.Style), p.Explode)
		p.Style, p.Explode = style, &explode
	}
	if bd := in.Body; bd != nil {
		bd.Encoding, bd.SendContentType = air.BodyWire(bd.ContentType)
	}
}

// isJSONContentType reports application/json and */*+json media types.
func isJSONContentType(ct string) bool {
	ct = strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	return ct == "application/json" || strings.HasSuffix(ct, "+json")
}

// buildInput projects the spec's parameters and body into inputs and wires
// the idempotency carrier. It may change idem (an undeclared path carrier is
// dropped, with a review note).
func (l *lowerer) buildInput(op *openapi.Operation, idem *air.Idempotency, skipAuth *air.Carrier) (air.Input, inputResult) {
	b := &inputBuilder{in: air.Input{Params: []air.Param{}}, keys: map[string]bool{}}
	rb := op.RequestBody
	var obj *air.Schema
	project := false
	if rb != nil {
		obj = l.deref(rb.Schema)
		project = isJSONContentType(rb.ContentType) && obj != nil && len(obj.Properties) > 0 && (len(obj.Type) == 0 || obj.Type.Has("object"))
		if !project {
			// A whole body is always the input "body"; a parameter of that key moves aside.
			b.res.bodyKey = b.take(bodyKey, "body")
		}
	}
	for _, p := range op.Params {
		if p == nil {
			continue
		}
		in := air.Location(p.In)
		if in == air.InHeader && ignoredHeaders[strings.ToLower(p.Name)] {
			continue
		}
		if skipAuth != nil && skipAuth.In == in && strings.EqualFold(skipAuth.Name, p.Name) {
			continue
		}
		b.in.Params = append(b.in.Params, air.Param{
			Name:        p.Name,
			Key:         b.take(InputKey(p.Name), p.In),
			In:          in,
			Required:    p.Required || in == air.InPath,
			Schema:      orEmpty(p.Schema),
			Description: p.Description,
			Example:     p.Example,
			Style:       air.ParamStyle(p.Style),
			Explode:     p.Explode,
		})
	}
	for _, name := range undeclaredPathParams(op) {
		// The path names a parameter the description does not declare
		// (spec/undeclared_path_param): without an input for it, the
		// gateway could never build the URL.
		b.in.Params = append(b.in.Params, air.Param{
			Name:        name,
			Key:         b.take(InputKey(name), string(air.InPath)),
			In:          air.InPath,
			Required:    true,
			Schema:      &air.Schema{Type: air.Types{"string"}},
			Description: "The {" + name + "} segment of the path (the description does not declare this parameter).",
		})
	}
	if rb != nil {
		body := &air.Body{Required: rb.Required, ContentType: rb.ContentType, Fields: []air.BodyField{}, Schema: orEmpty(rb.Schema)}
		if project {
			body.Projection = air.ProjectionFields
			req := set(obj.Required...)
			for _, name := range slices.Sorted(maps.Keys(obj.Properties)) {
				body.Fields = append(body.Fields, air.BodyField{
					Name:     name,
					Key:      b.take(InputKey(name), "body"),
					Required: rb.Required && req[name],
				})
			}
		} else {
			body.Projection = air.ProjectionWhole
		}
		b.in.Body = body
	}
	b.res.carrierKey = wireCarrier(b, idem)
	b.res.confirmKey = confirmKey
	if b.keys[confirmKey] {
		b.res.confirmKey = b.take(confirmKeyAlt, "anvil")
	}
	decideWire(&b.in)
	return b.in, b.res
}

// wireCarrier finds (or adds) the input that carries the idempotency key and
// keys it "idempotency_key" (or "anvil_idempotency_key" when a business input
// already takes that name). It returns the carrier's input key, or "".
func wireCarrier(b *inputBuilder, idem *air.Idempotency) string {
	if !idem.HasCarrier() {
		return ""
	}
	// rekey moves an input (old, or a new one when old is "") to the
	// idempotency key control name.
	rekey := func(old string) string {
		if old == idempotencyKeyIn || old == idempotencyKeyAlt {
			return old
		}
		if old != "" {
			delete(b.keys, old)
		}
		for _, k := range []string{idempotencyKeyIn, idempotencyKeyAlt} {
			if !b.keys[k] {
				b.keys[k] = true
				return k
			}
		}
		if old != "" {
			b.keys[old] = true
			return old
		}
		return b.take(idempotencyKeyAlt, "anvil")
	}
	switch idem.Mechanism {
	case air.MechanismHeader, air.MechanismQuery, air.MechanismPath:
		for i := range b.in.Params {
			p := &b.in.Params[i]
			if p.In != idem.Mechanism.ParamIn() {
				continue
			}
			if p.Name == idem.Key || (p.In == air.InHeader && strings.EqualFold(p.Name, idem.Key)) {
				p.Key = rekey(p.Key)
				return p.Key
			}
		}
		if idem.Mechanism == air.MechanismPath {
			b.res.notes = append(b.res.notes, "The idempotency carrier path parameter "+quote(idem.Key)+" is not in the path; no key is sent upstream.")
			idem.Mechanism, idem.Key = air.MechanismNone, ""
			return ""
		}
		k := rekey("")
		b.in.Params = append(b.in.Params, air.Param{
			Name: idem.Key, Key: k, In: idem.Mechanism.ParamIn(),
			Schema:      &air.Schema{Type: air.Types{"string"}},
			Description: "Idempotency key, sent upstream as the " + string(idem.Mechanism) + " " + quote(idem.Key) + ".",
		})
		return k
	case air.MechanismBody:
		body := b.in.Body
		if body == nil {
			body = &air.Body{ContentType: "application/json", Projection: air.ProjectionFields, Fields: []air.BodyField{},
				Schema: &air.Schema{Type: air.Types{"object"}, Properties: map[string]*air.Schema{idem.Key: {Type: air.Types{"string"}}}}}
			b.in.Body = body
		}
		if body.Projection == air.ProjectionFields {
			for i := range body.Fields {
				if body.Fields[i].Name == idem.Key {
					body.Fields[i].Key = rekey(body.Fields[i].Key)
					return body.Fields[i].Key
				}
			}
			k := rekey("")
			body.Fields = append(body.Fields, air.BodyField{Name: idem.Key, Key: k})
			return k
		}
		// A whole body: the key is its own input; the gateway sets it as a body property.
		k := rekey("")
		b.res.extraCarrier, b.res.extraWire = k, idem.Key
		return k
	}
	return ""
}

// undeclaredPathParams lists, in path order and once each, the {names} of
// the operation's path template that no path parameter declares.
func undeclaredPathParams(op *openapi.Operation) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range op.Params {
		if p != nil && p.In == "path" {
			seen[p.Name] = true
		}
	}
	rest := op.Path
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return out
		}
		if name := rest[i+1 : i+j]; name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
		rest = rest[i+j+1:]
	}
}

func orEmpty(s *air.Schema) *air.Schema {
	if s == nil {
		return &air.Schema{}
	}
	return s
}

// publishSchema builds the tool input schema of an operation exactly as the
// gateway serves it: an object with one property per input key, the required
// keys sorted, no additional properties, and the safety controls (confirm when
// confirmation is required, the idempotency carrier, anvil_dry_run). $defs
// holds the named schemas reachable from it.
func (l *lowerer) publishSchema(st *opState) {
	op := st.op
	props := map[string]*air.Schema{}
	var required []string
	for _, p := range op.Input.Params {
		props[p.Key] = air.ParamProperty(&p)
		if p.Required {
			required = append(required, p.Key)
		}
	}
	if body := op.Input.Body; body != nil {
		if body.Projection == air.ProjectionFields {
			fields := air.BodyFieldProperties(body, l.spec.Schemas)
			for _, f := range body.Fields {
				fs := fields[f.Key]
				if fs == nil {
					fs = &air.Schema{Type: air.Types{"string"}}
				}
				props[f.Key] = fs
				if f.Required {
					required = append(required, f.Key)
				}
			}
		} else {
			k := st.in.bodyKey
			props[k] = air.WithDescription(body.Schema, st.spec.RequestBody.Description)
			if body.Required {
				required = append(required, k)
			}
		}
	}
	safety := air.Safety{DryRun: air.DryRunKey}
	if st.in.extraCarrier != "" {
		props[st.in.extraCarrier] = &air.Schema{Type: air.Types{"string"},
			Description: "Idempotency key, sent upstream as the body property " + quote(st.in.extraWire) + "."}
	}
	if op.Idempotency.HasCarrier() && st.in.carrierKey != "" {
		safety.IdempotencyKey = st.in.carrierKey
	}
	if op.Confirmation.Required {
		safety.ConfirmKey = st.in.confirmKey
		desc := "Must be true to confirm this call."
		if op.Confirmation.Reason != "" {
			desc += " " + op.Confirmation.Reason
		}
		props[st.in.confirmKey] = &air.Schema{Type: air.Types{"boolean"}, Const: []byte("true"), Description: desc}
		required = append(required, st.in.confirmKey)
	}
	props[air.DryRunKey] = &air.Schema{Type: air.Types{"boolean"}}
	sort.Strings(required)
	s := &air.Schema{Type: air.Types{"object"}, Properties: props, Required: required, AdditionalProperties: air.BoolSchema(false)}
	if names := l.reachable(s); len(names) > 0 {
		s.Defs = make(map[string]*air.Schema, len(names))
		for _, n := range names {
			s.Defs[n] = l.spec.Schemas[n]
		}
	}
	op.Input.Schema = s
	op.Input.Safety = safety
	op.Input.Sensitive = sensitiveInputs(props)
}

// output picks the first 2xx response; errors lists every other response.
func output(op *openapi.Operation) (air.Output, []air.ErrorCase) {
	var out air.Output
	found := false
	errs := []air.ErrorCase{}
	for _, r := range op.Responses {
		if r == nil {
			continue
		}
		if len(r.Status) == 3 && r.Status[0] == '2' {
			if !found {
				found = true
				status, err := strconv.Atoi(r.Status)
				if err != nil {
					status = 200
				}
				out = air.Output{Status: status, ContentType: r.ContentType, Schema: r.Schema, Description: r.Description}
			}
			continue
		}
		errs = append(errs, air.ErrorCase{Status: r.Status, Description: r.Description})
	}
	return out, errs
}
