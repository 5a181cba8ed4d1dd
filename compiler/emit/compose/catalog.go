package compose

import (
	"github.com/anvil-dev/anvil/compiler/naming"
	"sort"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// CatalogSchema is the schema string of compose.json.
const CatalogSchema = "anvil.compose-catalog/v1"

// Catalog is compose.json (anvil.compose-catalog/v1). Field order is the
// JSON key order.
type Catalog struct {
	Schema     string             `json:"schema"`
	Connectors []CatalogConnector `json:"connectors"`
}

// CatalogConnector is one composed connector.
type CatalogConnector struct {
	ID         string            `json:"id"`
	Title      string            `json:"title"`
	Service    CatalogService    `json:"service"`
	Python     CatalogPython     `json:"python"`
	TypeScript CatalogTypeScript `json:"typescript"`
	Operations []CatalogOp       `json:"operations"`
}

// CatalogService names the service a connector was built from.
type CatalogService struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

// CatalogPython locates a connector's Python SDK: Path (the directory
// holding the package) is relative to the composite's directory.
type CatalogPython struct {
	Path    string `json:"path"`
	Package string `json:"package"`
	Client  string `json:"client"`
}

// CatalogTypeScript locates a connector's TypeScript SDK: Import is relative
// to the composite's typescript/src/ directory.
type CatalogTypeScript struct {
	Import string `json:"import"`
	Client string `json:"client"`
}

// CatalogOp is one callable operation.
type CatalogOp struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Method holds the SDK method names.
	Method CatalogMethod `json:"method"`
	// Safety names the Python SDK method's safety-control keyword arguments.
	Safety CatalogSafety `json:"safety"`
	// Effect is read or mutation.
	Effect      air.EffectKind  `json:"effect"`
	EffectClass air.EffectClass `json:"effectClass"`
	// Confirm reports whether a call needs confirm.
	Confirm bool `json:"confirm"`
	// IdempotencyKeyRequired reports whether a call needs a caller's key.
	IdempotencyKeyRequired bool           `json:"idempotencyKeyRequired"`
	Inputs                 []CatalogInput `json:"inputs"`
	Undo                   *CatalogUndo   `json:"undo,omitempty"`
	// Needs are the operation's producer links (AIR needs) among the
	// connector's served operations.
	Needs []CatalogNeed `json:"needs,omitempty"`
}

// CatalogNeed is one identifier input and the served operations (AIR ids)
// whose answers produce it, with where in each answer the value is.
type CatalogNeed struct {
	Argument string            `json:"argument"`
	From     []CatalogProducer `json:"from"`
}

// CatalogProducer is one producer of a CatalogNeed.
type CatalogProducer struct {
	Operation string `json:"operation"`
	Field     string `json:"field,omitempty"`
}

// CatalogMethod is an operation's method name in each SDK.
type CatalogMethod struct {
	Python     string `json:"python"`
	TypeScript string `json:"typescript"`
}

// CatalogSafety names the safety controls of a Python SDK method.
type CatalogSafety struct {
	Confirm        string `json:"confirm"`
	IdempotencyKey string `json:"idempotencyKey"`
	DryRun         string `json:"dryRun"`
}

// CatalogInput is one business input: the key the SDK takes and its wire name.
type CatalogInput struct {
	Key      string `json:"key"`
	Wire     string `json:"wire"`
	Required bool   `json:"required"`
}

// CatalogUndo is an operation's declared undo: the follow-up and its
// argument mapping (manifest order).
type CatalogUndo struct {
	Kind      string      `json:"kind"`
	Operation string      `json:"operation"`
	Arguments air.Mapping `json:"arguments"`
}

// catalogOps lists the served operations of doc as the catalog describes them.
func catalogOps(doc *air.Document) []CatalogOp {
	served := map[string]bool{}
	for i := range doc.Operations {
		if air.IsServed(&doc.Operations[i]) {
			served[doc.Operations[i].ID] = true
		}
	}
	pyTaken := map[string]bool{"last_effect": true, "call": true}
	tsTaken := map[string]bool{"constructor": true, "lastEffect": true, "transport": true, "call": true}
	ops := []CatalogOp{}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if !air.IsServed(op) {
			continue
		}
		o := CatalogOp{
			ID:          op.ID,
			Title:       oneLine(op.DisplayName),
			Effect:      air.KindMutation,
			EffectClass: air.EffectClassOf(op),
			Confirm:     op.Confirmation.Required,
			Inputs:      businessInputs(op),
		}
		if o.Title == "" {
			o.Title = op.CanonicalName
		}
		if op.Effect.Kind == air.KindRead {
			o.Effect = air.KindRead
		}
		o.IdempotencyKeyRequired = op.Idempotency.KeyRequired()

		o.Method.Python = naming.Unique(naming.PyIdent(op.CanonicalName), pyTaken, "_")
		ts := naming.Camel(op.CanonicalName)
		if ts == "" || !naming.IsJSIdent(ts) {
			ts = "op" + naming.Pascal(op.CanonicalName)
		}
		o.Method.TypeScript = naming.Unique(ts, tsTaken, "_")

		// The controls keep their names in every SDK: an input that would
		// shadow one has another SDK name (air.Param.SDKName).
		o.Safety = CatalogSafety{Confirm: "confirm", IdempotencyKey: "idempotency_key", DryRun: "dry_run"}

		e := op.Effect
		switch {
		case o.EffectClass == air.ClassReversible && e.Inverse != nil && served[e.Inverse.Operation]:
			o.Undo = &CatalogUndo{Kind: "inverse", Operation: e.Inverse.Operation, Arguments: orEmpty(e.Inverse.Arguments)}
		case (o.EffectClass == air.ClassReversible || o.EffectClass == air.ClassCompensable) &&
			e.Compensate != nil && served[e.Compensate.Operation]:
			o.Undo = &CatalogUndo{Kind: "compensate", Operation: e.Compensate.Operation, Arguments: orEmpty(e.Compensate.Arguments)}
		}
		for _, n := range op.Needs {
			cn := CatalogNeed{Argument: n.Argument}
			for _, p := range n.From {
				if served[p.Operation] {
					cn.From = append(cn.From, CatalogProducer{Operation: p.Operation, Field: p.Field})
				}
			}
			if len(cn.From) > 0 {
				o.Needs = append(o.Needs, cn)
			}
		}
		ops = append(ops, o)
	}
	return ops
}

func orEmpty(m air.Mapping) air.Mapping {
	if m == nil {
		return air.Mapping{}
	}
	return m
}

// businessInputs lists an operation's own inputs as the SDK methods take
// them: required ones first, each group in parameter-then-body-field order.
// The parameter or field that carries the idempotency key is left out: the
// SDKs take that as their idempotency_key control.
func businessInputs(op *air.Operation) []CatalogInput {
	in := declaredInputs(op)
	sort.SliceStable(in, func(i, j int) bool { return in[i].Required && !in[j].Required })
	return in
}

// declaredInputs lists the business inputs in declaration order.
func declaredInputs(op *air.Operation) []CatalogInput {
	idem := op.Idempotency
	out := []CatalogInput{}
	for i, p := range op.Input.Params {
		if idem.CarriedByParam(&op.Input.Params[i]) {
			continue
		}
		key := p.Key
		if key == "" {
			key = p.Name
		}
		out = append(out, CatalogInput{Key: key, Wire: p.Name, Required: p.Required})
	}
	b := op.Input.Body
	if b == nil {
		return out
	}
	if b.Projection == air.ProjectionWhole {
		key := "body"
		if len(b.Fields) == 1 && b.Fields[0].Key != "" {
			key = b.Fields[0].Key
		}
		return append(out, CatalogInput{Key: key, Wire: key, Required: b.Required})
	}
	for _, f := range b.Fields {
		if idem.CarriedByField(f.Name) {
			continue
		}
		key := f.Key
		if key == "" {
			key = f.Name
		}
		out = append(out, CatalogInput{Key: key, Wire: f.Name, Required: f.Required})
	}
	return out
}

// oneLine collapses whitespace runs into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
