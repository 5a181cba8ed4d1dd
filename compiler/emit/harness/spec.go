package harness

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/compiler/emit/gosdk"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Spec shapes embedded in the generated SDKs and CLI. Field order is the
// JSON key order.

type pySpecDoc struct {
	Connector  string           `json:"connector"`
	Service    serviceSpec      `json:"service"`
	DryRunArg  string           `json:"dry_run_arg"`
	Operations []pyOperationDoc `json:"operations"`
}

type serviceSpec struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Version string `json:"version"`
}

type idemSpec struct {
	Mode          air.IdempotencyMode `json:"mode"`
	Mechanism     air.KeyMechanism    `json:"mechanism"`
	KeyDerivation air.KeyDerivation   `json:"key_derivation"`
	Input         any                 `json:"input"`
	KeyRequired   bool                `json:"key_required"`
	KeyDerived    bool                `json:"key_derived"`
}

// pyControls names each safety control's Python keyword argument.
type pyControls struct {
	Confirm string `json:"confirm"`
	Idem    string `json:"idempotency_key"`
	DryRun  string `json:"dry_run"`
	Stage   string `json:"stage"`
	Headers string `json:"headers"`
	Timeout string `json:"timeout"`
}

type pyInputDoc struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Required bool   `json:"required"`
}

type pyOperationDoc struct {
	Method      string          `json:"method"`
	ID          string          `json:"id"`
	Tool        string          `json:"tool"`
	Summary     string          `json:"summary"`
	Kind        air.EffectKind  `json:"kind"`
	EffectClass air.EffectClass `json:"effect_class"`
	Confirm     bool            `json:"confirm"`
	ConfirmKey  any             `json:"confirm_key"`
	ConfirmArg  string          `json:"confirm_arg"`
	IdemArg     string          `json:"idempotency_arg"`
	Controls    pyControls      `json:"controls"`
	Idempotency idemSpec        `json:"idempotency"`
	Inputs      []pyInputDoc    `json:"inputs"`
	Undo        any             `json:"undo"`
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func undoJSON(u *undoView) any {
	if u == nil {
		return nil
	}
	return struct {
		Kind      string `json:"kind"`
		Operation string `json:"operation"`
		Tool      string `json:"tool"`
	}{u.Kind, u.Operation, u.Tool}
}

func idemOf(o *opView) idemSpec {
	return idemSpec{Mode: o.IdemMode, Mechanism: o.IdemMechanism, KeyDerivation: o.IdemDerivation,
		Input: nullable(o.IdemInput), KeyRequired: o.KeyRequired, KeyDerived: o.KeyDerived}
}

// pySpec renders the operation table of spec.py as JSON text that spec.py
// decodes with json.loads from a raw triple-quoted string: for large APIs,
// compiling a Python literal of the same data costs most of the package's
// import time, while decoding JSON costs almost nothing. Apostrophes are
// written as \u0027 so the text can never close the surrounding string, and
// the text never ends in a backslash (it ends in a closing brace).
func pySpec(v *pkgView) (string, error) {
	d := pySpecDoc{Connector: v.Connector, Service: serviceSpec{v.ServiceID, v.Title, v.ServiceVersion}, DryRunArg: v.DryRunArg}
	for _, o := range v.Ops {
		od := pyOperationDoc{Method: o.PyMethod, ID: o.ID, Tool: o.Tool, Summary: o.Summary, Kind: o.Kind,
			EffectClass: o.Class, Confirm: o.Confirm, ConfirmKey: nullable(o.ConfirmKey), ConfirmArg: o.PyConfirm,
			IdemArg: o.PyIdem, Controls: pyControls{o.PyConfirm, o.PyIdem, o.PyDryRun, o.PyStage, o.PyHeaders, o.PyTimeout},
			Idempotency: idemOf(o), Inputs: []pyInputDoc{}, Undo: undoJSON(o.Undo)}
		for _, in := range o.Inputs {
			od.Inputs = append(od.Inputs, pyInputDoc{Name: in.Py, Key: in.Key, Required: in.Required})
		}
		d.Operations = append(d.Operations, od)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return "", err
	}
	return strings.ReplaceAll(strings.TrimRight(buf.String(), "\n"), "'", `\u0027`), nil
}

type cliSpecDoc struct {
	Connector     string            `json:"connector"`
	Service       serviceSpec       `json:"service"`
	DryRunArg     string            `json:"dryRunArg"`
	SearchCommand string            `json:"searchCommand"`
	ExitCodes     orderedInts       `json:"exitCodes"`
	Operations    []cliOperationDoc `json:"operations"`
}

type cliInputDoc struct {
	Key         string `json:"key"`
	Name        string `json:"name"`
	In          string `json:"in"`
	Flag        string `json:"flag"`
	Type        string `json:"type"`
	Items       string `json:"items,omitempty"`
	Required    bool   `json:"required"`
	Description string `json:"description"`
}

type cliFlags struct {
	Input   string `json:"input"`
	Body    string `json:"body"`
	Confirm string `json:"confirm"`
	Idem    string `json:"idempotencyKey"`
	DryRun  string `json:"dryRun"`
	Stage   string `json:"stage"`
	JSON    string `json:"json"`
}

type cliOperationDoc struct {
	ID          string         `json:"id"`
	Words       []string       `json:"words"`
	Tool        string         `json:"tool"`
	Summary     string         `json:"summary"`
	Description string         `json:"description"`
	Usage       string         `json:"usage"`
	Effect      air.EffectKind `json:"effect"`
	Label       string         `json:"label"`
	Confirm     bool           `json:"confirm"`
	ConfirmKey  any            `json:"confirmKey"`
	Reason      string         `json:"reason"`
	IdemInput   any            `json:"idempotencyKey"`
	Flags       cliFlags       `json:"flags"`
	Inputs      []cliInputDoc  `json:"inputs"`
	Undo        any            `json:"undo"`
	Schema      *air.Schema    `json:"schema"`
}

// orderedInts is a JSON object with keys in insertion order.
type orderedInts []struct {
	K string
	V int
}

// MarshalJSON writes the object in order.
func (o orderedInts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, e := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(e.K)
		b = append(b, k...)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(e.V), 10)
	}
	return append(b, '}'), nil
}

// cliSpec renders the JSON SPEC embedded in bin/<connector>.
func cliSpec(v *pkgView) (string, error) {
	d := cliSpecDoc{Connector: v.Connector, Service: serviceSpec{v.ServiceID, v.Title, v.ServiceVersion}, DryRunArg: v.DryRunArg,
		SearchCommand: v.SearchCommand}
	for _, r := range v.ExitCodes {
		for _, c := range r.Codes {
			d.ExitCodes = append(d.ExitCodes, struct {
				K string
				V int
			}{c, r.Exit})
		}
	}
	for _, o := range v.Ops {
		od := cliOperationDoc{ID: o.ID, Words: strings.Fields(o.Words), Tool: o.Tool, Summary: o.Summary,
			Description: o.Description, Usage: o.Usage, Effect: o.Kind, Label: o.Label, Confirm: o.Confirm,
			ConfirmKey: nullable(o.ConfirmKey), Reason: o.Reason, IdemInput: nullable(o.IdemInput),
			Flags: cliFlags{Input: safetyFlag(o, "input"), Body: safetyFlag(o, "body"), Confirm: "confirm",
				Idem: "idempotency-key", DryRun: "dry-run", Stage: "stage", JSON: safetyFlag(o, "json")},
			Inputs: []cliInputDoc{}, Undo: undoJSON(o.Undo), Schema: o.Schema}
		if od.Schema == nil {
			od.Schema = &air.Schema{Type: air.Types{"object"}}
		}
		for _, in := range o.Inputs {
			od.Inputs = append(od.Inputs, cliInputDoc{Key: in.Key, Name: in.Name, In: in.In, Flag: in.Flag, Type: in.Type,
				Items: in.Items, Required: in.Required, Description: in.Description})
		}
		d.Operations = append(d.Operations, od)
	}
	b, err := air.Marshal(d)
	if err != nil {
		return "", err
	}
	return asciiJSON(string(b[:len(b)-1])), nil
}

// harnessDoc is harness.json.
type harnessDoc struct {
	SchemaVersion int              `json:"schemaVersion"`
	Connector     string           `json:"connector"`
	Service       harnessService   `json:"service"`
	BundleHash    any              `json:"bundleHash"`
	Gateway       harnessGateway   `json:"gateway"`
	Entrypoints   harnessEntry     `json:"entrypoints"`
	Requires      harnessRequires  `json:"requires"`
	Operations    []harnessOpEntry `json:"operations"`
}

type harnessService struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

type harnessGateway struct {
	URLEnv       string `json:"urlEnv"`
	TokenFileEnv string `json:"tokenFileEnv"`
}

type harnessEntry struct {
	Skill      string `json:"skill"`
	CLI        string `json:"cli"`
	Python     string `json:"python"`
	TypeScript string `json:"typescript"`
	Go         string `json:"go"`
}

type harnessRequires struct {
	CLI        string `json:"cli"`
	Python     string `json:"python"`
	TypeScript string `json:"typescript"`
	Go         string `json:"go"`
}

type harnessOpEntry struct {
	ID          string          `json:"id"`
	Tool        string          `json:"tool"`
	CLI         string          `json:"cli"`
	Effect      air.EffectKind  `json:"effect"`
	Confirm     bool            `json:"confirm"`
	EffectClass air.EffectClass `json:"effect_class"`
	Undo        any             `json:"undo"`
}

// harnessJSON renders harness.json.
func harnessJSON(v *pkgView, bundleHash string) ([]byte, error) {
	d := harnessDoc{
		SchemaVersion: 1,
		Connector:     v.Connector,
		Service:       harnessService{ID: v.ServiceID, Version: v.ServiceVersion},
		Gateway:       harnessGateway{URLEnv: "ANVIL_GATEWAY_URL", TokenFileEnv: "ANVIL_GATEWAY_TOKEN_FILE"},
		Entrypoints: harnessEntry{Skill: "SKILL.md", CLI: "bin/" + v.Connector, Python: "python/" + v.PyPackage,
			TypeScript: "typescript/src/index.ts", Go: "go"},
		Requires: harnessRequires{
			CLI:        "Node.js 18 or later (no dependencies)",
			Python:     "Python 3.9 or later (standard library only)",
			TypeScript: "Node.js 18 or later once built (npm install runs prepare: tsc builds dist/), or Node.js 22.6 or later with type stripping",
			Go:         "Go " + gosdk.GoVersion + " or later (standard library only; module " + gosdk.ModulePath(v.Connector) + ")",
		},
		Operations: []harnessOpEntry{},
	}
	if hex64.MatchString(bundleHash) {
		d.BundleHash = bundleHash
	}
	for _, o := range v.Ops {
		d.Operations = append(d.Operations, harnessOpEntry{ID: o.ID, Tool: o.WireTool, CLI: o.CLI, Effect: o.Kind,
			Confirm: o.Confirm, EffectClass: o.Class, Undo: undoJSON(o.Undo)})
	}
	return air.Marshal(d)
}

type tsIdem struct {
	Mode          air.IdempotencyMode `json:"mode"`
	Mechanism     air.KeyMechanism    `json:"mechanism"`
	KeyDerivation air.KeyDerivation   `json:"keyDerivation"`
	Input         any                 `json:"input"`
	KeyRequired   bool                `json:"keyRequired"`
	KeyDerived    bool                `json:"keyDerived"`
}

type tsOperationDoc struct {
	Method      string          `json:"method"`
	ID          string          `json:"id"`
	Tool        string          `json:"tool"`
	Summary     string          `json:"summary"`
	Kind        air.EffectKind  `json:"kind"`
	EffectClass air.EffectClass `json:"effectClass"`
	Confirm     bool            `json:"confirm"`
	ConfirmKey  any             `json:"confirmKey"`
	Idempotency tsIdem          `json:"idempotency"`
	Inputs      []string        `json:"inputs"`
}

// tsOps is the TypeScript operation table, keyed by method in declaration order.
type tsOps []tsOperationDoc

// MarshalJSON writes the table as an object keyed by method.
func (o tsOps) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, op := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(op.Method)
		v, err := json.Marshal(op)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// tsSpec renders the SPEC constant of the TypeScript SDK (JSON text).
func tsSpec(v *pkgView) (string, error) {
	d := struct {
		Connector  string      `json:"connector"`
		Service    serviceSpec `json:"service"`
		DryRunArg  string      `json:"dryRunArg"`
		Operations tsOps       `json:"operations"`
	}{Connector: v.Connector, Service: serviceSpec{v.ServiceID, v.Title, v.ServiceVersion}, DryRunArg: v.DryRunArg, Operations: tsOps{}}
	for _, o := range v.Ops {
		od := tsOperationDoc{Method: o.TSMethod, ID: o.ID, Tool: o.Tool, Summary: o.Summary, Kind: o.Kind, EffectClass: o.Class,
			Confirm: o.Confirm, ConfirmKey: nullable(o.ConfirmKey),
			Idempotency: tsIdem{Mode: o.IdemMode, Mechanism: o.IdemMechanism, KeyDerivation: o.IdemDerivation,
				Input: nullable(o.IdemInput), KeyRequired: o.KeyRequired, KeyDerived: o.KeyDerived},
			Inputs: []string{}}
		for _, in := range o.Inputs {
			od.Inputs = append(od.Inputs, in.Key)
		}
		d.Operations = append(d.Operations, od)
	}
	b, err := air.Marshal(d)
	if err != nil {
		return "", err
	}
	return asciiJSON(string(b[:len(b)-1])), nil
}
