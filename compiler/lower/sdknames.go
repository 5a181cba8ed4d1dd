package lower

import (
	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/naming"
)

// CodeReservedControlName is the warning for an input whose key would
// shadow an SDK or CLI control (naming.SDKControls).
const CodeReservedControlName = "naming/reserved_control_name"

// nameSDKInputs gives every business input whose key would shadow an SDK
// control its SDK name (air.Param.SDKName, air.BodyField.SDKName) and warns,
// naming both. The idempotency carrier is not a business input (the SDKs
// fill it from their idempotency_key control), so it keeps its key. Inputs
// are taken in declaration order, so the names are deterministic.
func (l *lowerer) nameSDKInputs(st *opState) {
	in := &st.op.Input
	taken := map[string]bool{}
	for _, p := range in.Params {
		taken[naming.Snake(p.Key)] = true
	}
	if in.Body != nil {
		for _, f := range in.Body.Fields {
			taken[naming.Snake(f.Key)] = true
		}
	}
	rename := func(kind, key string) string {
		if key == "" || key == st.in.carrierKey || !naming.IsSDKControl(naming.Snake(key)) {
			return ""
		}
		name := naming.SDKInputName(key, taken)
		l.addDiag(l.opPos(st), diag.Warning, CodeReservedControlName, st.i,
			"%s %s: the %s %q would shadow the SDK control %s (--%s on the CLI); the Python SDK calls it %s and the CLI --%s (the tool input key, which TypeScript and Go take apart from their call options, stays %q)",
			st.spec.Method, st.spec.Path, kind, key, naming.Snake(key), naming.Kebab(key), name, naming.Kebab(name), key)
		return name
	}
	for i := range in.Params {
		p := &in.Params[i]
		p.SDKName = rename(string(p.In)+" parameter", p.Key)
	}
	if in.Body != nil {
		for i := range in.Body.Fields {
			f := &in.Body.Fields[i]
			f.SDKName = rename("body field", f.Key)
		}
	}
}
